"""The reading order of a page: an XY-cut over its fragments and tables, then lines column by column.

A page is cut across (into bands) where its column structure changes, and a band is cut down
its gutters into columns, recursively. Cutting across at every blank band would break a two-column
stretch wherever both columns happen to have a paragraph break at the same height; so a band of
columns is cut across only where no column *flows* over the gap (its line above and its line below
are not consecutive lines of that column) and either something below spans the gutter (the next
monograph in one column, a centred title) or a column has a hole of several lines there (the right
column of a monograph ended, a left-aligned title, then the next monograph's columns) or the columns
end together (balanced) above a wider blank than a heading's. A left column
that simply goes on below the right column's end is never cut off: that is a column set read left
then right. Lines are then formed inside each column (so a wide justified word gap never splits a
line) and carry the column's box, against which the importer measures indents and line ends.
"""

from __future__ import annotations

import itertools
import statistics
from collections import Counter
from dataclasses import dataclass, field

from duocthu.book.pagetypes import Box, Char, Fragment, Line, PageText, RawPage, TableBox

_GUTTER = 0.9  # a column gutter is at least this × the body size wide
_FLOW = 1.35  # consecutive lines of a column: baselines at most this × the line pitch apart
_HOLE = 2.5  # a column blank for this many line pitches across a gap: its text ended there
_WINDOW = 4.0  # line pitches looked at below a gap
_BALANCED_GAP = 1.5  # line pitches of blank below two columns that end together: the next thing spans
_SAME_START = 1.5  # pt: columns of two pages starting this close start at the same place


@dataclass(frozen=True)
class _Atom:
    x0: float
    top: float
    x1: float
    bottom: float
    item: Fragment | TableBox

    @property
    def baseline(self) -> float:
        return self.item.baseline if isinstance(self.item, Fragment) else self.bottom


@dataclass(frozen=True)
class _Page:
    size: float  # the body text size
    pitch: float  # the distance between two body lines
    starts: frozenset[float] = frozenset()  # where the book's columns start (see :func:`column_starts`)

    @property
    def gutter(self) -> float:
        return _GUTTER * self.size

    def starts_column(self, x: float) -> bool:
        return any(abs(x - start) <= _SAME_START for start in self.starts)


def column_starts(pages: list[PageText]) -> frozenset[float]:
    """Where the book's columns start: the left edge of a column read beside another one, on two pages or more.

    A book keeps its column grid from page to page. Where only one line of a column set is left
    (the last line of a left column beside the right column's last heading and line, at the top
    of a page), no page-local cue tells a gutter from a wide gap; the grid of the other pages does.
    """
    seen: Counter[float] = Counter()
    for page in pages:
        boxes = {ln.column for ln in page.lines}
        seen.update({round(b[0]) for b in boxes for a in boxes if a[2] <= b[0] and a[1] < b[3] and b[1] < a[3]})
    return frozenset(float(x) for x, pages_seen in seen.items() if pages_seen >= 2)


def read_across(page: PageText, raw: RawPage, starts: frozenset[float]) -> bool:
    """True when a line of ``page`` was read across one of the ``starts``: a fragment begins there, inside
    the line. Only such a page can read otherwise once the book's column grid is known."""
    lines = page.lines
    for fragment in raw.fragments:
        if any(abs(fragment.x0 - start) <= _SAME_START for start in starts) and any(
                abs(ln.baseline - fragment.baseline) <= 0.5 * fragment.size and ln.x0 < fragment.x0 - 1 <= ln.x1
                for ln in lines):
            return True
    return False


