"""Read a PDF as positioned lines and ruled tables in reading order, with pypdfium2 (BSD/Apache, no AGPL code).

pdfium gives every character with its box, baseline, font and size; this module groups them into
fragments (runs of characters on one baseline without a wide gap), finds ruled tables from the
page's line paths (at least two horizontal and two vertical rules that touch) and fills their
cells, sets the running heads and feet apart by their repetition across pages
(:mod:`duocthu.book.running`), and orders the rest for reading with an XY-cut
(:mod:`duocthu.book.readingorder`). pdfplumber (MIT) reads the same cues but ~6× slower on this
machine, so it is not used.

Coordinates are PDF points with the origin at the page's top-left: ``(x0, top, x1, bottom)``.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from duocthu.book.pagetypes import Box, Char, Fragment, Line, PageText, RawPage, TableBox
from duocthu.book.readingorder import column_starts, order_page, read_across
from duocthu.book.running import margin_fragments
from duocthu.errors import DuocthuError

__all__ = ["Box", "Line", "PageText", "PdfReadError", "TableBox", "open_pdf", "read_page", "read_pages", "read_raw"]

_RULE = 2.5  # a path thinner than this (pt) is a rule
_GAP = 0.6  # a gap wider than this × the glyph size ends a fragment (word spaces are ~0.3)
_HYPHEN_MARKS = frozenset("\x02\ufffe")  # pdfium marks a hyphen at a line end 0x02 (U+FFFE in one text call)
_LIGATURES = {"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl", "\ufb05": "st",
              "\ufb06": "st"}
_BOLD_NAMES = ("bold", "black", "heavy", "semibold", "demibold", "demi")
_ITALIC_FLAG, _FORCE_BOLD_FLAG = 0x40, 0x40000


class PdfReadError(DuocthuError):
    """The PDF cannot be read: broken, encrypted or not a PDF. Nothing was written."""


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


def read_pages(document: pdfium.PdfDocument, indices: Iterable[int] | None = None,
               advance: Callable[[int], None] | None = None) -> list[PageText]:
    """Pages ``indices`` (0-based; all by default) in reading order, running heads found across them.

    Every page is read before any is ordered: whether a line at the top is a running head is known
    only from the other pages, and so is the book's column grid (a page read across it is ordered again).
    ``advance(1)`` is called after each page read (a progress bar).
    """
    raws = []
    for index in range(len(document)) if indices is None else indices:
        raws.append(read_raw(document, index))
        if advance is not None:
            advance(1)
    margins = margin_fragments(raws)
    pages = [order_page(raw, margins.get(raw.number, set())) for raw in raws]
    starts = column_starts(pages)
    return [order_page(raw, margins.get(raw.number, set()), starts) if starts and read_across(page, raw, starts)
            else page for raw, page in zip(raws, pages, strict=True)]


def read_page(document: pdfium.PdfDocument, index: int) -> PageText:
    """Page ``index`` (0-based) alone: running heads known only by their page number (see :func:`read_pages`)."""
    return read_pages(document, [index])[0]


def read_raw(document: pdfium.PdfDocument, index: int) -> RawPage:
    """Page ``index`` (0-based) as fragments and ruled tables, before any reading order."""
    page = document[index]
    try:
        width, height = page.get_size()
        textpage = page.get_textpage()
        try:
            chars = _Reader(textpage, height).chars()
        finally:
            textpage.close()
        rules, images = _paths_and_images(page)
    finally:
        page.close()
    grids = _grids(rules, height)
    tables, body_chars = _fill_tables(index + 1, grids, chars)
    return RawPage(index + 1, width, height, _fragments(body_chars), tables, images)


def _paths_and_images(page: pdfium.PdfPage) -> tuple[list[Box], int]:
    """Bounds (left, bottom, right, top) of the page's paths, and how many images it holds.

    Looked at through pdfium's raw calls: a page printed by Chromium holds one text object per
    glyph, and wrapping each of them in a Python object took longer than reading the text.
    """
    rules: list[Box] = []
    images = 0
    left, bottom, right, top = (ctypes.c_float() for _ in range(4))
    refs = [ctypes.byref(v) for v in (left, bottom, right, top)]
    raw = page.raw
    stack = [(pdfium_c.FPDFPage_GetObject(raw, i), 1) for i in range(pdfium_c.FPDFPage_CountObjects(raw))]
    while stack:
        obj, level = stack.pop()
        kind = pdfium_c.FPDFPageObj_GetType(obj)
        if kind == pdfium_c.FPDF_PAGEOBJ_PATH:
            if pdfium_c.FPDFPageObj_GetBounds(obj, *refs):
                rules.append((left.value, bottom.value, right.value, top.value))
        elif kind == pdfium_c.FPDF_PAGEOBJ_IMAGE:
            images += 1
        elif kind == pdfium_c.FPDF_PAGEOBJ_FORM and level < 2:
            stack += [(pdfium_c.FPDFFormObj_GetObject(obj, i), 2) for i in range(pdfium_c.FPDFFormObj_CountObjects(obj))]
    return rules, images


def _bare(function: Any, result: Any, *arguments: Any) -> Callable[..., Any]:
    """A pdfium function called with plain pointers: ~2× cheaper per call than the typed binding."""
    address = ctypes.cast(function, ctypes.c_void_p).value
    assert address is not None
    return ctypes.CFUNCTYPE(result, *arguments)(address)


_SPACE = Char(" ", 0, 0, 0, 0, False)
_VOID, _INT = ctypes.c_void_p, ctypes.c_int
_RECT = ctypes.POINTER(pdfium_c.FS_RECTF)
_DOUBLE = ctypes.POINTER(ctypes.c_double)
_LOOSE_BOX = _bare(pdfium_c.FPDFText_GetLooseCharBox, _INT, _VOID, _INT, _RECT)
_ORIGIN = _bare(pdfium_c.FPDFText_GetCharOrigin, _INT, _VOID, _INT, _DOUBLE, _DOUBLE)
_TEXT_OBJECT = _bare(pdfium_c.FPDFText_GetTextObject, _VOID, _VOID, _INT)
_FONT_OF = _bare(pdfium_c.FPDFTextObj_GetFont, _VOID, _VOID)


@dataclass
class _Reader:
    """The characters of one text page, with the font of each text object looked up once.

    Per character only two calls reach pdfium (the text of the page comes in one call): its loose
    box and its text object. The baseline is the loose box's bottom plus the object's descent,
    measured once per object: the character's origin, at half the cost of asking for it.
    """

    textpage: pdfium.PdfTextPage
    height: float
    styles: dict[int, tuple[float, bool, bool, float]] = field(default_factory=dict)  # by text object
    fonts: dict[tuple[int, float], tuple[float, bool, bool, float]] = field(default_factory=dict)  # by font, size

    def chars(self) -> list[Char]:
        raw = self.textpage.raw
        handle = ctypes.cast(raw, ctypes.c_void_p)
        count = pdfium_c.FPDFText_CountChars(raw)
        text = _page_text(raw, count)
        rect = pdfium_c.FS_RECTF()
        rect_ref = ctypes.cast(ctypes.byref(rect), _RECT)
        chars: list[Char] = []
        height, styles = self.height, self.styles
        for i in range(count):
            char = text[i]
            if char == "\r" or char == "\n":
                chars.append(Char("\n", 0, 0, 0, 0, False))
                continue
            if char == " ":
                chars.append(_SPACE)  # a word space: only where it is matters, not its box
                continue
            hyphen = char in _HYPHEN_MARKS
            if hyphen:
                char = "-"
            elif not char.isprintable() and not char.isspace():
                continue  # pdfium's other markers, never text
            elif "\ufb00" <= char <= "\ufb06":
                char = _LIGATURES[char]
            _LOOSE_BOX(handle, i, rect_ref)
            obj: int | None = _TEXT_OBJECT(handle, i)
            if obj is None:
                if char.isspace():
                    chars.append(Char(" ", rect.left, rect.right, 0, 0, False))  # a space pdfium made up
                continue
            style = styles.get(obj)
            if style is None:
                style = styles[obj] = self._style(obj, i, rect.bottom)
            size, bold, italic, descent = style
            chars.append(Char(char, rect.left, rect.right, height - rect.bottom - descent, size, bold, italic, hyphen))
        return chars

    def _style(self, obj: int, index: int, loose_bottom: float) -> tuple[float, bool, bool, float]:
        """(size on the page, bold, italic, baseline above the loose box's bottom) of a new text object.

        Chromium prints one text object per glyph: the font and its descent are looked up once per
        font and size, not once per object.
        """
        raw = self.textpage.raw
        matrix = pdfium_c.FS_MATRIX()
        scale = 1.0
        if pdfium_c.FPDFText_GetMatrix(raw, index, matrix):
            scale = abs(matrix.a * matrix.d - matrix.b * matrix.c) ** 0.5 or 1.0
        size = round(pdfium_c.FPDFText_GetFontSize(raw, index) * scale, 2)
        key = (_FONT_OF(obj) or 0, size)
        style = self.fonts.get(key)
        if style is None:
            bold, italic = _font_of(raw, index)
            x, y = ctypes.c_double(), ctypes.c_double()
            _ORIGIN(ctypes.cast(raw, ctypes.c_void_p), index, ctypes.cast(ctypes.byref(x), _DOUBLE),
                    ctypes.cast(ctypes.byref(y), _DOUBLE))
            style = self.fonts[key] = (size, bold, italic, y.value - loose_bottom)
        return style


def _page_text(raw: object, count: int) -> str:
    """The characters of a text page in one call (one UTF-16 unit per character), else one by one."""
    buffer = ctypes.create_string_buffer((count + 1) * 2)
    written = pdfium_c.FPDFText_GetText(raw, 0, count, ctypes.cast(buffer, ctypes.POINTER(ctypes.c_ushort)))
    text = buffer.raw[: max(written - 1, 0) * 2].decode("utf-16-le", errors="replace")
    if len(text) == count:
        return text
    return "".join(chr(pdfium_c.FPDFText_GetUnicode(raw, i) or 0xFFFD) for i in range(count))


def _font_of(raw: Any, index: int) -> tuple[bool, bool]:
    """(bold, italic) of the font of character ``index``: by weight, flags or name ("…-Bold", "…Oblique")."""
    weight = pdfium_c.FPDFText_GetFontWeight(raw, index)
    flags = ctypes.c_int(0)
    name_buffer = ctypes.create_string_buffer(128)
    pdfium_c.FPDFText_GetFontInfo(raw, index, name_buffer, 128, ctypes.byref(flags))
    name = name_buffer.value.decode("latin-1", errors="replace").lower()
    bold = weight >= 600 or bool(flags.value & _FORCE_BOLD_FLAG) or any(mark in name for mark in _BOLD_NAMES)
    italic = bool(flags.value & _ITALIC_FLAG) or "italic" in name or "oblique" in name
    return bold, italic


def _fragments(chars: list[Char]) -> list[Fragment]:
    """Runs of characters on one baseline, cut at a line end, a backward jump or a gap wider than a word space."""
    fragments: list[Fragment] = []
    current: list[Char] = []
    last: Char | None = None

    def close() -> None:
        visible = [c for c in current if not c.text.isspace()]
        if visible:
            size = max(c.size for c in visible)
            baseline = sorted(c.baseline for c in visible)[len(visible) // 2]
            fragments.append(Fragment(list(current), min(c.left for c in visible), max(c.right for c in visible),
                                      baseline, size))
        current.clear()

    for char in chars:
        if char.text == "\n":
            close()
            last = None
            continue
        if char.text.isspace():
            if current:
                current.append(char)
            continue
        if last is not None:
            scale = max(char.size, last.size, 1.0)
            if (abs(char.baseline - last.baseline) > 0.5 * scale or char.left - last.right > _GAP * scale
                    or char.right < last.left - 1):
                close()
        current.append(char)
        last = char
    close()
    return fragments


_OPEN = 3.0  # pt: vertical rules running on this far past the last horizontal one leave the row open


@dataclass
class _Grid:
    xs: list[float] = field(default_factory=list)
    ys: list[float] = field(default_factory=list)
    bbox: Box = (0.0, 0.0, 0.0, 0.0)
    open_top: bool = False
    open_bottom: bool = False

    @classmethod
    def of(cls, xs: list[float], ys: list[float], bbox: Box) -> _Grid:
        """The grid of these rules; a row the page or column end cut (Chromium draws no rule under
        it, the cell borders just stop) gets the end of the vertical rules as its edge."""
        open_top, open_bottom = ys[0] - bbox[1] > _OPEN, bbox[3] - ys[-1] > _OPEN
        return cls(xs, [bbox[1]] * open_top + ys + [bbox[3]] * open_bottom, bbox, open_top, open_bottom)


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
        grids.append(_Grid.of(_merge([(m[1] + m[3]) / 2 for m in vertical]),
                              _merge([(m[2] + m[4]) / 2 for m in horizontal]), bbox))
    return sorted(grids, key=lambda g: g.bbox[1])


def _merge(values: list[float], tolerance: float = 2.0) -> list[float]:
    merged: list[float] = []
    for value in sorted(values):
        if not merged or value - merged[-1] > tolerance:
            merged.append(value)
    return merged


def _fill_tables(page: int, grids: list[_Grid], chars: list[Char]) -> tuple[list[TableBox], list[Char]]:
    if not grids:
        return [], chars
    cells: list[dict[tuple[int, int], list[Char]]] = [{} for _ in grids]
    body: list[Char] = []
    last_cell: tuple[int, int, int] | None = None
    for char in chars:
        if char.text == "\n" or char.text.isspace():
            if last_cell is not None:
                g, r, c = last_cell
                cells[g].setdefault((r, c), []).append(Char(char.text if char.text == "\n" else " ", 0, 0, 0, 0, False))
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
            row = tuple(_cell_text(content.get((r, c), [])) for c in range(len(grid.xs) - 1))
            if any(row):
                rows.append(row)
        x0, top, x1, bottom = (round(v, 1) for v in grid.bbox)
        tables.append(TableBox(page, (x0, top, x1, bottom), tuple(rows), tuple(round(x, 1) for x in grid.xs),
                               grid.open_top, grid.open_bottom))
    return tables, body


def _cell_text(chars: list[Char]) -> str:
    """A cell's text, its lines joined: no space after a hyphen pdfium marked, nor after "2–" at a line end."""
    out: list[str] = []
    glued = False  # the last character joins the next line's first without a space
    for char in chars:
        if char.text.isspace():
            if not (char.text == "\n" and glued):
                out.append(" ")
            continue
        glued = char.hyphen or (char.text in "–—/" and bool(out) and not out[-1].isspace())
        out.append(char.text)
    return " ".join("".join(out).split())


def _slot(edges: list[float], value: float) -> int:
    for i in range(len(edges) - 1):
        if value < edges[i + 1]:
            return i
    return max(len(edges) - 2, 0)
