"""Loud mismatches: what an evaluation set names that the formulary in use lacks.

A set written for one book and run on another reports near-zero figures and no warning. This
module lists, before anything is measured, the labelled **drugs** the formulary does not have,
the **sections** it does not have (for that drug, or at all), and the **conditions** it cannot
show: a ``safety_shows`` phrase absent from that drug's monograph, a reverse-lookup condition
whose labelled drugs are all absent. Over a set whose labelled drugs are mostly absent (more than
half) no figure is reported unless the caller allows it (``--allow-missing``, ``ALLOW_MISSING``).

Every set format of ``data/eval/`` is read: section routing, pooling and indication rows, agent
and safety scenarios, and the flat labelled turns of ``duocthu eval``. ``not_drugs`` labels are
drugs meant to be absent and are never reported.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from duocthu.errors import DuocthuError
from duocthu.evaluation.checks import folded
from duocthu.evaluation.labelled import LabelledTurn
from duocthu.sections import SECTION_ORDER

if TYPE_CHECKING:
    from duocthu.qdrant_store import QdrantStore

MOSTLY_MISSING_SHARE = 0.5
SHOWN_PER_LIST = 25


class MostlyMissingError(DuocthuError):
    """Most labelled drugs are not in the formulary: a figure over this set would mean nothing."""


@dataclass(frozen=True)
class FormularyContents:
    """Per drug of a formulary: the sections it has and its whole text (lower-cased)."""

    sections: Mapping[str, frozenset[str]]
    lowered_text: Mapping[str, str]
    _folded: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_folder(cls, source: Path | str) -> FormularyContents:
        """Read a formulary folder (parsing only; nothing is embedded)."""
        from duocthu.corpus import load_formulary

        monographs = load_formulary(Path(source))
        return cls(
            {m.drug_id: frozenset(s.key for s in m.sections if s.text.strip()) for m in monographs},
            {m.drug_id: "\n".join(s.text for s in m.sections).lower() for m in monographs},
        )

    @classmethod
    def from_store(cls, store: QdrantStore) -> FormularyContents:
        """Read the formulary an index serves."""
        sections: dict[str, set[str]] = {}
        texts: dict[str, list[str]] = {}
        for chunk in store.chunks_where():
            sections.setdefault(chunk.drug_id, set()).add(chunk.section_key)
            texts.setdefault(chunk.drug_id, []).append(chunk.text)
        return cls({d: frozenset(s) for d, s in sections.items()}, {d: "\n".join(t).lower() for d, t in texts.items()})

    def mentions(self, drug_id: str, phrase: str) -> bool:
        """Whether the drug's text contains ``phrase``, ignoring case, diacritics and spacing (as the checks do)."""
        text = self.lowered_text.get(drug_id)
        if text is None:
            return False
        if phrase.lower() in text:  # the common case, without folding a whole monograph
            return True
        if drug_id not in self._folded:
            self._folded[drug_id] = folded(text)
        return folded(phrase) in self._folded[drug_id]


@dataclass(frozen=True)
class Coverage:
    """What a set names against what the formulary has."""

    labelled_drugs: tuple[str, ...]
    missing_drugs: tuple[str, ...]
    missing_sections: tuple[str, ...] = ()
    missing_conditions: tuple[str, ...] = ()
    formulary_drugs: int = 0

    @property
    def missing_share(self) -> float:
        return len(self.missing_drugs) / len(self.labelled_drugs) if self.labelled_drugs else 0.0

    @property
    def mostly_missing(self) -> bool:
        return self.missing_share > MOSTLY_MISSING_SHARE

    @property
    def complete(self) -> bool:
        return not (self.missing_drugs or self.missing_sections or self.missing_conditions)

    def lines(self) -> list[str]:
        """Human-readable lines, one per kind of mismatch (none when the formulary has everything)."""
        out = []
        if self.missing_drugs:
            out.append(f"the formulary lacks {len(self.missing_drugs)} of the {len(self.labelled_drugs)} labelled drugs "
                       f"({self.missing_share:.0%}): {_shown(self.missing_drugs)}")
        if self.missing_sections:
            out.append(f"sections the formulary lacks ({len(self.missing_sections)}): {_shown(self.missing_sections)}")
        if self.missing_conditions:
            out.append(f"conditions the formulary cannot show ({len(self.missing_conditions)}): "
                       f"{_shown(self.missing_conditions)}")
        return out

    def as_json(self) -> dict[str, Any]:
        return {"labelled_drugs": list(self.labelled_drugs), "missing_drugs": list(self.missing_drugs),
                "missing_share": self.missing_share, "missing_sections": list(self.missing_sections),
                "missing_conditions": list(self.missing_conditions), "formulary_drugs": self.formulary_drugs,
                "lines": self.lines()}


def _shown(items: tuple[str, ...]) -> str:
    more = f" … and {len(items) - SHOWN_PER_LIST} more" if len(items) > SHOWN_PER_LIST else ""
    return ", ".join(items[:SHOWN_PER_LIST]) + more


