"""The report of an import: what a person must look at before the formulary is indexed."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ImportReport:
    """What a person must look at after an import."""

    pages: int = 0
    monographs: int = 0
    tables: int = 0
    page_offset: int = 0
    printed_numbers_found: bool = False
    front_matter_pages: list[int] = field(default_factory=list)
    needs_ocr: list[int] = field(default_factory=list)
    blank_pages: list[int] = field(default_factory=list)
    unknown_headings: list[tuple[int, str]] = field(default_factory=list)  # (page, text)
    empty_sections: list[tuple[str, str]] = field(default_factory=list)  # (drug, section title)
    missing_sections: list[tuple[str, str]] = field(default_factory=list)
    uncaptioned_tables: list[tuple[str, int]] = field(default_factory=list)
    text_outside_monographs: list[tuple[int, str]] = field(default_factory=list)
    invalid_files: list[str] = field(default_factory=list)
    duplicate_names: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not (self.needs_ocr or self.unknown_headings or self.empty_sections or self.missing_sections
                    or self.uncaptioned_tables or self.text_outside_monographs or self.invalid_files
                    or self.duplicate_names)

    def render(self) -> str:
        """The report as plain text, most urgent first."""
        out = [f"{self.pages} pages read, {self.monographs} monographs, {self.tables} tables "
               f"(all quarantined: requires_visual_check until compared with the printed page)"]
        if self.printed_numbers_found:
            out.append(f"page numbers: the book's printed numbers (printed = file page {self.page_offset:+d})")
        else:
            out.append("page numbers: no printed page numbers found in running heads; the file's page numbers are used")

        def listing(title: str, rows: list[str]) -> None:
            if rows:
                out.append(f"{title} ({len(rows)}):")
                out.extend(f"  - {row}" for row in rows[:200])
                if len(rows) > 200:
                    out.append(f"  … and {len(rows) - 200} more")

        listing("NEEDS OCR — pages with images but no text layer, not imported", [f"file page {p}" for p in self.needs_ocr])
        listing("blank pages (no text, no image)", [f"file page {p}" for p in self.blank_pages])
        listing("unknown headings (kept as text of the section above)", [f"tr. {p}: {t!r}" for p, t in self.unknown_headings])
        listing("empty sections", [f"{d}: {s}" for d, s in self.empty_sections])
        listing("missing required sections", [f"{d}: {s}" for d, s in self.missing_sections])
        listing("tables without a 'Bảng: …' caption (caption made up from the page)", [f"{d}, tr. {p}" for d, p in self.uncaptioned_tables])
        listing("text outside any monograph or section (not imported)", [f"tr. {p}: {t[:80]!r}" for p, t in self.text_outside_monographs])
        listing("duplicate monograph names (later ones not written)", self.duplicate_names)
        listing("files that do not validate (fix them before indexing)", self.invalid_files)
        if self.front_matter_pages:
            out.append(f"front matter before the first monograph, not imported: file pages "
                       f"{self.front_matter_pages[0]}–{self.front_matter_pages[-1]}")
        out.append("nothing needs a person's attention" if self.clean else "see the items above")
        return "\n".join(out)