def order_page(raw: RawPage, margins: set[int], starts: frozenset[float] = frozenset()) -> PageText:
    """The page's lines and tables in reading order; the fragments ``margins`` as running lines.

    ``starts``: where the book's columns start (:func:`column_starts`); a blank at least a gutter wide
    that ends at one of them is a gutter even with a single line beside it.
    """
    body = [f for i, f in enumerate(raw.fragments) if i not in margins]
    margin_lines = tuple(_line(raw.number, [raw.fragments[i]], (0.0, 0.0, raw.width, raw.height))
                         for i in sorted(margins, key=lambda i: (raw.fragments[i].baseline, raw.fragments[i].x0)))
    atoms = [_Atom(f.x0, f.top, f.x1, f.bottom, f) for f in body]
    atoms += [_Atom(*t.bbox, t) for t in raw.tables]
    items: list[Line | TableBox] = []
    if atoms:
        page = _measure(body, starts)
        for column, block in _segment(atoms, _bbox(atoms), page, 0):
            items += _block_items(raw.number, block, column)
    chars = sum(len(ln.text.replace(" ", "")) for ln in items if isinstance(ln, Line))
    chars += sum(len("".join(r)) for t in raw.tables for r in t.rows)
    return PageText(raw.number, raw.width, raw.height, tuple(items), margin_lines, raw.images, chars)


def _measure(fragments: list[Fragment], starts: frozenset[float]) -> _Page:
    """The body size (most characters) and line pitch (most common baseline step at one left edge)."""
    sizes: Counter[float] = Counter()
    for f in fragments:
        sizes[round(f.size * 2) / 2] += len(f.chars)
    size = sizes.most_common(1)[0][0] if sizes else 10.0
    by_edge: dict[int, list[float]] = {}
    for f in fragments:
        if abs(f.size - size) <= 0.6:
            by_edge.setdefault(round(f.x0 / 3), []).append(f.baseline)
    steps: Counter[float] = Counter()
    for baselines in by_edge.values():
        baselines.sort()
        for a, b in zip(baselines, baselines[1:], strict=False):
            if 0.9 * size <= b - a <= 2.0 * size:
                steps[round(b - a, 1)] += 1
    pitch = steps.most_common(1)[0][0] if steps else 1.2 * size
    return _Page(size, pitch, starts)


def _bbox(atoms: list[_Atom]) -> Box:
    return (min(a.x0 for a in atoms), min(a.top for a in atoms), max(a.x1 for a in atoms), max(a.bottom for a in atoms))


def _segment(atoms: list[_Atom], column: Box, page: _Page, depth: int) -> list[tuple[Box, list[_Atom]]]:
    """(column box, atoms) of every block, in reading order."""
    if len(atoms) <= 1 or depth > 24:
        return [(column, atoms)]
    bands = _bands(atoms, page)
    if len(bands) > 1:
        return [piece for band in bands for piece in _segment(band, column, page, depth + 1)]
    gutter = _widest(_gutters(atoms, page))
    if gutter is None:
        return [(column, atoms)]
    middle = (gutter[0] + gutter[1]) / 2
    left = [a for a in atoms if a.x1 <= middle]
    right = [a for a in atoms if a.x1 > middle]
    return [*_segment(left, _bbox(left), page, depth + 1), *_segment(right, _bbox(right), page, depth + 1)]


def _widest(gutters: list[tuple[float, float]]) -> tuple[float, float] | None:
    return max(gutters, key=lambda g: g[1] - g[0]) if gutters else None


def _gutters(atoms: list[_Atom], page: _Page, rows: int = 2) -> list[tuple[float, float]]:
    """Blank x-intervals between the atoms, at least a gutter wide, with lines side by side across them.

    A centred title above a short left-aligned heading leaves a blank between them too, but nothing
    is set beside anything there: that is no gutter.
    """
    spans = sorted((a.x0, a.x1) for a in atoms)
    gutters = []
    reach = spans[0][1]
    for x0, x1 in spans[1:]:
        if x0 - reach >= page.gutter and _side_by_side(atoms, reach, x0, page, 1 if page.starts_column(x0) else rows):
            gutters.append((reach, x0))
        reach = max(reach, x1)
    return gutters


