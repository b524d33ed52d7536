"""What ``import-pdf`` builds from a book: monographs, sections and tables, before they become files."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from duocthu.book.pagetypes import Box
from duocthu.text import fold, normalize

_ATC_RE = re.compile(r"\b[A-Z]\d{2}[A-Z]{2}\d{2}\b")
_NAME_STOPWORDS = {"va"}


@dataclass
class ImportedTable:
    """A table found in the book, quarantined until a person compares it with the printed page."""

    caption: str
    page: int
    bbox: Box
    rows: tuple[tuple[str, ...], ...]
    captioned: bool = True
    widths: tuple[float, ...] = ()
    continued: list[tuple[int, Box]] = field(default_factory=list)  # (page, box) of each part after the first
    open_end: bool = False  # its last part ends in a row the page or column end cut: the next part goes on with it

    def join(self, rows: tuple[tuple[str, ...], ...], page: int, bbox: Box, *, cut_above: bool,
             cut_below: bool) -> None:
        """Add the next part's rows (its repeated header already dropped); a row cut in two by the page end
        (``open_end`` here, or ``cut_above`` there) is one row again, its cells joined."""
        if rows and self.rows and (self.open_end or cut_above):
            joined = tuple(_join_cell(a, b) for a, b in zip(self.rows[-1], rows[0], strict=True))
            rows = (joined, *rows[1:])
            self.rows = self.rows[:-1]
        self.rows = self.rows + rows
        self.continued.append((page, bbox))
        self.open_end = cut_below


def _join_cell(first: str, rest: str) -> str:
    """The two pieces of a cell cut by the page end; no space after a dash or slash at the cut ("2–" / "3 mg")."""
    if not first or not rest:
        return first or rest
    return f"{first}{rest}" if first.endswith(("–", "—", "/")) else f"{first} {rest}"


@dataclass
class ImportedSection:
    """One section of a monograph: its paragraphs (lists of hard lines) and tables."""

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
    def open_paragraph(self) -> list[str]:
        """The hard lines of the paragraph the next printed line may go on with (none after a table)."""
        current = self.parts[-1] if self.parts else None
        return current if isinstance(current, list) else []

    @property
    def empty(self) -> bool:
        return not self.parts


@dataclass
class ImportedMonograph:
    """One monograph: its name, pages and sections."""

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
