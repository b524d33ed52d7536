"""Parse and validate formulary monographs (Markdown + YAML front matter).

Format: docs/formulary-format.md. Every error names the file and the line, and validation
collects all errors of a folder before failing, so one run shows everything to fix.

Run ``python -m duocthu.corpus DIR`` to validate a folder without indexing it.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import yaml

from duocthu.errors import CorpusError, CorpusValidationError
from duocthu.sections import (
    REQUIRED_SECTIONS,
    SECTION_ORDER,
    SECTION_TITLES,
    section_for_heading,
)
from duocthu.text import fold, normalize

DRUG_ID_RE = re.compile(r"^[a-z0-9]+(?:_[a-z0-9]+)*$")
FRONT_MATTER_KEYS = {"drug_id", "name", "aliases", "atc_codes", "source_pages", "section_pages"}
OPTIONAL_FRONT_MATTER_KEYS = {"section_pages"}
SOURCE_LABEL = "Dược thư (bản demo duocthu)"
_TABLE_OPEN_RE = re.compile(r"^<!--\s*table(\s+quarantined)?\s*:\s*(.+?)\s*-->\s*$", re.IGNORECASE)
_TABLE_CLOSE_RE = re.compile(r"^<!--\s*/table\s*-->\s*$", re.IGNORECASE)
_HEADING_RE = re.compile(r"^##\s+(.+?)\s*#*\s*$")
_NOTE_RE = re.compile(r"^<!--\s*(.*?)\s*-->\s*$")  # inside a table: where it was found, not a row


@dataclass(frozen=True)
class Prose:
    text: str
    line: int


@dataclass(frozen=True)
class Table:
    caption: str
    rows: str
    quarantined: bool
    line: int
    source_note: str = ""  # e.g. "tr. 12, khung 56.0 94.0 539.3 233.2", written by import-pdf

    @property
    def text(self) -> str:
        return f"Bảng: {self.caption}\n{self.rows}"


Segment = Prose | Table


@dataclass(frozen=True)
class SectionText:
    key: str
    title: str
    segments: tuple[Segment, ...]
    line: int

    @property
    def text(self) -> str:
        return "\n\n".join(segment.text for segment in self.segments)

    @property
    def has_quarantined_content(self) -> bool:
        return any(isinstance(s, Table) and s.quarantined for s in self.segments)


@dataclass(frozen=True)
class Monograph:
    drug_id: str
    name: str
    aliases: tuple[str, ...]
    atc_codes: tuple[str, ...]
    source_pages: tuple[int, int]
    sections: tuple[SectionText, ...]
    path: Path
    section_pages: tuple[tuple[str, int, int], ...] = ()  # (section key, first, last) in book order

    @property
    def source_refs(self) -> tuple[str, ...]:
        """The citation of the whole monograph: its pages in the book."""
        return (_citation(self.name, self.source_pages),)

    def section(self, key: str) -> SectionText | None:
        return next((s for s in self.sections if s.key == key), None)

    def pages_of(self, key: str) -> tuple[int, int]:
        """First and last page of a section (the monograph's pages when ``section_pages`` is absent)."""
        return next(((first, last) for k, first, last in self.section_pages if k == key), self.source_pages)

    def section_refs(self, key: str) -> tuple[str, ...]:
        """The citation of one section, e.g. ``"Dược thư (bản demo duocthu), Paracetamol, tr. 245–246"``."""
        return (_citation(self.name, self.pages_of(key)),)


def _citation(name: str, pages: tuple[int, int]) -> str:
    first, last = pages
    where = f"tr. {first}" if first == last else f"tr. {first}–{last}"
    return f"{SOURCE_LABEL}, {name}, {where}"


def parse_monograph(path: Path, text: str | None = None) -> Monograph:
    """Parse one monograph file; raise :class:`CorpusValidationError` listing every problem."""
    raw = path.read_text(encoding="utf-8") if text is None else text
    lines = normalize(raw.replace("\r\n", "\n").replace("\r", "\n")).split("\n")
    errors: list[CorpusError] = []
    meta, body_start = _front_matter(path, lines, errors)
    sections = _sections(path, lines, body_start, errors)
    monograph = None
    if meta is not None:
        monograph = _validate_meta(path, meta, errors, sections)
    if errors or monograph is None:
        raise CorpusValidationError(errors or [CorpusError(path, 1, "unreadable monograph")])
    return monograph


def _front_matter(path: Path, lines: list[str], errors: list[CorpusError]) -> tuple[dict | None, int]:
    if not lines or lines[0].strip() != "---":
        errors.append(CorpusError(path, 1, "missing YAML front matter (the file must start with '---')"))
        return None, 0
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        errors.append(CorpusError(path, 1, "front matter is not closed by a '---' line"))
        return None, len(lines)
    try:
        meta = yaml.safe_load("\n".join(lines[1:end])) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = (mark.line + 2) if mark is not None else 2
        errors.append(CorpusError(path, line, f"malformed front matter: {getattr(exc, 'problem', exc)}"))
        return None, end + 1
    if not isinstance(meta, dict):
        errors.append(CorpusError(path, 2, "front matter must be a mapping of keys to values"))
        return None, end + 1
    meta["_line"] = {key: _key_line(lines[1:end], key) + 1 for key in meta}
    return meta, end + 1


def _key_line(meta_lines: list[str], key: object) -> int:
    for i, line in enumerate(meta_lines, start=1):
        if line.startswith(f"{key}:"):
            return i
    return 1


def _validate_meta(
    path: Path, meta: dict, errors: list[CorpusError], sections: tuple[SectionText, ...]
) -> Monograph | None:
    key_lines: dict[str, int] = meta.pop("_line")
    for key in sorted(set(meta) - FRONT_MATTER_KEYS):
        errors.append(CorpusError(path, key_lines.get(key, 2), f"unknown front-matter key {key!r}"))
    for key in sorted(FRONT_MATTER_KEYS - OPTIONAL_FRONT_MATTER_KEYS - set(meta)):
        errors.append(CorpusError(path, 2, f"missing front-matter key {key!r}"))
    drug_id = meta.get("drug_id")
    if "drug_id" in meta:
        if not isinstance(drug_id, str) or not drug_id.strip():
            errors.append(CorpusError(path, key_lines["drug_id"], "drug_id is empty"))
        elif not DRUG_ID_RE.match(drug_id):
            errors.append(CorpusError(path, key_lines["drug_id"], f"drug_id {drug_id!r} is not an ASCII slug (a-z, 0-9, _)"))
        elif drug_id != path.stem:
            errors.append(CorpusError(path, key_lines["drug_id"], f"drug_id {drug_id!r} does not match the file name {path.name!r}"))
    name = meta.get("name")
    if "name" in meta and (not isinstance(name, str) or not name.strip()):
        errors.append(CorpusError(path, key_lines["name"], "name is empty"))
    aliases = _string_list(path, meta, "aliases", key_lines, errors)
    atc_codes = _string_list(path, meta, "atc_codes", key_lines, errors)
    pages = meta.get("source_pages")
    source_pages: tuple[int, int] = (0, 0)
    if "source_pages" in meta:
        if (
            isinstance(pages, list) and len(pages) == 2
            and all(isinstance(p, int) and not isinstance(p, bool) and p > 0 for p in pages)
            and pages[0] <= pages[1]
        ):
            source_pages = (pages[0], pages[1])
        else:
            errors.append(CorpusError(path, key_lines["source_pages"], "source_pages must be [first, last] page numbers"))
    section_pages: tuple[tuple[str, int, int], ...] = ()
    if "section_pages" in meta:
        section_pages = _section_pages(path, meta["section_pages"], key_lines["section_pages"], sections,
                                       source_pages, errors)
    if errors:
        return None
    return Monograph(
        drug_id=str(drug_id), name=str(name).strip(), aliases=aliases, atc_codes=atc_codes,
        source_pages=source_pages, sections=sections, path=path, section_pages=section_pages,
    )


def _page_pair(value: object) -> tuple[int, int] | None:
    if (
        isinstance(value, list) and len(value) == 2
        and all(isinstance(p, int) and not isinstance(p, bool) and p > 0 for p in value)
        and value[0] <= value[1]
    ):
        return value[0], value[1]
    return None


def _section_pages(
    path: Path, value: object, line: int, sections: tuple[SectionText, ...], source_pages: tuple[int, int],
    errors: list[CorpusError],
) -> tuple[tuple[str, int, int], ...]:
    """Validate ``section_pages: {key: [first, last], …}``: every section, known keys, within source_pages."""
    if not isinstance(value, dict):
        errors.append(CorpusError(path, line, "section_pages must map section keys to [first, last] page numbers"))
        return ()
    present = [s.key for s in sections]
    result: list[tuple[str, int, int]] = []
    for key, pages in value.items():
        pair = _page_pair(pages)
        if key not in SECTION_TITLES:
            errors.append(CorpusError(path, line, f"section_pages names an unknown section {key!r}"))
        elif key not in present:
            errors.append(CorpusError(path, line, f"section_pages names {key!r}, a section this monograph lacks"))
        elif pair is None:
            errors.append(CorpusError(path, line, f"section_pages[{key!r}] must be [first, last] page numbers"))
        elif source_pages != (0, 0) and not source_pages[0] <= pair[0] <= pair[1] <= source_pages[1]:
            errors.append(CorpusError(path, line, f"section_pages[{key!r}] {list(pair)} lies outside source_pages {list(source_pages)}"))
        else:
            result.append((key, *pair))
    for key in present:
        if key not in value:
            errors.append(CorpusError(path, line, f"section_pages lacks the section {key!r}"))
    result.sort(key=lambda entry: present.index(entry[0]))
    firsts = [first for _, first, _ in result]
    if firsts != sorted(firsts):
        errors.append(CorpusError(path, line, "section_pages go backwards: sections are in book order"))
    return tuple(result)


def _string_list(path: Path, meta: dict, key: str, key_lines: dict[str, int], errors: list[CorpusError]) -> tuple[str, ...]:
    value = meta.get(key, [])
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        errors.append(CorpusError(path, key_lines.get(key, 2), f"{key} must be a list of non-empty strings"))
        return ()
    return tuple(v.strip() for v in value)


def _sections(path: Path, lines: list[str], start: int, errors: list[CorpusError]) -> tuple[SectionText, ...]:
    found: list[SectionText] = []
    current: tuple[str, int] | None = None
    body: list[tuple[int, str]] = []

    def close() -> None:
        if current is None:
            return
        key, line = current
        segments = _segments(path, body, errors)
        if not segments:
            errors.append(CorpusError(path, line, f"section {SECTION_TITLES[key]!r} is empty"))
        found.append(SectionText(key, SECTION_TITLES[key], tuple(segments), line))

    skipping_unknown = False
    for number, line in enumerate(lines[start:], start=start + 1):
        heading = _HEADING_RE.match(line)
        if heading and not line.startswith("###"):
            close()
            body = []
            key = section_for_heading(heading.group(1))
            skipping_unknown = key is None
            current = None if key is None else (key, number)
            if key is None:
                errors.append(CorpusError(path, number, f"unknown section heading {heading.group(1)!r}"))
            continue
        if current is None:
            # Lines under an unknown heading are covered by that heading's error.
            if line.strip() and not skipping_unknown:
                errors.append(CorpusError(path, number, "text outside any '##' section"))
            continue
        body.append((number, line))
    close()

    seen: dict[str, int] = {}
    for section in found:
        if section.key in seen:
            errors.append(CorpusError(path, section.line, f"duplicate section {section.title!r} (first at line {seen[section.key]})"))
        seen.setdefault(section.key, section.line)
    order = [s.key for s in found]
    if order != sorted(order, key=SECTION_ORDER.index):
        errors.append(CorpusError(path, found[0].line if found else 1, "sections are not in book order"))
    for key in REQUIRED_SECTIONS:
        if key not in seen:
            errors.append(CorpusError(path, 1, f"missing section {SECTION_TITLES[key]!r}"))
    return tuple(found)


def _segments(path: Path, body: list[tuple[int, str]], errors: list[CorpusError]) -> list[Segment]:
    segments: list[Segment] = []
    paragraph: list[tuple[int, str]] = []
    table: tuple[str, bool, int, list[str], list[str]] | None = None  # caption, quarantined, line, rows, notes

    def flush_paragraph() -> None:
        text = "\n".join(line for _, line in paragraph).strip()
        if text:
            segments.append(Prose(text, paragraph[0][0]))
        paragraph.clear()

    for number, line in body:
        if table is not None:
            note = _NOTE_RE.match(line.strip())
            if _TABLE_CLOSE_RE.match(line.strip()):
                caption, quarantined, start, rows, notes = table
                rows_text = "\n".join(r for r in rows if r.strip()).strip()
                if not rows_text:
                    errors.append(CorpusError(path, start, f"table {caption!r} has no rows"))
                else:
                    segments.append(Table(caption, rows_text, quarantined, start, "; ".join(notes)))
                table = None
            elif note:
                table[4].append(note.group(1))
            else:
                table[3].append(line)
            continue
        opened = _TABLE_OPEN_RE.match(line.strip())
        if opened:
            flush_paragraph()
            table = (opened.group(2), bool(opened.group(1)), number, [], [])
        elif _TABLE_CLOSE_RE.match(line.strip()):
            errors.append(CorpusError(path, number, "'<!-- /table -->' without an opening table marker"))
        elif not line.strip():
            flush_paragraph()
        else:
            paragraph.append((number, line.rstrip()))
    if table is not None:
        errors.append(CorpusError(path, table[2], f"table {table[0]!r} is not closed by '<!-- /table -->'"))
    flush_paragraph()
    return segments


def load_formulary(source: Path) -> list[Monograph]:
    """Parse every ``*.md`` under ``source``; fail with every error of every file."""
    if not source.is_dir():
        raise CorpusValidationError([CorpusError(source, 0, "formulary folder does not exist")])
    files = sorted(p for p in source.glob("*.md") if p.name.lower() != "readme.md")
    if not files:
        raise CorpusValidationError([CorpusError(source, 0, "no monograph (*.md) files found")])
    monographs: list[Monograph] = []
    errors: list[CorpusError] = []
    for path in files:
        try:
            monographs.append(parse_monograph(path))
        except CorpusValidationError as exc:
            errors.extend(exc.errors)
    errors.extend(_cross_file_errors(monographs))
    if errors:
        raise CorpusValidationError(errors)
    return monographs


def _cross_file_errors(monographs: Iterable[Monograph]) -> list[CorpusError]:
    errors: list[CorpusError] = []
    ids: dict[str, Path] = {}
    names: dict[str, tuple[str, Path]] = {}
    for mono in monographs:
        if mono.drug_id in ids:
            errors.append(CorpusError(mono.path, 2, f"duplicate drug_id {mono.drug_id!r} (also in {ids[mono.drug_id].name})"))
        ids.setdefault(mono.drug_id, mono.path)
        for label in (mono.name, *mono.aliases):
            key = fold(label).strip()
            other = names.get(key)
            if other is not None and other[0] != mono.drug_id:
                errors.append(CorpusError(mono.path, 2, f"name or alias {label!r} also names {other[0]!r} ({other[1].name})"))
            names.setdefault(key, (mono.drug_id, mono.path))
    return errors


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    source = Path(args[0] if args else "data/formulary")
    try:
        monographs = load_formulary(source)
    except CorpusValidationError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(f"{len(monographs)} monographs OK in {source}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