# -- what a set names --------------------------------------------------------------------------------
@dataclass
class _Named:
    drugs: set[str] = field(default_factory=set)
    sections: set[tuple[str | None, str]] = field(default_factory=set)  # (drug or None, section key)
    phrases: set[tuple[str, str]] = field(default_factory=set)  # (drug, phrase) to be found in its text
    conditions: dict[str, tuple[str, ...]] = field(default_factory=dict)  # condition → its labelled drugs


def _read_expected(expected: Mapping[str, Any], named: _Named) -> None:
    drugs = [d for key in ("drugs", "drugs_include", "evidence_drugs_include")
             for d in (expected.get(key) or []) if isinstance(d, str)]
    named.drugs.update(drugs)
    section = expected.get("section_key")
    if isinstance(section, str):
        named.sections.update({(d, section) for d in drugs} or {(None, section)})
    for item in expected.get("safety_shows") or []:
        if isinstance(item, Mapping) and isinstance(item.get("drug_id"), str):
            named.drugs.add(item["drug_id"])
            if isinstance(item.get("phrase"), str) and item["phrase"].strip():
                named.phrases.add((item["drug_id"], item["phrase"]))


def _read_row(row: Mapping[str, Any], named: _Named) -> None:
    """One row of any ``data/eval`` format (see the module docstring)."""
    drug = row.get("drug_id") if isinstance(row.get("drug_id"), str) else None
    if drug:
        named.drugs.add(drug)
    if isinstance(row.get("section_key"), str):
        named.sections.add((drug, row["section_key"]))
    for section in row.get("expected_pooled_sections") or []:
        named.sections.add((drug, section))
    listed = [d for key in ("expected_drugs", "acceptable_drugs") for d in (row.get(key) or [])]
    named.drugs.update(listed)
    if isinstance(row.get("condition"), str) and row.get("expected_drugs"):
        named.conditions[row["condition"]] = tuple(row["expected_drugs"])
    if isinstance(row.get("expected"), Mapping):
        _read_expected(row["expected"], named)
    for turn in row.get("turns") or []:
        if isinstance(turn, Mapping) and isinstance(turn.get("expected"), Mapping):
            _read_expected(turn["expected"], named)


def named_in(rows: Iterable[Mapping[str, Any] | LabelledTurn]) -> _Named:
    named = _Named()
    for row in rows:
        if isinstance(row, LabelledTurn):
            _read_expected(row.expected, named)
        elif isinstance(row, Mapping):
            _read_row(row, named)
    return named


# -- against the formulary -----------------------------------------------------------------------------
def find_missing(rows: Iterable[Mapping[str, Any] | LabelledTurn], formulary: FormularyContents) -> Coverage:
    """What ``rows`` (any ``data/eval`` format, or labelled turns) name that ``formulary`` lacks."""
    named = named_in(rows)
    have = formulary.sections
    all_sections = frozenset().union(*have.values()) if have else frozenset()
    missing_drugs = sorted(d for d in named.drugs if d not in have)
    sections = set()
    for drug, section in named.sections:
        if section not in SECTION_ORDER:
            sections.add(f"{section} (not a section key: see docs/formulary-format.md)")
        elif section not in all_sections:
            sections.add(f"{section} (no monograph has it)")
        elif drug is not None and drug in have and section not in have[drug]:
            sections.add(f"{section} of {drug}")
    conditions = {f"'{phrase}' in {drug}" for drug, phrase in named.phrases
                  if drug in have and not formulary.mentions(drug, phrase)}
    conditions |= {f"'{condition}' (every labelled drug absent: {', '.join(drugs)})"
                   for condition, drugs in named.conditions.items() if not set(drugs) & set(have)}
    return Coverage(tuple(sorted(named.drugs)), tuple(missing_drugs), tuple(sorted(sections)),
                    tuple(sorted(conditions)), len(have))


def check_coverage(
    rows: Iterable[Mapping[str, Any] | LabelledTurn], formulary: FormularyContents | Path | str | QdrantStore,
    allow_missing: bool = False, echo: Any = print,
) -> Coverage:
    """Find and print what the formulary lacks; raise :class:`MostlyMissingError` over a mostly absent set.

    ``formulary`` is the contents, a formulary folder or a served store. Notebooks and ``duocthu
    eval`` call this before measuring; ``echo`` receives each line (``None``: silent).
    """
    contents = formulary if isinstance(formulary, FormularyContents) else (
        FormularyContents.from_folder(formulary) if isinstance(formulary, (str, Path))
        else FormularyContents.from_store(formulary))
    coverage = find_missing(list(rows), contents)
    if echo is not None:
        for line in coverage.lines() or [f"coverage: the formulary ({coverage.formulary_drugs} drugs) has every "
                                         f"drug, section and condition the set names"]:
            echo(f"⚠ {line}" if not coverage.complete else line)
    if coverage.mostly_missing and not allow_missing:
        raise MostlyMissingError(
            f"{len(coverage.missing_drugs)} of the {len(coverage.labelled_drugs)} drugs this set labels are not in the "
            f"formulary ({coverage.missing_share:.0%}, more than half): a figure over it would mean nothing. Point "
            f"FORMULARY_DIR / DUOCTHU_FORMULARY at the book the set was written for, or pass --allow-missing "
            f"(ALLOW_MISSING = True in a notebook) to measure anyway.")
    return coverage
