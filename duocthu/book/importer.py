"""``duocthu import-pdf``: turn a Dược thư-layout PDF into the formulary format, with real pages.

The reader (:mod:`duocthu.book.pdftext`) gives lines and ruled tables in reading order; this
module finds the structure by the cues a person uses:

* a **monograph** starts at a bold line clearly larger than the body text (its title);
* a **section** starts at a bold line of body size or larger whose text is a heading of the
  catalogue (:mod:`duocthu.sections`), also when the heading is split over two or three lines;
  a bold line that names no section is reported as an unknown heading and kept as text;
* a **paragraph** starts at a line indented by about :data:`layout.PARAGRAPH_INDENT`, a line
  after a hard line break at about :data:`layout.LINE_INDENT`; anything else continues the line
  above (a wider gap than the leading also starts a paragraph);
* every **table** becomes a quarantined ``block`` (its page and box recorded in a note the parser
  keeps), because no conversion of a printed table is trusted until a person has compared it.

Pages are the book's printed page numbers when its running heads carry them (the offset from the
file's page numbers is found and reported), else the file's own.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from duocthu.book import layout
from duocthu.book.pdftext import Line, PageText, TableBox
from duocthu.book.report import ImportReport
from duocthu.sections import SECTION_ORDER, SECTION_TITLES, section_for_heading
from duocthu.text import fold, normalize

_ATC_RE = re.compile(r"\b[A-Z]\d{2}[A-Z]{2}\d{2}\b")
_CAPTION_RE = re.compile(r"^Bảng\s*(?:\d+[.:]?)?\s*[:.]\s*(.+)$")
_PAGE_NUMBER_RE = re.compile(r"^\d{1,4}$")
_NAME_STOPWORDS = {"va"}


@dataclass
class ImportedTable:
    caption: str
    page: int
    bbox: tuple[float, float, float, float]
    rows: tuple[tuple[str, ...], ...]
    captioned: bool = True


@dataclass
class ImportedSection:
    key: str
    title: str
    first_page: int
    last_page: int
    parts: list[list[str] | ImportedTable] = field(default_factory=list)  # paragraphs (hard lines) and tables

    def add_text(self, line: str, page: int, start: str) -> None:
        """Add one printed line: ``start`` is "paragraph", "line" or "continue"."""
        self.last_page = max(self.last_page, page)
        current = self.parts[-1] if self.parts else None
        if start == "paragraph" or not isinstance(current, list):
            self.parts.append([line])
        elif start == "line":
            current.append(line)
        else:
            current[-1] = f"{current[-1]} {line}"

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


def drug_id_for(name: str) -> str:
    """The ASCII slug of a drug name: ``"Amoxicilin và acid clavulanic"`` → ``amoxicilin_acid_clavulanic``."""
    words = re.findall(r"[a-z0-9]+", fold(name))
    return "_".join(w for w in words if w not in _NAME_STOPWORDS) or "thuoc"


def display_name(title: str) -> str:
    """A title as the name: an all-caps title (``PARACETAMOL``) gets sentence case."""
    title = " ".join(title.split())
    return title[:1] + title[1:].lower() if title.isupper() else title


def page_offset(pages: Iterable[PageText]) -> tuple[int, bool]:
    """(printed − file page number, found) from the numbers in the running heads and feet."""
    offsets: Counter[int] = Counter()
    numbered = 0
    total = 0
    for page in pages:
        total += 1
        numbers = [int(m.text) for m in page.margin_lines if _PAGE_NUMBER_RE.match(m.text)]
        if numbers:
            numbered += 1
            offsets[numbers[0] - page.number] += 1
    if not offsets:
        return 0, False
    offset, votes = offsets.most_common(1)[0]
    return (offset, True) if votes >= max(2, numbered // 2) or (total == 1 and votes) else (0, False)


class _Structure:
    """Walks the items of every page and builds monographs; fills the report as it goes."""

    def __init__(self, report: ImportReport, offset: int):
        self.report = report
        self.offset = offset
        self.monographs: list[ImportedMonograph] = []
        self.section: ImportedSection | None = None
        self.pending_heading: list[Line] = []
        self.body_size = layout.BODY_SIZE
        self.last_kind = ""
        self.last_heading = ""

    @property
    def current(self) -> ImportedMonograph | None:
        return self.monographs[-1] if self.monographs else None

    def page(self, page: PageText) -> None:
        printed = page.number + self.offset
        sizes = [ln.size for ln in page.lines if not ln.bold]
        if sizes:
            self.body_size = Counter(round(s, 1) for s in sizes).most_common(1)[0][0]
        left_edges = self._left_edges(page)
        for item in page.items:
            if isinstance(item, TableBox):
                self._flush_heading()
                self._table(item, printed)
                continue
            kind = self._kind(item)
            if kind == "heading":
                if self._heading_tail(item):
                    continue
                self.pending_heading.append(item)
                if not self._try_heading(printed) and len(self.pending_heading) >= 3:
                    self._unknown_heading(printed)
                self.last_kind = kind
                continue
            self._flush_heading()
            if kind == "title":
                self._title(item, printed)
            else:
                self._text(item, printed, left_edges)
            self.last_kind = "label" if item.text == layout.QUARANTINE_LABEL else kind
        self._flush_heading()

    def _heading_tail(self, line: Line) -> bool:
        """The second line of a heading that already matched alone ("Tác dụng không mong muốn" / "(ADR)")."""
        section = self.section
        if self.last_kind != "heading" or self.pending_heading or section is None or not section.empty:
            return False
        joined = f"{self.last_heading} {line.text}"
        if section_for_heading(joined) == section.key:
            self.last_heading = joined
            return True
        return False

    @property
    def confirmed(self) -> bool:
        """True once some monograph has a section: text before that is the book's front matter."""
        return any(m.sections for m in self.monographs)

    def _left_edges(self, page: PageText) -> list[tuple[float, float]]:
        """(column start x, column end x) of each column of body text on the page."""
        lines = [ln for ln in page.lines if not ln.bold]
        if not lines:
            return [(0.0, page.width)]
        middle = page.width / 2
        left = [ln.x0 for ln in lines if ln.x1 < middle + 4]
        right = [ln.x0 for ln in lines if ln.x0 > middle - 4]
        if len(left) >= 3 and len(right) >= 3:
            return [(min(left), middle), (min(right), page.width)]
        return [(min(ln.x0 for ln in lines), page.width)]

    def _kind(self, line: Line) -> str:
        if line.bold and line.size >= 1.3 * self.body_size:
            return "title"
        if line.bold and line.size >= 0.97 * self.body_size and line.text != layout.QUARANTINE_LABEL:
            return "heading"
        return "text"

    def _title(self, line: Line, page: int) -> None:
        mono = self.current
        if mono is not None and not mono.sections:
            if self.last_kind == "title":
                mono.name = display_name(f"{mono.name} {line.text}")  # a title set on two lines
                return
            self.monographs.pop()  # a large bold line no section followed: not a monograph
            self._outside(mono.first_page, mono.name, mono.first_page - self.offset)
        self.monographs.append(ImportedMonograph(display_name(line.text), page, page))
        self.section = None

    def _outside(self, page: int, text: str, file_page: int) -> None:
        if not self.confirmed:
            if file_page not in self.report.front_matter_pages:
                self.report.front_matter_pages.append(file_page)
        else:
            self.report.text_outside_monographs.append((page, text))

    def _try_heading(self, page: int) -> bool:
        text = " ".join(ln.text for ln in self.pending_heading)
        key = section_for_heading(text)
        if key is None or self.current is None:
            return False
        self.section = ImportedSection(key, SECTION_TITLES[key], page, page)
        self.current.sections.append(self.section)
        self.current.last_page = max(self.current.last_page, page)
        self.last_heading = text
        self.pending_heading = []
        return True

    def _flush_heading(self) -> None:
        while self.pending_heading:
            self._unknown_heading(self.pending_heading[0].page + self.offset)

    def _unknown_heading(self, page: int) -> None:
        line = self.pending_heading.pop(0)
        if line.text == layout.QUARANTINE_LABEL:
            return
        if self.section is None:
            self._outside(page, line.text, line.page)
            return
        self.report.unknown_headings.append((page, line.text))
        self.section.add_text(line.text, page, "paragraph")
        # the rest may still form a heading ("Thận trọng" after a stray bold line)
        if self.pending_heading and self._try_heading(page):
            return

    def _text(self, line: Line, page: int, edges: list[tuple[float, float]]) -> None:
        if line.text == layout.QUARANTINE_LABEL:
            return
        if self.section is None:
            self._outside(page, line.text, line.page)
            return
        column_left = next((x for x, end in reversed(edges) if line.x0 >= x - 2), edges[0][0])
        indent = line.x0 - column_left
        if indent > (layout.PARAGRAPH_INDENT + layout.LINE_INDENT) / 2 or self.last_kind == "label":
            start = "paragraph"
        elif _CAPTION_RE.match(line.text) and line.size < self.body_size:
            start = "paragraph"  # a table caption, set smaller than the text
        elif indent > layout.LINE_INDENT / 2:
            start = "line"
        else:
            start = "continue"
        self.section.add_text(line.text, page, start)
        assert self.current is not None
        self.current.last_page = max(self.current.last_page, page)

    def _table(self, table: TableBox, page: int) -> None:
        if self.section is None or self.current is None:
            self._outside(page, "a table outside any section", table.page)
            return
        caption, captioned = self._take_caption(page)
        self.section.parts.append(ImportedTable(caption, page, table.bbox, table.rows, captioned))
        self.section.last_page = max(self.section.last_page, page)
        self.current.last_page = max(self.current.last_page, page)
        self.report.tables += 1
        if not captioned:
            self.report.uncaptioned_tables.append((self.current.name, page))

    def _take_caption(self, page: int) -> tuple[str, bool]:
        assert self.section is not None
        last = self.section.parts[-1] if self.section.parts else None
        if isinstance(last, list) and last:
            match = _CAPTION_RE.match(last[-1])
            if match:
                last.pop()
                if not last:
                    self.section.parts.pop()
                return match.group(1).strip(), True
        return f"Bảng ở trang {page}", False

    def finish(self) -> list[ImportedMonograph]:
        self._flush_heading()
        if self.monographs and not self.monographs[-1].sections:
            last = self.monographs.pop()
            self._outside(last.first_page, last.name, last.first_page - self.offset)
        for mono in self.monographs:
            for section in mono.sections:
                if section.empty:
                    self.report.empty_sections.append((mono.name, section.title))
            present = {s.key for s in mono.sections}
            for key in SECTION_ORDER:
                if key not in present and key not in ("tuong_ky", "thong_tin_quy_che"):
                    self.report.missing_sections.append((mono.name, SECTION_TITLES[key]))
        self.report.monographs = len(self.monographs)
        return self.monographs


def structure(pages: Iterable[PageText], report: ImportReport, offset: int,
              on_page: Callable[[PageText], None] | None = None) -> list[ImportedMonograph]:
    """Monographs found in ``pages`` (in reading order); problems go to ``report``."""
    walker = _Structure(report, offset)
    for page in pages:
        report.pages += 1
        if not page.has_text:
            (report.needs_ocr if page.images else report.blank_pages).append(page.number)
        else:
            walker.page(page)
        if on_page is not None:
            on_page(page)
    return walker.finish()


def atc_codes(mono: ImportedMonograph) -> list[str]:
    """ATC codes found in the monograph's ``Mã ATC`` section."""
    section = next((s for s in mono.sections if s.key == "ma_atc"), None)
    if section is None:
        return []
    text = " ".join(" ".join(p) for p in section.parts if isinstance(p, list))
    return list(dict.fromkeys(_ATC_RE.findall(text)))


def aliases(mono: ImportedMonograph) -> list[str]:
    """Other names in parentheses in ``Tên chung quốc tế`` ("Paracetamol (Acetaminophen)")."""
    section = next((s for s in mono.sections if s.key == "ten_chung_quoc_te"), None)
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
