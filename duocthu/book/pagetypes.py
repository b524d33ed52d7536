"""What the PDF reader hands on: characters, fragments, lines, ruled tables and pages.

Coordinates are PDF points with the origin at the page's top-left: ``(x0, top, x1, bottom)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class Line:
    """One line of text on a page, as a reader sees it (with the cues of its style)."""

    page: int  # 1-based page of the file
    text: str
    x0: float
    x1: float
    top: float
    baseline: float
    size: float  # median glyph size
    bold: bool
    italic: bool = False
    caps: str = ""  # "all" (every letter upper case), "small" (small capitals) or ""
    cap_size: float = 0.0  # the largest glyph size: the capitals of a small-caps line
    first_word: float = 0.0  # width of its first word: would it have fitted at the end of the line above?
    column: Box = (0.0, 0.0, 0.0, 0.0)  # the column (or page) region it was read in
    hyphen_end: str = ""  # "soft": the typesetter hyphenated a word here; "hard": a hyphen, maybe of a compound

    @property
    def bottom(self) -> float:
        return self.baseline + 0.25 * self.size


@dataclass(frozen=True)
class TableBox:
    """A ruled table: its page, its box, the x of its vertical rules and the text of its cells, row by row."""

    page: int
    bbox: Box
    rows: tuple[tuple[str, ...], ...]
    columns: tuple[float, ...] = ()
    # no rule closes the grid there, its vertical rules run on: the page or column end cut a row in two
    open_top: bool = False
    open_bottom: bool = False

    @property
    def top(self) -> float:
        return self.bbox[1]

    @property
    def widths(self) -> tuple[float, ...]:
        """Width of each column: the same grid continued on the next page or column has the same ones."""
        return tuple(round(b - a, 1) for a, b in zip(self.columns, self.columns[1:], strict=False))


@dataclass(frozen=True)
class PageText:
    """What one page holds: body lines and tables in reading order, running heads and feet apart."""

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


@dataclass(slots=True)
class Char:
    """One character as pdfium gives it (``hyphen``: pdfium's mark of a hyphen at a line end)."""

    text: str
    left: float
    right: float
    baseline: float  # from the top of the page
    size: float  # the glyph's size on the page (font size × the text matrix)
    bold: bool
    italic: bool = False
    hyphen: bool = False


@dataclass(slots=True)
class Fragment:
    """Characters drawn one after another on one baseline, with no wide gap: a word or a run of words."""

    chars: list[Char]
    x0: float
    x1: float
    baseline: float
    size: float  # the largest glyph size

    @property
    def top(self) -> float:
        return self.baseline - 0.8 * self.size

    @property
    def bottom(self) -> float:
        return self.baseline + 0.25 * self.size

    @property
    def text(self) -> str:
        return " ".join("".join(c.text for c in self.chars).split())


@dataclass
class RawPage:
    """A page before its reading order is known: its fragments and ruled tables."""

    number: int
    width: float
    height: float
    fragments: list[Fragment] = field(default_factory=list)
    tables: list[TableBox] = field(default_factory=list)
    images: int = 0
