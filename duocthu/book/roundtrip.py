"""Compare a formulary with what ``import-pdf`` recovered from its typeset book.

The round trip is the importer's test: build the book from ``data/formulary/``, import it, and
every monograph and section must come back, ≥ 99 % of sentences verbatim (whitespace
normalised), every table as a quarantined block with its caption, and the same pages.
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

    @property
    def sentence_recall(self) -> float:
        return self.sentences_found / self.sentences if self.sentences else 1.0

    def summary(self) -> str:
        """One line of figures, then every difference (at most 20 of each kind)."""
        lines = [
            f"{self.monographs} monographs compared; sentences {self.sentences_found}/{self.sentences} "
            f"({100 * self.sentence_recall:.2f} %); tables {self.tables_found}/{self.tables} quarantined; "
            f"{len(self.page_differences)} page differences"
        ]
        for title, rows in (("missing monographs", self.missing_monographs), ("extra monographs", self.extra_monographs),
                            ("missing sections", self.missing_sections), ("lost sentences", self.lost_sentences),
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
    return result


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
