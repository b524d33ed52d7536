"""The report of an import: what a person must look at before the formulary is indexed."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ImportReport:
    """What a person must look at after an import, and where every line of the book went."""

    pages: int = 0
    monographs: int = 0
    tables: int = 0
    page_offset: int = 0
    printed_numbers_found: bool = False
    front_matter_pages: list[int] = field(default_factory=list)  # file pages
    back_matter_pages: list[int] = field(default_factory=list)  # file pages
    needs_ocr: list[int] = field(default_factory=list)
    blank_pages: list[int] = field(default_factory=list)
    line_counts: dict[str, int] = field(default_factory=dict)  # where the lines went: bucket → lines
    unknown_headings: list[tuple[int, str]] = field(default_factory=list)  # (page, text)
    near_miss_headings: list[tuple[int, str, str, float]] = field(default_factory=list)  # (page, text, best, score)
    headings_outside: list[tuple[int, str]] = field(default_factory=list)  # section headings before any title
    approximate_headings: list[tuple[int, str, str, float]] = field(default_factory=list)  # taken, score < 100
    empty_sections: list[tuple[str, str]] = field(default_factory=list)  # (drug, section title)
    missing_sections: list[tuple[str, str]] = field(default_factory=list)
    repeated_sections: list[tuple[int, str, str]] = field(default_factory=list)  # (page, drug, section title)
    uncaptioned_tables: list[tuple[str, int]] = field(default_factory=list)
    joined_tables: list[tuple[str, int, int]] = field(default_factory=list)  # (drug, first page, page joined)
    not_placed: list[tuple[int, str]] = field(default_factory=list)  # (page, text): in no monograph
    continued_after_title: list[tuple[int, str, str]] = field(default_factory=list)  # (page, drug, next drug)
    invalid_files: list[str] = field(default_factory=list)
    duplicate_names: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not (self.needs_ocr or self.unknown_headings or self.near_miss_headings or self.headings_outside
                    or self.empty_sections
                    or self.missing_sections or self.repeated_sections or self.uncaptioned_tables
                    or self.not_placed or self.continued_after_title or self.invalid_files
                    or self.duplicate_names)

    @property
    def exit_status(self) -> int:
        """0: imported, nothing to look at; 1: imported with warnings (see the report); 2: failed."""
        if self.invalid_files or not self.monographs:
            return 2
        return 0 if self.clean else 1

    def render(self) -> str:
        """The report as plain text, most urgent first."""
        out = [f"{self.pages} pages read, {self.monographs} monographs, {self.tables} tables "
               f"(all quarantined: requires_visual_check until compared with the printed page)"]
        if self.printed_numbers_found:
            out.append(f"page numbers: the book's printed numbers (printed = file page {self.page_offset:+d})")
        else:
            out.append("page numbers: no printed page numbers found in running heads; the file's page numbers are used")
        if self.line_counts:
            out.append("lines: " + ", ".join(f"{n} {bucket}" for bucket, n in self.line_counts.items()))

        def listing(title: str, rows: list[str]) -> None:
            if rows:
                out.append(f"{title} ({len(rows)}):")
                out.extend(f"  - {row}" for row in rows[:200])
                if len(rows) > 200:
                    out.append(f"  … and {len(rows) - 200} more")

        listing("files that do not validate (fix them before indexing)", self.invalid_files)
        listing("NEEDS OCR — pages with images but no text layer, not imported", [f"file page {p}" for p in self.needs_ocr])
        listing("text that goes on after the next drug's title (check which drug it belongs to)",
                [f"tr. {p}: {a} → read into {b}" for p, a, b in self.continued_after_title])
        listing("not placed — text in no monograph (not imported)", [f"tr. {p}: {t[:80]!r}" for p, t in self.not_placed])
        listing("section headings outside any monograph (no drug title recognised before them)",
                [f"tr. {p}: {t!r}" for p, t in self.headings_outside])
        listing("near-miss headings (kept as text of the section above; best catalogue match and score)",
                [f"tr. {p}: {t!r} ~ {best!r} ({score:.0f})" for p, t, best, score in self.near_miss_headings])
        listing("unknown headings (kept as text of the section above)", [f"tr. {p}: {t!r}" for p, t in self.unknown_headings])
        listing("sections printed twice in one drug (joined)", [f"tr. {p}: {d}: {s}" for p, d, s in self.repeated_sections])
        listing("empty sections", [f"{d}: {s}" for d, s in self.empty_sections])
        listing("missing required sections", [f"{d}: {s}" for d, s in self.missing_sections])
        listing("tables without a 'Bảng …' caption (caption made up from the page)", [f"{d}, tr. {p}" for d, p in self.uncaptioned_tables])
        listing("duplicate monograph names (later ones not written)", self.duplicate_names)
        listing("blank pages (no text, no image)", [f"file page {p}" for p in self.blank_pages])
        listing("headings read by a close match (taken)",
                [f"tr. {p}: {t!r} → {best!r} ({score:.0f})" for p, t, best, score in self.approximate_headings])
        listing("tables continued over a page or column (joined, still quarantined)",
                [f"{d}: tr. {a} + tr. {b}" for d, a, b in self.joined_tables])
        if self.front_matter_pages:
            out.append(f"front matter before the first monograph, not imported: file pages "
                       f"{self.front_matter_pages[0]}–{self.front_matter_pages[-1]}")
        if self.back_matter_pages:
            out.append(f"back matter after the last monograph, not imported: file pages "
                       f"{self.back_matter_pages[0]}–{self.back_matter_pages[-1]}")
        out.append("nothing needs a person's attention" if self.clean else "see the items above")
        return "\n".join(out)
