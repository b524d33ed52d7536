"""Compare a formulary with what ``import-pdf`` recovered from its typeset book.

The round trip is the importer's test: build the book from ``data/formulary/``, import it, and
every monograph and section must come back, ≥ 99 % of sentences verbatim (whitespace
normalised), every table as a quarantined block with its caption, and the same pages. The same
comparison measures the foreign layouts (``tests/fixtures/layouts/``): there it also counts the
source's line starts (paragraph and hard line breaks) kept, the breaks the import added, and the
sentences that landed in another drug's monograph.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from duocthu.chunker import split_sentences
from duocthu.corpus import Monograph, Prose, Table
from duocthu.text import fold


@dataclass
class RoundTrip:
    """The comparison, with every difference named."""

    monographs: int = 0
    sentences: int = 0
    sentences_found: int = 0
    tables: int = 0
    tables_found: int = 0
    missing_monographs: list[str] = field(default_factory=list)
    extra_monographs: list[str] = field(default_factory=list)
    missing_sections: list[str] = field(default_factory=list)
    lost_sentences: list[str] = field(default_factory=list)
    table_problems: list[str] = field(default_factory=list)
    page_differences: list[str] = field(default_factory=list)
    line_starts: int = 0  # the source's line breaks inside a section (paragraph or hard line)
    line_starts_found: int = 0
    extra_line_starts: list[str] = field(default_factory=list)  # breaks the source does not have
    missed_line_starts: list[str] = field(default_factory=list)  # the source's breaks the import lost
    cross_drug_moves: list[str] = field(default_factory=list)  # sentences found in another drug only

    @property
    def sentence_recall(self) -> float:
        return self.sentences_found / self.sentences if self.sentences else 1.0

    @property
    def line_start_recall(self) -> float:
        return self.line_starts_found / self.line_starts if self.line_starts else 1.0

    def summary(self) -> str:
        """One line of figures, then every difference (at most 20 of each kind)."""
        lines = [
            f"{self.monographs} monographs compared; sentences {self.sentences_found}/{self.sentences} "
            f"({100 * self.sentence_recall:.2f} %); tables {self.tables_found}/{self.tables} quarantined; "
            f"{len(self.page_differences)} page differences; line starts {self.line_starts_found}/{self.line_starts} "
            f"({100 * self.line_start_recall:.2f} %), {len(self.extra_line_starts)} added; "
            f"{len(self.cross_drug_moves)} sentences moved to another drug"
        ]
        for title, rows in (("missing monographs", self.missing_monographs), ("extra monographs", self.extra_monographs),
                            ("missing sections", self.missing_sections), ("lost sentences", self.lost_sentences),
                            ("moved to another drug", self.cross_drug_moves), ("added line starts", self.extra_line_starts),
                            ("lost line starts", self.missed_line_starts),
                            ("tables", self.table_problems), ("pages", self.page_differences)):
            if rows:
                lines.append(f"{title} ({len(rows)}): " + " | ".join(rows[:20]))
        return "\n".join(lines)


def _squash(text: str) -> str:
    return " ".join(text.split())


def compare(original: Sequence[Monograph], imported: Sequence[Monograph]) -> RoundTrip:
    """How much of ``original`` the ``imported`` monographs recover (matched by name)."""
    result = RoundTrip()
    by_name = {fold(m.name): m for m in imported}
    wanted = {fold(m.name) for m in original}
    result.extra_monographs = sorted(m.name for m in imported if fold(m.name) not in wanted)
    for mono in original:
        other = by_name.get(fold(mono.name))
        if other is None:
            result.missing_monographs.append(mono.name)
            for section in mono.sections:
                result.missing_sections.append(f"{mono.drug_id}/{section.key}")
                _compare_section(result, mono.drug_id, section.segments, ())
                _compare_lines(result, mono.drug_id, section.segments, ())
            continue
        result.monographs += 1
        if other.source_pages != mono.source_pages:
            result.page_differences.append(f"{mono.drug_id}: {mono.source_pages} ≠ {other.source_pages}")
        for section in mono.sections:
            theirs = other.section(section.key)
            if theirs is None:
                result.missing_sections.append(f"{mono.drug_id}/{section.key}")
                continue
            if other.pages_of(section.key) != mono.pages_of(section.key):
                result.page_differences.append(
                    f"{mono.drug_id}/{section.key}: {mono.pages_of(section.key)} ≠ {other.pages_of(section.key)}")
            _compare_section(result, mono.drug_id, section.segments, theirs.segments)
            _compare_lines(result, mono.drug_id, section.segments, theirs.segments)
    _find_moves(result, original, imported)
    return result


def _lines(segments: Sequence[Prose | Table]) -> list[str]:
    return [_squash(line) for s in segments if isinstance(s, Prose) for line in s.text.split("\n") if line.strip()]


def _compare_lines(result: RoundTrip, drug_id: str, ours: Sequence[Prose | Table], theirs: Sequence[Prose | Table]) -> None:
    """Count the source's line starts (after a section's first line) that begin a line of the import too."""
    mine, found = _lines(ours), _lines(theirs)
    for line in mine[1:]:
        result.line_starts += 1
        key = line[:50]
        if any(other.startswith(key) for other in found):
            result.line_starts_found += 1
        else:
            result.missed_line_starts.append(f"{drug_id}: {key}")
    for line in found[1:]:
        if not any(line.startswith(source[:50]) or source.startswith(line[:50]) for source in mine):
            result.extra_line_starts.append(f"{drug_id}: {line[:50]}")


def _find_moves(result: RoundTrip, original: Sequence[Monograph], imported: Sequence[Monograph]) -> None:
    """Lost sentences that turn up in another drug's monograph: text read into the wrong drug."""
    lost: dict[str, list[str]] = {}
    for entry in result.lost_sentences:
        drug_id, _, start = entry.partition(": ")
        lost.setdefault(drug_id, []).append(start)
    if not lost:
        return
    texts = {m.drug_id: _squash(" ".join(s.text for s in m.sections)) for m in imported}
    names = {fold(m.name): m.drug_id for m in imported}
    for mono in original:
        mine = names.get(fold(mono.name))
        for start in lost.get(mono.drug_id, []):
            hosts = [d for d, text in texts.items() if d != mine and _squash(start) in text]
            if hosts:
                result.cross_drug_moves.append(f"{mono.drug_id} → {hosts[0]}: {start}")