def _side_by_side(atoms: list[_Atom], left_edge: float, right_edge: float, page: _Page, rows: int) -> bool:
    """True when atoms left of the blank and atoms right of it share a line's height on ``rows`` lines."""
    left = sorted(a.baseline for a in atoms if a.x1 <= left_edge + 0.5)
    right = sorted(a.baseline for a in atoms if a.x0 >= right_edge - 0.5)
    shared: set[int] = set()
    i = j = 0
    while i < len(left) and j < len(right):
        if abs(left[i] - right[j]) <= 0.8 * page.pitch:
            shared.add(round(left[i]))
            if len(shared) >= rows:
                return True
        if left[i] < right[j]:
            i += 1
        else:
            j += 1
    return False


def _bands(atoms: list[_Atom], page: _Page) -> list[list[_Atom]]:
    """The atoms cut across at every gap where the column structure changes (see the module docstring)."""
    order = sorted(atoms, key=lambda a: a.top)
    bands: list[list[_Atom]] = [[order[0]]]
    structure = _Structure()
    reach = order[0].bottom
    for i, atom in enumerate(order[1:], start=1):
        if atom.top > reach + 0.3 and _cut_here(bands[-1], structure.gutters(bands[-1], page), order[i:], atom.top, page):
            bands.append([])
            structure = _Structure()
        bands[-1].append(atom)
        reach = max(reach, atom.bottom)
    return bands


@dataclass
class _Structure:
    """The gutters of a growing band, computed again only when they may have changed (a page of two
    dense columns has a gap under every line, and the band above each gap is most of the page)."""

    counted: int = 0
    found: list[tuple[float, float]] = field(default_factory=list)

    def gutters(self, band: list[_Atom], page: _Page) -> list[tuple[float, float]]:
        new = band[self.counted:]
        touched = any(a.x0 < b and a.x1 > g for a in new for g, b in self.found)
        if len(new) >= 6 or touched or (not self.found and self.counted < 12):
            self.found, self.counted = _gutters(band, page), len(band)
        return self.found


def _cut_here(band: list[_Atom], columns: list[tuple[float, float]], rest: list[_Atom], g1: float,
              page: _Page) -> bool:
    limit = g1 + _WINDOW * page.pitch
    window = list(itertools.takewhile(lambda a: a.top <= limit, rest))
    if not columns:
        below = _gutters(window, page)
        if not below:
            return False  # one column above and below
        if not _fits(band, _lanes(below)):
            return True  # columns begin below a one-column band
        columns = below  # the band is the first line of these columns (a title beside the other column's text)
    # a gutter seen over few lines is too wide (a short title beside it): narrow it with the lines below
    together = [g for g in _gutters(band + window, page) if any(g[0] < b and g[1] > a for a, b in columns)]
    lanes = _lanes(together or columns)
    for lane in lanes:
        above = [a for a in band if _inside(a, lane)]
        first = next((a for a in rest if a.x1 > lane[0] and a.x0 < lane[1]), None)
        if not above or first is None:
            continue
        last = max(above, key=lambda a: a.bottom)
        if _inside(first, lane) and first.baseline - last.baseline <= _FLOW * page.pitch:
            return False  # this column goes on over the gap
    occupied = [(min(a.x0 for a in inside), max(a.x1 for a in inside))
                 for inside in ([a for a in band if _inside(a, lane)] for lane in lanes) if inside]
    if any(sum(1 for x0, x1 in occupied if a.x0 < x1 - 1 and a.x1 > x0 + 1) >= 2 for a in window):
        return True  # something below reaches across the gutter into the text of both columns
    ends = []
    for lane in lanes:
        above = [a for a in band if _inside(a, lane)]
        under = next((a for a in rest if _inside(a, lane)), None)
        end = max((a.bottom for a in above), default=float("-inf"))
        if above and under and under.top - end >= _HOLE * page.pitch and (
                under.top - g1 <= _WINDOW * page.pitch or _larger(rest[0], page)):
            return True  # a column ended above the gap, and a title or another text starts just below it
        ends.append(end)
    g0 = max(ends)
    # balanced columns that end together, then a wider blank than a heading's: what follows is not theirs
    return min(ends) >= g0 - page.pitch and g1 - g0 >= _BALANCED_GAP * page.pitch


