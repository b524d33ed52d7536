"""Read a PDF page as positioned lines and ruled tables, with pypdfium2 (BSD/Apache, no AGPL code).

pdfium gives every character with its box, baseline, font size and weight; this module groups
them into lines (splitting a line at a column gutter), sets running heads and feet apart, finds
ruled tables from the page's line paths (at least two horizontal and two vertical rules that
touch) and fills their cells, and orders the rest for reading — column by column on a
two-column page. pdfplumber (MIT) reads the same cues but ~6× slower on this machine (about
6 pages/s against 30–40), so it is not used.

Coordinates are PDF points with the origin at the page's top-left: ``(x0, top, x1, bottom)``.
"""

from __future__ import annotations

import ctypes
import statistics
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from duocthu.errors import DuocthuError

Box = tuple[float, float, float, float]
HEAD_ZONE = 0.072  # share of the page height above which a line is a running head
FOOT_ZONE = 0.055  # … and below which a running foot
_RULE = 2.5  # a path thinner than this (pt) is a rule


class PdfReadError(DuocthuError):
    """The PDF cannot be read: broken, encrypted or not a PDF. Nothing was written."""


@dataclass(frozen=True)
class Line:
    """One line of text on a page, as a reader sees it."""

    page: int  # 1-based page of the file
    text: str
    x0: float
    x1: float
    top: float
    baseline: float
    size: float
    bold: bool


@dataclass(frozen=True)
class TableBox:
    """A ruled table: its page, its box and the text of its cells, row by row."""

    page: int
    bbox: Box
    rows: tuple[tuple[str, ...], ...]

    @property
    def top(self) -> float:
        return self.bbox[1]


@dataclass(frozen=True)
class PageText:
    """What one page holds: body lines in reading order, tables, running heads and feet."""

    number: int
    width: float
    height: float
    items: tuple[Line | TableBox, ...]  # body lines and tables, in reading order
    margin_lines: tuple[Line, ...] = ()
    images: int = 0
    chars: int = 0  # visible characters outside the running heads and feet

    @property
    def has_text(self) -> bool:
        return self.chars > 0

    @property
    def lines(self) -> list[Line]:
        return [item for item in self.items if isinstance(item, Line)]

    @property
    def tables(self) -> list[TableBox]:
        return [item for item in self.items if isinstance(item, TableBox)]


@dataclass
class _Char:
    text: str
    left: float
    right: float
    baseline: float  # from the top of the page
    size: float
    bold: bool


@dataclass
class _Grid:
    xs: list[float] = field(default_factory=list)
    ys: list[float] = field(default_factory=list)
    bbox: Box = (0.0, 0.0, 0.0, 0.0)


def open_pdf(path: Path) -> pdfium.PdfDocument:
    """Open ``path`` or raise :class:`PdfReadError` with a message a person can act on."""
    if not path.is_file():
        raise PdfReadError(f"{path}: no such file")
    try:
        document = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        reason = str(exc).lower()
        if "password" in reason:
            raise PdfReadError(f"{path} is encrypted (password-protected): remove the password "
                               "(for example with the program that made it) and import again") from exc
        raise PdfReadError(f"{path} is not a readable PDF ({exc}): the file may be broken or truncated") from exc
    if len(document) == 0:
        document.close()
        raise PdfReadError(f"{path} has no pages")
    return document


def read_pages(document: pdfium.PdfDocument) -> Iterator[PageText]:
    """Every page of an open document, in order."""
    for index in range(len(document)):
        yield read_page(document, index)


