"""Pass 2 of the import: every classified line placed in a monograph and section, or listed.

Text goes to the section it follows, in paragraphs and hard lines; a caption waits for its table;
a table that continues the one before it (same grid, or its header repeated) is joined to it; text
before the first title is front matter, text after a monograph ended (a prominent line that no
heading follows) is listed as not placed, or as back matter at the end of the book. Text found
above a new title but read after it, that seems to go on from the drug before, is flagged.
"""

from __future__ import annotations

from duocthu.book.classify import Book, Entry
from duocthu.book.headings import NEAR_MISS_SCORE, caption_text, match_heading
from duocthu.book.imported import ImportedMonograph, ImportedSection, ImportedTable, display_name
from duocthu.book.pagetypes import Line, TableBox
from duocthu.book.paragraphs import join_lines, line_start
from duocthu.book.report import ImportReport
from duocthu.sections import SECTION_TITLES

_SENTENCE_END = tuple(".!?:;)”\"")


class Placer:
    """Walks the classified entries and builds monographs; fills the report as it goes."""

    def __init__(self, book: Book, report: ImportReport):
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
        self._caption_entry: Entry | None = None
        self.index = 0

    def place(self) -> list[ImportedMonograph]:
        for index, entry in enumerate(self.book.entries):
            self.index = index
            handler = getattr(self, f"_{entry.kind}")
            handler(entry)
            if entry.kind not in ("part", "label"):
                self.last_kind = entry.kind
        self._flush_caption()
        self._close_outside(final=True)
        return self.monographs

    def _count(self, bucket: str) -> None:
        self.report.line_counts[bucket] = self.report.line_counts.get(bucket, 0) + 1

    def _title(self, entry: Entry) -> None:
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

    def _part(self, entry: Entry) -> None:
        """A further line of a heading or title: where the first line went."""
        if self.mono is None:
            self._outside_line(entry)
        else:
            self._count("monographs")

    def _heading(self, entry: Entry) -> None:
        self._flush_caption()
        if self.mono is None:
            self.report.headings_outside.append((entry.printed, entry.line.text))
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

    def _stop(self, entry: Entry) -> None:
        self._flush_caption()
        if self.mono is not None:
            self.mono, self.section, self.guard = None, None, None
        self._outside_line(entry)

    def _styled(self, entry: Entry) -> None:
        """A styled line that is no heading: reported, and kept as text of the section it is in."""
        match = entry.match or match_heading(entry.line.text)
        if match.score >= NEAR_MISS_SCORE:  # listed wherever it is: the hint when no monograph is found
            self.report.near_miss_headings.append((entry.printed, entry.line.text, match.title, match.score))
        elif self.section is not None:
            self.report.unknown_headings.append((entry.printed, entry.line.text))
        self._text(entry)
        self.previous = None

    def _label(self, entry: Entry) -> None:
        """The demo book's red label over a quarantined table: the table says it again."""
        if self.section is None:
            self._outside_line(entry)
        else:
            self._count("monographs")

    def _caption(self, entry: Entry) -> None:
        self._flush_caption()
        if self.section is None:
            self._outside_line(entry)
            return
        self.caption = (caption_text(entry.line.text) or "", entry.printed)
        self._caption_entry = entry

    def _caption_more(self, entry: Entry) -> None:
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

    def _text(self, entry: Entry) -> None:
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
        start = line_start(self.previous, line, self.book.body.size, self.book.pitch, justified, edge,
                           self.section.open_paragraph)
        hyphen = self.previous.hyphen_end if self.previous is not None else ""
        self.section.add_text(line.text, entry.printed, start,
                              lambda a, b: join_lines(a, b, hyphen, self.book.vocabulary))
        self.mono.last_page = max(self.mono.last_page, entry.printed)
        self.previous = line
        self._count("monographs")

    def _table(self, entry: Entry) -> None:
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
            last.join(rows, entry.printed, table.bbox, cut_above=table.open_top, cut_below=table.open_bottom)
            self.report.joined_tables.append((self.mono.name, last.page, entry.printed))
        else:
            caption, captioned = (self.caption[0], True) if self.caption else (f"Bảng ở trang {entry.printed}", False)
            if self.caption is not None:
                self._count("monographs")
            self.caption = None
            self.section.parts.append(ImportedTable(caption, entry.printed, table.bbox, table.rows, captioned,
                                                    table.widths, open_end=table.open_bottom))
            self.report.tables += 1
            if not captioned:
                self.report.uncaptioned_tables.append((self.mono.name, entry.printed))
        self.section.last_page = max(self.section.last_page, entry.printed)
        self.mono.last_page = max(self.mono.last_page, entry.printed)
        self.previous = None

    def _outside_line(self, entry: Entry) -> None:
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
