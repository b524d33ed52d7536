"""Pass 1 of the import: what every line of the book is — text, a heading, a title, a caption.

The whole book is read first, so that each cue is measured against the book's own style: the body
size, the line pitch, whether its columns are justified, where its text frames end, the words it
uses (for hyphens), the size of its section headings (a title stands out more than they do).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from duocthu.book import layout
from duocthu.book.headings import (
    BodyStyle,
    CatalogueMatch,
    caption_text,
    cues,
    match_heading,
    style_key,
    styled,
)
from duocthu.book.imported import display_name
from duocthu.book.pagetypes import Box, Line, PageText, TableBox
from duocthu.book.paragraphs import Vocabulary
from duocthu.text import fold

_TITLE_STANDS_OUT = 1.15  # a title's capitals are at least this × the headings' (and 1.2 × the body's)


@dataclass
class Entry:
    """One line or table of the book in reading order, with what it was found to be."""

    item: Line | TableBox
    printed: int
    kind: str = "text"  # text | heading | title | stop | styled | part | caption | caption_more | label | table
    key: str | None = None  # the section of a heading
    span: int = 1  # lines of a heading or title (the following ones are "part")
    match: CatalogueMatch | None = None
    looks: frozenset[str] = frozenset()
    previous: Line | None = None  # the line above in the same column

    @property
    def line(self) -> Line:
        assert isinstance(self.item, Line)
        return self.item


class Book:
    """The entries of the whole book, classified (pass 1) before they are placed (pass 2)."""

    def __init__(self, pages: list[PageText], offset: int):
        self.entries = [Entry(item, page.number + offset) for page in pages for item in page.items]
        lines = [e.line for e in self.entries if isinstance(e.item, Line)]
        self.body = BodyStyle.of(lines)
        self.pitch = self._pitch()
        self.justified = self._justified(lines)
        self.right_edges = self._right_edges(lines)
        self._edges: dict[Box, float] = {}
        self.vocabulary = Vocabulary(lines)
        for entry in self.entries:
            if isinstance(entry.item, Line):
                above = entry.previous is not None and (
                    entry.line.baseline - entry.previous.baseline - self.pitch > 0.45 * self.body.size)
                entry.looks = cues(entry.line, self.body, above)
        self._headings()
        self.heading_size = self._heading_size()
        self._titles()

    def _pitch(self) -> float:
        steps: Counter[float] = Counter()
        last: Line | None = None
        for entry in self.entries:
            if not isinstance(entry.item, Line):
                last = None
                continue
            line = entry.item
            if last is not None and last.page == line.page and last.column == line.column:
                entry.previous = last
                if abs(line.size - self.body.size) < 0.6 and abs(last.size - self.body.size) < 0.6:
                    step = line.baseline - last.baseline
                    if 0.9 * self.body.size <= step <= 2.2 * self.body.size:
                        steps[round(step, 1)] += 1
            last = line
        return steps.most_common(1)[0][0] if steps else 1.25 * self.body.size

    def _justified(self, lines: list[Line]) -> dict[tuple[int, Box], bool]:
        """Whether each column's text is justified: most of its lines end flush at the right edge."""
        counts: dict[tuple[int, Box], list[int]] = {}
        for line in lines:
            if abs(line.size - self.body.size) < 0.6:
                tally = counts.setdefault((line.page, line.column), [0, 0])
                tally[0] += line.x1 >= line.column[2] - 1.0
                tally[1] += 1
        flush, total = sum(t[0] for t in counts.values()), sum(t[1] for t in counts.values())
        book = total > 0 and flush >= 0.4 * total
        return {key: (f >= 0.4 * n if n >= 6 else book) for key, (f, n) in counts.items()}

    @staticmethod
    def _right_edges(lines: list[Line]) -> dict[int, list[float]]:
        """The right edges of the columns that start at each x, over the whole book."""
        edges: dict[int, set[float]] = {}
        for line in lines:
            edges.setdefault(round(line.column[0]), set()).add(round(line.column[2], 1))
        return {x: sorted(rights) for x, rights in edges.items()}

    def right_edge(self, line: Line) -> float:
        """Where the text frame of ``line`` ends: a ragged-right column rarely reaches it on one page,
        but the same column on other pages comes closer (within a word or two)."""
        edge = self._edges.get(line.column)
        if edge is None:
            near = [r for r in self.right_edges.get(round(line.column[0]), [])
                    if abs(r - line.column[2]) <= 3 * self.body.size]
            edge = self._edges[line.column] = max([line.column[2], *near])
        return edge

    def _run(self, start: int, kinds: tuple[str, ...]) -> list[Entry]:
        """Consecutive styled lines of one style from ``start`` (at most three), in one column."""
        first = self.entries[start]
        run = [first]
        for entry in self.entries[start + 1:start + 3]:
            if (not isinstance(entry.item, Line) or entry.kind not in kinds or not styled(entry.looks)
                    or style_key(entry.line) != style_key(first.line) or entry.line.page != first.line.page
                    or entry.line.column != first.line.column):
                break
            run.append(entry)
        return run

    def _headings(self) -> None:
        for entry in self.entries:
            if isinstance(entry.item, TableBox):
                entry.kind = "table"
            elif entry.line.text == layout.QUARANTINE_LABEL:
                entry.kind = "label"
            elif caption_text(entry.line.text) is not None:
                entry.kind = "caption"
            elif styled(entry.looks):
                entry.kind = "styled"
        self._caption_lines()
        i = 0
        while i < len(self.entries):
            entry = self.entries[i]
            if entry.kind != "styled":
                i += 1
                continue
            run = self._run(i, ("styled",))
            best, length = match_heading(entry.line.text), 1
            for n in range(2, len(run) + 1):
                joined = match_heading(" ".join(e.line.text for e in run[:n]))
                if joined.score > best.score or (joined.score == best.score and joined.key == best.key and joined.key):
                    best, length = joined, n
            entry.match = best
            if best.key is not None:
                entry.kind, entry.key, entry.span = "heading", best.key, length
                for part in run[1:length]:
                    part.kind = "part"
                i += length
                continue
            i += 1

    def _caption_lines(self) -> None:
        """A caption set on two or three lines: the lines in its style right before the table go with it."""
        for i, entry in enumerate(self.entries):
            if entry.kind != "caption":
                continue
            following = []
            for other in self.entries[i + 1:i + 3]:
                if not isinstance(other.item, Line) or style_key(other.line) != style_key(entry.line):
                    break
                following.append(other)
            after = i + 1 + len(following)
            if following and after < len(self.entries) and self.entries[after].kind == "table":
                for other in following:
                    other.kind = "caption_more"

    def _heading_size(self) -> float:
        sizes = Counter(round(e.line.cap_size * 2) / 2 for e in self.entries if e.kind == "heading")
        return sizes.most_common(1)[0][0] if sizes else self.body.size

    def _titles(self) -> None:
        i = 0
        while i < len(self.entries):
            entry = self.entries[i]
            if entry.kind != "styled":
                i += 1
                continue
            run = self._run(i, ("styled",))
            after = i + len(run)
            stands_out = (entry.line.cap_size >= _TITLE_STANDS_OUT * self.heading_size
                          and entry.line.cap_size >= 1.2 * self.body.size)
            name = display_name(" ".join(e.line.text for e in run))
            if after < len(self.entries) and self.entries[after].kind == "heading":
                if stands_out or self._inn_names(after, name):
                    entry.kind, entry.span = "title", len(run)
                    for part in run[1:]:
                        part.kind = "part"
                    i = after
                    continue
            elif stands_out:
                entry.kind = "stop"
            i += 1

    def _inn_names(self, heading: int, name: str) -> bool:
        """True when the "Tên chung quốc tế" section at ``heading`` opens with ``name``."""
        if self.entries[heading].key != "ten_chung_quoc_te":
            return False
        following = self.entries[heading + self.entries[heading].span:heading + self.entries[heading].span + 2]
        text = " ".join(e.line.text for e in following if isinstance(e.item, Line))
        return bool(fold(name).strip()) and fold(text).startswith(fold(name).strip())
