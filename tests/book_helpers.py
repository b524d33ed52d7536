"""Pages made by hand for the reader's and importer's tests: fragments and lines where a test puts them."""

from __future__ import annotations

from duocthu.book.pagetypes import Box, Char, Fragment, Line, PageText, RawPage

CHAR = 0.5  # a character is this × the size wide
SPACE = 0.3  # a word space, × the size


def fragment(text: str, x: float, baseline: float, size: float = 10.0, *, bold: bool = False,
             gap: float = SPACE) -> Fragment:
    """``text`` set from ``x`` on ``baseline``, its words ``gap`` × size apart."""
    chars: list[Char] = []
    position = x
    for i, word in enumerate(text.split(" ")):
        if i:
            chars.append(Char(" ", position, position + gap * size, baseline, size, bold))
            position += gap * size
        for letter in word:
            chars.append(Char(letter, position, position + CHAR * size, baseline, size, bold))
            position += CHAR * size
    return Fragment(chars, x, position, baseline, size)


def width(text: str, size: float = 10.0) -> float:
    """How wide :func:`fragment` sets ``text``."""
    return fragment(text, 0, 0, size).x1


def column(texts: list[str], x: float, top: float, pitch: float = 12.0, size: float = 10.0) -> list[Fragment]:
    """Lines of text down one column from baseline ``top``, one every ``pitch``."""
    return [fragment(t, x, top + i * pitch, size) for i, t in enumerate(texts)]


def raw_page(fragments: list[Fragment], number: int = 1, size: tuple[float, float] = (600.0, 800.0)) -> RawPage:
    return RawPage(number, size[0], size[1], fragments)


def line(text: str, x0: float, baseline: float, *, page: int = 1, column_box: Box = (50.0, 0.0, 550.0, 800.0),
         size: float = 10.0, bold: bool = False, x1: float | None = None, hyphen: str = "") -> Line:
    """A :class:`Line` as the reader would give it (first word and right end measured like :func:`fragment`)."""
    first = text.split(" ")[0]
    return Line(page, text, x0, x1 if x1 is not None else x0 + width(text, size), baseline - 0.8 * size, baseline,
                size, bold, cap_size=size, first_word=width(first, size), column=column_box, hyphen_end=hyphen)


def page_text(lines: list[Line], number: int = 1) -> PageText:
    return PageText(number, 600.0, 800.0, tuple(lines), (), 0, sum(len(ln.text) for ln in lines))