def read_page(document: pdfium.PdfDocument, index: int) -> PageText:
    """Page ``index`` (0-based) as lines, tables and running heads."""
    page = document[index]
    try:
        width, height = page.get_size()
        textpage = page.get_textpage()
        try:
            chars = _chars(textpage, height)
        finally:
            textpage.close()
        rules = [obj.get_bounds() for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_PATH], max_depth=1)]
        images = sum(1 for _ in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=1))
    finally:
        page.close()
    grids = _grids(rules, height)
    tables, body_chars = _fill_tables(index + 1, grids, chars)
    lines = _lines(index + 1, body_chars)
    head_limit, foot_limit = height * HEAD_ZONE, height * (1 - FOOT_ZONE)
    margin = [ln for ln in lines if ln.baseline < head_limit or ln.top > foot_limit]
    body = [ln for ln in lines if not (ln.baseline < head_limit or ln.top > foot_limit)]
    items = _reading_order([*body, *tables], width)
    counted = sum(len(ln.text.replace(" ", "")) for ln in body) + sum(len("".join(r)) for t in tables for r in t.rows)
    return PageText(index + 1, width, height, tuple(items), tuple(margin), images, counted)


def _chars(textpage: pdfium.PdfTextPage, height: float) -> list[_Char]:
    chars: list[_Char] = []
    x, y = ctypes.c_double(), ctypes.c_double()
    for i in range(textpage.count_chars()):
        code = pdfium_c.FPDFText_GetUnicode(textpage, i)
        text = chr(code) if code else ""
        if text in ("\r", "\n"):
            chars.append(_Char("\n", 0, 0, 0, 0, False))
            continue
        if not text.isprintable() and not text.isspace():
            continue  # pdfium's markers (soft hyphen 0x02, 0xFFFE), never text
        left, _bottom, right, _top = textpage.get_charbox(i)
        pdfium_c.FPDFText_GetCharOrigin(textpage, i, ctypes.byref(x), ctypes.byref(y))
        size = pdfium_c.FPDFText_GetFontSize(textpage, i)
        weight = pdfium_c.FPDFText_GetFontWeight(textpage, i)
        chars.append(_Char(text, left, right, height - y.value, size, weight >= 600))
    return chars


def _lines(page: int, chars: list[_Char]) -> list[Line]:
    lines: list[Line] = []
    current: list[_Char] = []

    def close() -> None:
        visible = [c for c in current if not c.text.isspace()]
        if visible:
            text = " ".join("".join(c.text for c in current).split())
            sizes = [c.size for c in visible]
            lines.append(Line(
                page, text, min(c.left for c in visible), max(c.right for c in visible),
                min(c.baseline for c in visible) - max(sizes) * 0.8, statistics.median(c.baseline for c in visible),
                round(statistics.median(sizes), 2), sum(c.bold for c in visible) >= 0.6 * len(visible),
            ))
        current.clear()

    for char in chars:
        if char.text == "\n":
            close()
            continue
        if current and not char.text.isspace():
            last = next((c for c in reversed(current) if not c.text.isspace()), None)
            if last is not None and (
                abs(char.baseline - last.baseline) > 0.6 * max(char.size, 1)
                or char.left - last.right > 2.5 * max(char.size, 1)
                or char.right < last.left - 1
            ):
                close()
        current.append(char)
    close()
    return lines


