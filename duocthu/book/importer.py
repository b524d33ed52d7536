"""``duocthu import-pdf``: turn a typeset Dược thư into the formulary format, with real pages.

The reader (:mod:`duocthu.book.pdftext`) gives lines and ruled tables in reading order; this
module finds the structure by the cues a person uses, measured against the book's own style:

* a **section** starts at a line styled apart from the body that reads as a catalogue heading
  (:mod:`duocthu.book.headings`), also when set on two or three lines;
* a **monograph** starts at a styled line right before a section heading that stands out more
  than the headings do, or whose name opens the "Tên chung quốc tế" section after it; a line that
  stands out as much but no heading follows ends the monograph (what follows is listed, not lost);
* **paragraphs and lines** come from gaps, indents and line ends (:mod:`duocthu.book.paragraphs`);
* every **table** becomes a quarantined ``block`` (its pages and boxes in a note the parser keeps),
  one table split over two pages or columns joined again when its grid or header continues.

Every line ends in a monograph, the front or back matter, or the report's "not placed" list;
pages are the book's printed numbers when its running heads carry them, else the file's own.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from duocthu.book import layout
from duocthu.book.headings import (
    NEAR_MISS_SCORE,
    BodyStyle,
    CatalogueMatch,
    caption_text,
    cues,
    match_heading,
    style_key,
    styled,
)
from duocthu.book.pagetypes import Box, Line, PageText, TableBox
from duocthu.book.paragraphs import Vocabulary, join_lines, line_start
from duocthu.book.report import ImportReport
from duocthu.book.running import page_number_text
from duocthu.sections import OPTIONAL_SECTIONS, SECTION_ORDER, SECTION_TITLES
from duocthu.text import fold, normalize

_ATC_RE = re.compile(r"\b[A-Z]\d{2}[A-Z]{2}\d{2}\b")
_NUMBER_RE = re.compile(r"\d{1,4}")
_NAME_STOPWORDS = {"va"}
_TITLE_STANDS_OUT = 1.15  # a title's capitals are at least this × the headings' (and 1.2 × the body's)
_SENTENCE_END = tuple(".!?:;)”\"")


@dataclass
class ImportedTable:
    caption: str
    page: int
    bbox: Box
    rows: tuple[tuple[str, ...], ...]
    captioned: bool = True
    widths: tuple[float, ...] = ()
    continued: list[tuple[int, Box]] = field(default_factory=list)  # (page, box) of each part after the first


@dataclass
class ImportedSection:
    key: str
    title: str
    first_page: int
    last_page: int
    parts: list[list[str] | ImportedTable] = field(default_factory=list)  # paragraphs (hard lines) and tables

    def add_text(self, line: str, page: int, start: str, join: Callable[[str, str], str] | None = None) -> None:
        """Add one printed line: ``start`` is "paragraph", "line" or "continue"."""
        self.last_page = max(self.last_page, page)
        current = self.parts[-1] if self.parts else None
        if start == "paragraph" or not isinstance(current, list):
            self.parts.append([line])
        elif start == "line":
            current.append(line)
        else:
            current[-1] = join(current[-1], line) if join else f"{current[-1]} {line}"

    @property
    def empty(self) -> bool:
        return not self.parts


@dataclass
class ImportedMonograph:
    name: str
    first_page: int
    last_page: int
    sections: list[ImportedSection] = field(default_factory=list)

    @property
    def drug_id(self) -> str:
        return drug_id_for(self.name)

    def section(self, key: str) -> ImportedSection | None:
        return next((s for s in self.sections if s.key == key), None)


def drug_id_for(name: str) -> str:
    """The ASCII slug of a drug name: ``"Amoxicilin và acid clavulanic"`` → ``amoxicilin_acid_clavulanic``."""
    words = re.findall(r"[a-z0-9]+", fold(name))
    return "_".join(w for w in words if w not in _NAME_STOPWORDS) or "thuoc"


def display_name(title: str) -> str:
    """A title as the name: an all-caps title (``PARACETAMOL``) gets sentence case."""
    title = " ".join(title.split())
    return title[:1] + title[1:].lower() if title.isupper() else title


def printed_number(text: str) -> int | None:
    """The page number a running line carries ("245", "— 12 —", "Dược thư mẫu — trang 7"), if any."""
    if page_number_text(text):
        return int(_NUMBER_RE.findall(text)[0])
    match = re.search(r"(?:^|[·•|—–\-]\s*|trang\s+)(\d{1,4})\s*$", text, re.IGNORECASE)
    if match:
        return int(match.group(1))
    match = re.match(r"^(\d{1,4})\s*[·•|—–\-]", text)
    return int(match.group(1)) if match else None


def page_offset(pages: Iterable[PageText]) -> tuple[int, bool]:
    """(printed − file page number, found) from the numbers in the running heads and feet."""
    offsets: Counter[int] = Counter()
    numbered = 0
    total = 0
    for page in pages:
        total += 1
        numbers = [n for n in (printed_number(m.text) for m in page.margin_lines) if n is not None]
        if numbers:
            numbered += 1
            offsets[numbers[0] - page.number] += 1
    if not offsets:
        return 0, False
    offset, votes = offsets.most_common(1)[0]
    return (offset, True) if votes >= max(2, numbered // 2) or (total == 1 and votes) else (0, False)


@dataclass
class _Entry:
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


class _Book:
    """The entries of the whole book, classified (pass 1) before they are placed (pass 2)."""

    def __init__(self, pages: list[PageText], offset: int):
        self.entries = [_Entry(item, page.number + offset) for page in pages for item in page.items]
        lines = [e.line for e in self.entries if isinstance(e.item, Line)]
        self.body = BodyStyle.of(lines)
        self.pitch = self._pitch()
        self.justified = self._justified(lines)
        self.right_edges = self._right_edges(lines)
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
        edges: dict[int, list[float]] = {}
        for line in lines:
            edges.setdefault(round(line.column[0]), []).append(line.column[2])
        return edges

    def right_edge(self, line: Line) -> float:
        """Where the text frame of ``line`` ends: a ragged-right column rarely reaches it on one page,
        but the same column on other pages comes closer (within a word or two)."""
        near = [r for r in self.right_edges.get(round(line.column[0]), []) if abs(r - line.column[2]) <= 3 * self.body.size]
        return max([line.column[2], *near])

    def _run(self, start: int, kinds: tuple[str, ...]) -> list[_Entry]:
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


class _Placer:
    """Walks the classified entries and builds monographs; fills the report as it goes."""

    def __init__(self, book: _Book, report: ImportReport):
        self.book, self.report = book, report
        self.monographs: list[ImportedMonograph] = []
        self.mono: ImportedMonograph | None = None
        self.section: ImportedSection | None = None
        self.previous: Line | None = None  # the line above, inside the current section
        self.caption: tuple[str, int] | None = None  # a caption waiting for its table
        self.last_kind = ""
        self.outside: list[tuple[int, str, int]] = []  # (printed page, text, file page) after a stop
        self.guard: tuple[int, float, str, str, str] | None = None
        self.guarded_column: tuple[float, ...] | None = None
        self._caption_entry: _Entry | None = None
        self.index = 0

    def place(self) -> list[ImportedMonograph]:
        for self.index, entry in enumerate(self.book.entries):
            handler = getattr(self, f"_{entry.kind}")
            handler(entry)
            if entry.kind not in ("part", "label"):
                self.last_kind = entry.kind
        self._flush_caption()
        self._close_outside(final=True)
        return self.monographs

    def _count(self, bucket: str) -> None:
        self.report.line_counts[bucket] = self.report.line_counts.get(bucket, 0) + 1

    def _title(self, entry: _Entry) -> None:
        self._flush_caption()
        self._close_outside(final=False)
        run = self.book.entries[self.index:self.index + entry.span]
        name = display_name(" ".join(e.line.text for e in run))
        before = self.mono
        self.mono = ImportedMonograph(name, entry.printed, entry.printed)
        self.monographs.append(self.mono)
        self.section, self.previous = None, None
        self._count("monographs")
        if before is not None:
            last = self._last_text(before)
            self.guard = (entry.line.page, entry.line.top, before.name, name, last)
            self.guarded_column = None

    def _part(self, entry: _Entry) -> None:
        self._count("monographs" if self.mono is not None else "not placed")

    def _heading(self, entry: _Entry) -> None:
        self._flush_caption()
        if self.mono is None:
            self._outside_line(entry)
            return
        assert entry.key is not None and entry.match is not None
        if entry.match.score < 100:
            self.report.approximate_headings.append((entry.printed, entry.line.text, entry.match.title,
                                                     entry.match.score))
        existing = self.mono.section(entry.key)
        if existing is not None:
            self.report.repeated_sections.append((entry.printed, self.mono.name, existing.title))
            self.section = existing
        else:
            self.section = ImportedSection(entry.key, SECTION_TITLES[entry.key], entry.printed, entry.printed)
            self.mono.sections.append(self.section)
        self.mono.last_page = max(self.mono.last_page, entry.printed)
        self.previous = None
        self._count("monographs")

    def _stop(self, entry: _Entry) -> None:
        self._flush_caption()
        if self.mono is not None:
            self.mono, self.section, self.guard = None, None, None
        self._outside_line(entry)

    def _styled(self, entry: _Entry) -> None:
        """A styled line that is no heading: reported, and kept as text of the section it is in."""
        if self.section is not None:
            match = entry.match or match_heading(entry.line.text)
            if match.score >= NEAR_MISS_SCORE:
                self.report.near_miss_headings.append((entry.printed, entry.line.text, match.title, match.score))
            else:
                self.report.unknown_headings.append((entry.printed, entry.line.text))
            self.previous = None
        self._text(entry)
        self.previous = None

    def _label(self, entry: _Entry) -> None:
        self._count("monographs" if self.section is not None else "not placed")

    def _caption(self, entry: _Entry) -> None:
        self._flush_caption()
        if self.section is None:
            self._outside_line(entry)
            return
        self.caption = (caption_text(entry.line.text) or "", entry.printed)
        self._caption_entry = entry

    def _caption_more(self, entry: _Entry) -> None:
        if self.caption is None:
            self._text(entry)
            return
        self.caption = (f"{self.caption[0]} {entry.line.text}", self.caption[1])
        self._count("monographs")

    def _flush_caption(self) -> None:
        """A caption no table followed is text."""
        if self.caption is not None and self._caption_entry is not None:
            self.caption = None
            self._text(self._caption_entry)

    def _text(self, entry: _Entry) -> None:
        if self.caption is not None:
            self._flush_caption()
        if self.section is None or self.mono is None:
            self._outside_line(entry)
            return
        line = entry.line
        self._check_guard(line)
        justified = self.previous is not None and self.book.justified.get(
            (self.previous.page, self.previous.column), False)
        edge = self.book.right_edge(self.previous) if self.previous is not None else 0.0
        start = line_start(self.previous, line, self.book.body.size, self.book.pitch, justified, edge)
        hyphen = self.previous.hyphen_end if self.previous is not None else ""
        self.section.add_text(line.text, entry.printed, start,
                              lambda a, b: join_lines(a, b, hyphen, self.book.vocabulary))
        self.mono.last_page = max(self.mono.last_page, entry.printed)
        self.previous = line
        self._count("monographs")

    def _table(self, entry: _Entry) -> None:
        table = entry.item
        assert isinstance(table, TableBox)
        if self.section is None or self.mono is None:
            self._flush_caption()
            self.report.not_placed.append((entry.printed, "a table outside any section"))
            return
        last = self.section.parts[-1] if self.section.parts else None
        if self.caption is None and self.last_kind == "table" and isinstance(last, ImportedTable) \
                and _continues(last, table):
            rows = table.rows[1:] if table.rows and last.rows and table.rows[0] == last.rows[0] else table.rows
            last.rows = last.rows + rows
            last.continued.append((entry.printed, table.bbox))
            self.report.joined_tables.append((self.mono.name, last.page, entry.printed))
        else:
            caption, captioned = (self.caption[0], True) if self.caption else (f"Bảng ở trang {entry.printed}", False)
            if self.caption is not None:
                self._count("monographs")
            self.caption = None
            self.section.parts.append(ImportedTable(caption, entry.printed, table.bbox, table.rows, captioned,
                                                    table.widths))
            self.report.tables += 1
            if not captioned:
                self.report.uncaptioned_tables.append((self.mono.name, entry.printed))
        self.section.last_page = max(self.section.last_page, entry.printed)
        self.mono.last_page = max(self.mono.last_page, entry.printed)
        self.previous = None

    def _outside_line(self, entry: _Entry) -> None:
        if not self.monographs:
            self._count("front matter")
            if entry.line.page not in self.report.front_matter_pages:
                self.report.front_matter_pages.append(entry.line.page)
            return
        self.outside.append((entry.printed, entry.line.text, entry.line.page))

    def _close_outside(self, final: bool) -> None:
        """Lines after a monograph ended and before the next title: not placed, or the back matter."""
        for printed, text, file_page in self.outside:
            if final:
                self._count("back matter")
                if file_page not in self.report.back_matter_pages:
                    self.report.back_matter_pages.append(file_page)
            else:
                self._count("not placed")
                self.report.not_placed.append((printed, text))
        self.outside = []

    def _check_guard(self, line: Line) -> None:
        """Flag text above a new title, read after it, that seems to go on from the drug before."""
        if self.guard is None:
            return
        page, top, before, after, last = self.guard
        if line.page != page:
            self.guard = None
            return
        if line.column[3] >= top or line.column == self.guarded_column:
            return
        self.guarded_column = line.column
        previous = self.previous.text if self.previous is not None else ""
        mid_sentence = not last.rstrip().endswith(_SENTENCE_END)
        goes_on = line.text[:1].islower() and (not previous or previous.rstrip().endswith(_SENTENCE_END))
        if mid_sentence or goes_on:
            self.report.continued_after_title.append((self.mono.first_page if self.mono else page, before, after))

    @staticmethod
    def _last_text(mono: ImportedMonograph) -> str:
        for section in reversed(mono.sections):
            for part in reversed(section.parts):
                if isinstance(part, list) and part:
                    return part[-1]
        return ""


def _continues(last: ImportedTable, table: TableBox) -> bool:
    """True when ``table`` goes on with ``last``: the same grid (column widths) or its header repeated."""
    if not table.rows or not last.rows or len(table.rows[0]) != len(last.rows[0]):
        return False
    same_grid = len(table.widths) == len(last.widths) and all(
        abs(a - b) <= 2.5 for a, b in zip(table.widths, last.widths, strict=True))
    return same_grid or table.rows[0] == last.rows[0]


def structure(pages: Iterable[PageText], report: ImportReport, offset: int,
              on_page: Callable[[PageText], None] | None = None) -> list[ImportedMonograph]:
    """Monographs found in ``pages`` (in reading order); problems go to ``report``."""
    readable = []
    for page in pages:
        report.pages += 1
        report.line_counts["running heads and feet"] = (
            report.line_counts.get("running heads and feet", 0) + len(page.margin_lines))
        if not page.has_text:
            (report.needs_ocr if page.images else report.blank_pages).append(page.number)
        else:
            readable.append(page)
        if on_page is not None:
            on_page(page)
    monographs = _Placer(_Book(readable, offset), report).place()
    for mono in monographs:
        for section in mono.sections:
            if section.empty:
                report.empty_sections.append((mono.name, section.title))
        present = {s.key for s in mono.sections}
        report.missing_sections += [(mono.name, SECTION_TITLES[k]) for k in SECTION_ORDER
                                    if k not in present and k not in OPTIONAL_SECTIONS]
    report.monographs = len(monographs)
    return monographs


def atc_codes(mono: ImportedMonograph) -> list[str]:
    """ATC codes found in the monograph's ``Mã ATC`` section."""
    section = mono.section("ma_atc")
    if section is None:
        return []
    text = " ".join(" ".join(p) for p in section.parts if isinstance(p, list))
    return list(dict.fromkeys(_ATC_RE.findall(text)))


def aliases(mono: ImportedMonograph) -> list[str]:
    """Other names in parentheses in ``Tên chung quốc tế`` ("Paracetamol (Acetaminophen)")."""
    section = mono.section("ten_chung_quoc_te")
    if section is None:
        return []
    text = " ".join(" ".join(p) for p in section.parts if isinstance(p, list))
    found = []
    for inner in re.findall(r"\(([^()]{2,60})\)", text):
        for name in re.split(r"[,;]", inner):
            name = normalize(name.strip().rstrip("."))
            if name and fold(name) != fold(mono.name) and not any(ch.isdigit() for ch in name):
                found.append(name)
    return list(dict.fromkeys(found))
