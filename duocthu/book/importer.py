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

from duocthu.book.classify import Book
from duocthu.book.imported import (
    ImportedMonograph,
    ImportedSection,
    ImportedTable,
    aliases,
    atc_codes,
    display_name,
    drug_id_for,
)
from duocthu.book.pagetypes import PageText
from duocthu.book.placer import Placer
from duocthu.book.report import ImportReport
from duocthu.book.running import page_number_text
from duocthu.sections import OPTIONAL_SECTIONS, SECTION_ORDER, SECTION_TITLES

__all__ = ["ImportedMonograph", "ImportedSection", "ImportedTable", "aliases", "atc_codes", "display_name",
           "drug_id_for", "page_offset", "printed_number", "structure"]

_NUMBER_RE = re.compile(r"\d{1,4}")


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
    monographs = Placer(Book(readable, offset), report).place()
    for mono in monographs:
        for section in mono.sections:
            if section.empty:
                report.empty_sections.append((mono.name, section.title))
        present = {s.key for s in mono.sections}
        report.missing_sections += [(mono.name, SECTION_TITLES[k]) for k in SECTION_ORDER
                                    if k not in present and k not in OPTIONAL_SECTIONS]
    report.monographs = len(monographs)
    return monographs
