"""Write what :mod:`duocthu.book.importer` found as a formulary folder, all or nothing.

The files go to a temporary folder beside ``--out`` and move into place only when every page was
read; a broken or encrypted PDF, or a crash half-way, leaves nothing behind. The folder then
holds one ``<drug_id>.md`` per monograph and ``import-report.txt`` (what a person must look at).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

from duocthu.book.importer import (
    ImportedMonograph,
    ImportedTable,
    aliases,
    atc_codes,
    page_offset,
    structure,
)
from duocthu.book.pdftext import PageText, PdfReadError, open_pdf, read_pages
from duocthu.book.report import ImportReport
from duocthu.corpus import load_formulary
from duocthu.errors import CorpusValidationError, DuocthuError
from duocthu.text import fold

REPORT_NAME = "import-report.txt"
Progress = Callable[[int], Callable[[int], None]]


@dataclass(frozen=True)
class ImportResult:
    """The folder written, the monographs in it and the report of what to check."""

    out: Path
    files: tuple[Path, ...]
    report: ImportReport


def tqdm_progress(total: int) -> Callable[[int], None]:
    from tqdm import tqdm

    bar = tqdm(total=total, desc="import-pdf", unit="page", file=sys.stderr, leave=True)

    def advance(n: int) -> None:
        bar.update(n)
        if bar.n >= total:
            bar.close()

    return advance


def silent_progress(_total: int) -> Callable[[int], None]:
    return lambda _n: None


def table_markdown(table: ImportedTable) -> list[str]:
    """A table as a quarantined block, its page and box (pt, origin top-left) in a note."""
    where = "; ".join(f"tr. {page}, khung {x0:.1f} {top:.1f} {x1:.1f} {bottom:.1f}"
                      for page, (x0, top, x1, bottom) in [(table.page, table.bbox), *table.continued])
    lines = [f"<!-- table quarantined: {table.caption} -->", f"<!-- nguồn: {where} (pt, gốc trên-trái) -->"]
    for i, row in enumerate(table.rows):
        lines.append("| " + " | ".join(cell.replace("|", "/") for cell in row) + " |")
        if i == 0:
            lines.append("|" + "---|" * len(row))
    lines.append("<!-- /table -->")
    return lines


def monograph_markdown(mono: ImportedMonograph, alias_list: list[str]) -> str:
    """One monograph in the formulary format (front matter, then ``##`` sections)."""
    front = {
        "drug_id": mono.drug_id,
        "name": mono.name,
        "aliases": alias_list,
        "atc_codes": atc_codes(mono),
        "source_pages": [mono.first_page, mono.last_page],
        "section_pages": {s.key: [s.first_page, s.last_page] for s in mono.sections},
    }
    out = ["---", yaml.safe_dump(front, allow_unicode=True, sort_keys=False, default_flow_style=None,
                                 width=10_000).rstrip("\n"), "---", ""]
    for section in mono.sections:
        out.append(f"## {section.title}")
        for i, part in enumerate(section.parts):
            if i:
                out.append("")
            out += table_markdown(part) if isinstance(part, ImportedTable) else list(part)
        out.append("")
    return "\n".join(out)


def _aliases_without_collisions(monographs: list[ImportedMonograph]) -> dict[str, list[str]]:
    taken = {fold(m.name).strip() for m in monographs}
    result: dict[str, list[str]] = {}
    for mono in monographs:
        kept = []
        for alias in aliases(mono):
            key = fold(alias).strip()
            if key not in taken:
                taken.add(key)
                kept.append(alias)
        result[mono.drug_id] = kept
    return result


def read_book(pdf: Path, progress: Progress = silent_progress) -> tuple[list[PageText], ImportReport]:
    """Every page of ``pdf`` read (with a progress bar), or :class:`PdfReadError`."""
    document = open_pdf(pdf)
    try:
        try:
            pages = read_pages(document, advance=progress(len(document)))
        except PdfReadError:
            raise
        except Exception as exc:  # pdfium raises on a damaged page object
            raise PdfReadError(f"{pdf}: a page cannot be read ({exc})") from exc
    finally:
        document.close()
    return pages, ImportReport()


def import_pdf(pdf: Path, out: Path, force: bool = False, progress: Progress = tqdm_progress) -> ImportResult:
    """Import ``pdf`` into the formulary folder ``out``; raise before writing anything on a bad PDF.

    ``out`` must not exist or be empty, unless ``force`` (then it is replaced as a whole).
    """
    if out.exists() and any(out.iterdir()) and not force:
        raise DuocthuError(f"{out} is not empty: choose a new folder or pass --force to replace it")
    pages, report = read_book(pdf, progress)
    offset, found = page_offset(pages)
    report.page_offset, report.printed_numbers_found = offset, found
    monographs = structure(pages, report, offset)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.import-", dir=out.parent))
    staging.chmod(0o755)  # mkdtemp makes it private; the formulary folder is an ordinary one
    try:
        files = _write(monographs, staging, report)
        _validate(staging, report)
        (staging / REPORT_NAME).write_text(report.render() + "\n", encoding="utf-8")
        if out.exists():
            shutil.rmtree(out)
        staging.rename(out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return ImportResult(out, tuple(out / f.name for f in files), report)


def _write(monographs: list[ImportedMonograph], folder: Path, report: ImportReport) -> list[Path]:
    alias_map = _aliases_without_collisions(monographs)
    written: list[Path] = []
    seen: set[str] = set()
    for mono in monographs:
        if mono.drug_id in seen:
            report.duplicate_names.append(f"{mono.name} (tr. {mono.first_page})")
            continue
        seen.add(mono.drug_id)
        path = folder / f"{mono.drug_id}.md"
        path.write_text(monograph_markdown(mono, alias_map[mono.drug_id]), encoding="utf-8")
        written.append(path)
    return written


def _validate(folder: Path, report: ImportReport) -> None:
    if not any(folder.glob("*.md")):
        report.invalid_files.append(
            "no monograph was found: no drug title was recognised right before a section heading "
            "(the section headings and near misses found, if any, are listed in this report)")
        return
    try:
        load_formulary(folder)
    except CorpusValidationError as exc:
        report.invalid_files.extend(f"{e.path.name}:{e.line}: {e.message}" for e in exc.errors)