def _compare_section(result: RoundTrip, drug_id: str, ours: Sequence[Prose | Table], theirs: Sequence[Prose | Table]) -> None:
    prose = _squash(" ".join(s.text for s in theirs if isinstance(s, Prose)))
    tables = [s for s in theirs if isinstance(s, Table)]
    for segment in ours:
        if isinstance(segment, Prose):
            for sentence in split_sentences(segment.text):
                result.sentences += 1
                if _squash(sentence) in prose:
                    result.sentences_found += 1
                else:
                    result.lost_sentences.append(f"{drug_id}: {sentence[:70]}")
            continue
        result.tables += 1
        match = next((t for t in tables if _squash(t.caption) == _squash(segment.caption)), None)
        if match is None:
            result.table_problems.append(f"{drug_id}: table {segment.caption!r} not found")
        elif not match.quarantined:
            result.table_problems.append(f"{drug_id}: table {segment.caption!r} not quarantined")
        elif _cells(match.rows) != _cells(segment.rows):
            result.table_problems.append(f"{drug_id}: table {segment.caption!r} cells differ")
        else:
            result.tables_found += 1


def _cells(rows: str) -> list[list[str]]:
    cells = []
    for line in rows.split("\n"):
        parts = [_squash(c) for c in line.strip().strip("|").split("|")]
        if parts and not all(set(c) <= set("-: ") for c in parts):
            cells.append(parts)
    return cells