def _lanes(gutters: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The columns between gutters, each from where its text starts to where the next column's starts.

    The right edge of a gutter (where the next column's lines start) is known well; its left edge
    is only as far as the longest line seen so far, which may be short ("2. Mã ATC").
    """
    starts = [g[1] for g in gutters]
    return list(zip([float("-inf"), *starts], [*starts, float("inf")], strict=True))


def _fits(atoms: list[_Atom], lanes: list[tuple[float, float]]) -> bool:
    """True when every atom stays inside one lane and at least two lanes hold some."""
    used = set()
    for atom in atoms:
        lane = next((i for i, lane in enumerate(lanes) if _inside(atom, lane)), None)
        if lane is None:
            return False
        used.add(lane)
    return len(used) >= 2


def _larger(atom: _Atom, page: _Page) -> bool:
    return isinstance(atom.item, Fragment) and atom.item.size >= 1.15 * page.size


def _inside(atom: _Atom, lane: tuple[float, float]) -> bool:
    return atom.x0 >= lane[0] - 1 and atom.x1 <= lane[1] - 0.5


def _block_items(page: int, atoms: list[_Atom], column: Box) -> list[Line | TableBox]:
    """Lines (fragments on one baseline, left to right) and tables of one block, top to bottom."""
    fragments = sorted((a.item for a in atoms if isinstance(a.item, Fragment)), key=lambda f: f.baseline)
    rows: list[list[Fragment]] = []
    for fragment in fragments:
        if rows and fragment.baseline - rows[-1][0].baseline <= 0.45 * max(fragment.size, rows[-1][0].size):
            rows[-1].append(fragment)
        else:
            rows.append([fragment])
    placed: list[tuple[float, Line | TableBox]] = [(row[0].baseline, _line(page, row, column)) for row in rows]
    placed += [(a.item.bbox[1], a.item) for a in atoms if isinstance(a.item, TableBox)]
    placed.sort(key=lambda p: p[0])
    return [item for _, item in placed]


def _line(page: int, fragments: list[Fragment], column: Box) -> Line:
    """One line from its fragments, with the cues of its style."""
    fragments = sorted(fragments, key=lambda f: f.x0)
    chars = [c for f in fragments for c in f.chars]
    visible = [c for c in chars if not c.text.isspace()]
    text = " ".join(f.text for f in fragments)
    hyphen = _hyphen_end(visible)
    if hyphen == "soft":
        text = text[:-1] + "-"
    sizes = [c.size for c in visible]
    size = statistics.median(sizes)
    return Line(
        page, text, fragments[0].x0, max(f.x1 for f in fragments),
        min(f.top for f in fragments), statistics.median(c.baseline for c in visible), round(size, 2),
        sum(c.bold for c in visible) >= 0.6 * len(visible), sum(c.italic for c in visible) >= 0.6 * len(visible),
        _caps(visible), round(max(sizes), 2), _first_word(fragments[0].chars), column, hyphen,
    )


def _hyphen_end(visible: list[Char]) -> str:
    """"soft" after a word broken by the typesetter (Chromium draws U+2010), "hard" after a plain hyphen."""
    if len(visible) < 2 or visible[-2].text.isspace() or visible[-2].right < visible[-1].left - 1.0:
        return ""
    last = visible[-1].text
    return "soft" if last in ("\u2010", "\u00ad") else "hard" if last == "-" else ""


def _caps(visible: list[Char]) -> str:
    letters = [c for c in visible if c.text.isalpha()]
    if len(letters) < 2:
        return ""
    smallest = min(c.size for c in letters)
    big = [c for c in letters if c.size > 1.12 * smallest]
    if big and len(big) < len(letters) and all(c.text.isupper() for c in big):
        return "small"
    return "all" if all(c.text.isupper() for c in letters) else ""


def _first_word(chars: list[Char]) -> float:
    start = next((c for c in chars if not c.text.isspace()), None)
    if start is None:
        return 0.0
    end = start
    for char in chars[chars.index(start):]:
        if char.text.isspace():
            break
        end = char
    return end.right - start.left
