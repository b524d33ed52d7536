"""Running heads and feet: what a book repeats at the top or the foot of its pages, found across pages.

A line is a running head (or foot) when it sits among the first or last two rows of a page, set
apart from the text below (or above) it by more than a line, at a position (distance from the top, or from the foot) shared by rows of at least three pages, most of
which repeat a text there (digits masked, so "Paracetamol 160" and "Paracetamol 161" are one text)
or hold a page number. The first body line of a page often sits at a shared position too, but it is
not set apart from the text, and its text changes from page to page, so it stays. A row holding only a page number at the very top or foot
of a page is a running line even alone (a one-page file, a page where the head is missing).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from duocthu.book.pagetypes import RawPage

_BAND = 0.16  # share of the page height, at the top and at the foot, where running lines sit
_DEPTH = 2  # rows at each end of a page that may be running lines
_SAME_PLACE = 2.0  # pt: rows of different pages at the same distance from the edge, within this
_PAGE_NUMBER_RE = re.compile(r"^[\W_]*(?:(?:trang|tr\.?|page|p\.)\s*)?\d{1,4}[\W_]*$", re.IGNORECASE)
_DIGITS_RE = re.compile(r"\d+")


@dataclass
class _Row:
    page: int
    zone: str  # "head" or "foot"
    place: float  # distance of the baseline from the top (head) or from the foot (foot)
    indices: list[int]  # fragments of the page in this row
    texts: list[str]  # their texts, digits masked
    numeric: bool  # a fragment is a page number


def page_number_text(text: str) -> bool:
    """True for "245", "— 12 —", "Trang 7", "tr. 3": a page number and nothing else."""
    return bool(_PAGE_NUMBER_RE.match(text.strip()))


def margin_fragments(pages: list[RawPage]) -> dict[int, set[int]]:
    """{file page: indices of its fragments that are running heads or feet}."""
    rows = [row for page in pages for row in _edge_rows(page)]
    margins: dict[int, set[int]] = defaultdict(set)
    for cluster in _clusters(rows):
        if _running(cluster):
            for row in cluster:
                margins[row.page].update(row.indices)
    for row in rows:
        if row.numeric:
            margins[row.page].update(row.indices)
    return dict(margins)


def _edge_rows(page: RawPage) -> list[_Row]:
    order = sorted(range(len(page.fragments)), key=lambda i: page.fragments[i].baseline)
    groups: list[list[int]] = []
    for i in order:
        fragment = page.fragments[i]
        if groups and fragment.baseline - page.fragments[groups[-1][0]].baseline <= 0.5 * fragment.size:
            groups[-1].append(i)
        else:
            groups.append([i])
    rows = []
    for position, group in enumerate(groups):
        fragments = [page.fragments[i] for i in group]
        baseline = fragments[0].baseline
        size = max(f.size for f in fragments)
        if position < _DEPTH and baseline < _BAND * page.height:
            zone, place = "head", baseline
            neighbour = groups[position + 1] if position + 1 < len(groups) else None
            gap = page.fragments[neighbour[0]].top - baseline if neighbour else float("inf")
        elif len(groups) - position <= _DEPTH and baseline > (1 - _BAND) * page.height:
            zone, place = "foot", page.height - baseline
            neighbour = groups[position - 1] if position > 0 else None
            gap = fragments[0].top - page.fragments[neighbour[0]].baseline if neighbour else float("inf")
        else:
            continue
        if gap <= 1.2 * size:
            continue  # set close to the text: a line of the body, even at a place shared by many pages
        texts = [_DIGITS_RE.sub("#", " ".join(f.text.lower().split())) for f in fragments]
        numeric = any(page_number_text(f.text) for f in fragments)
        rows.append(_Row(page.number, zone, place, group, texts, numeric))
    return rows


def _clusters(rows: list[_Row]) -> list[list[_Row]]:
    clusters: list[list[_Row]] = []
    for zone in ("head", "foot"):
        current: list[_Row] = []
        for row in sorted((r for r in rows if r.zone == zone), key=lambda r: r.place):
            if current and row.place - current[-1].place > _SAME_PLACE:
                clusters.append(current)
                current = []
            current.append(row)
        if current:
            clusters.append(current)
    return clusters


def _running(cluster: list[_Row]) -> bool:
    pages = {row.page for row in cluster}
    if len(pages) < 3:
        return len(pages) == 2 and all(row.numeric for row in cluster)
    seen: dict[str, set[int]] = defaultdict(set)
    for row in cluster:
        for text in row.texts:
            seen[text].add(row.page)
    repeating = sum(1 for row in cluster if row.numeric or any(len(seen[t]) >= 2 for t in row.texts))
    return repeating >= 0.5 * len(cluster)