def _grids(rules: list[Box], height: float) -> list[_Grid]:
    """Ruled tables: groups of touching rules with at least two horizontal and two vertical ones."""
    segments = []
    for left, bottom, right, top in rules:
        w, h = right - left, top - bottom
        if h <= _RULE and w >= 10:
            segments.append(("h", left, height - top, right, height - bottom))
        elif w <= _RULE and h >= 5:
            segments.append(("v", left, height - top, right, height - bottom))
    parent = list(range(len(segments)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, a in enumerate(segments):
        for j in range(i + 1, len(segments)):
            b = segments[j]
            if a[1] - 1.5 <= b[3] and b[1] - 1.5 <= a[3] and a[2] - 1.5 <= b[4] and b[2] - 1.5 <= a[4]:
                parent[find(i)] = find(j)
    groups: dict[int, list[tuple[str, float, float, float, float]]] = {}
    for i, segment in enumerate(segments):
        groups.setdefault(find(i), []).append(segment)
    grids = []
    for members in groups.values():
        horizontal = [m for m in members if m[0] == "h"]
        vertical = [m for m in members if m[0] == "v"]
        if len(horizontal) < 2 or len(vertical) < 2:
            continue
        bbox = (min(m[1] for m in members), min(m[2] for m in members),
                max(m[3] for m in members), max(m[4] for m in members))
        grids.append(_Grid(_merge([(m[1] + m[3]) / 2 for m in vertical]),
                           _merge([(m[2] + m[4]) / 2 for m in horizontal]), bbox))
    return sorted(grids, key=lambda g: g.bbox[1])


def _merge(values: list[float], tolerance: float = 2.0) -> list[float]:
    merged: list[float] = []
    for value in sorted(values):
        if not merged or value - merged[-1] > tolerance:
            merged.append(value)
    return merged


def _fill_tables(page: int, grids: list[_Grid], chars: list[_Char]) -> tuple[list[TableBox], list[_Char]]:
    if not grids:
        return [], chars
    cells: list[dict[tuple[int, int], list[_Char]]] = [{} for _ in grids]
    body: list[_Char] = []
    last_cell: tuple[int, int, int] | None = None
    for char in chars:
        if char.text == "\n" or char.text.isspace():
            if last_cell is not None:
                g, r, c = last_cell
                cells[g].setdefault((r, c), []).append(_Char(" ", 0, 0, 0, 0, False))
            else:
                body.append(char)
            continue
        middle = (char.left + char.right) / 2
        placed = None
        for g, grid in enumerate(grids):
            x0, top, x1, bottom = grid.bbox
            if x0 <= middle <= x1 and top <= char.baseline <= bottom:
                placed = (g, _slot(grid.ys, char.baseline - char.size * 0.3), _slot(grid.xs, middle))
                break
        if placed is None:
            last_cell = None
            body.append(char)
            continue
        last_cell = placed
        cells[placed[0]].setdefault(placed[1:], []).append(char)
    tables = []
    for grid, content in zip(grids, cells, strict=True):
        rows = []
        for r in range(len(grid.ys) - 1):
            row = tuple(" ".join("".join(c.text for c in content.get((r, c), [])).split()) for c in range(len(grid.xs) - 1))
            if any(row):
                rows.append(row)
        x0, top, x1, bottom = (round(v, 1) for v in grid.bbox)
        tables.append(TableBox(page, (x0, top, x1, bottom), tuple(rows)))
    return tables, body


def _slot(edges: list[float], value: float) -> int:
    for i in range(len(edges) - 1):
        if value < edges[i + 1]:
            return i
    return max(len(edges) - 2, 0)


def _reading_order(items: list[Line | TableBox], width: float) -> list[Line | TableBox]:
    """Top to bottom; on a two-column stretch, the left column before the right one."""

    def extent(item: Line | TableBox) -> tuple[float, float, float]:
        if isinstance(item, TableBox):
            return item.bbox[0], item.bbox[2], item.bbox[1]
        return item.x0, item.x1, item.baseline

    middle = width / 2
    left = [i for i in items if extent(i)[1] < middle + 4]
    right = [i for i in items if extent(i)[0] > middle - 4 and extent(i)[1] >= middle + 4]
    two_columns = len(left) >= 3 and len(right) >= 3
    if not two_columns:
        return sorted(items, key=lambda i: (round(extent(i)[2]), extent(i)[0]))
    spanning = sorted((i for i in items if i not in left and i not in right), key=lambda i: extent(i)[2])
    ordered: list[Line | TableBox] = []
    upper = float("-inf")
    for barrier in [*spanning, None]:
        lower = extent(barrier)[2] if barrier is not None else float("inf")
        for column in (left, right):
            ordered += sorted((i for i in column if upper <= extent(i)[2] < lower), key=lambda i: extent(i)[2])
        if barrier is not None:
            ordered.append(barrier)
        upper = lower
    return ordered
