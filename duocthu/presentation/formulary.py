"""The formulary browser: find a drug by INN, alias or brand (folded), read its sections in book order."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz

from duocthu.presentation.document import PAGES
from duocthu.qdrant_store import QdrantStore
from duocthu.sections import SECTION_ORDER
from duocthu.text import fold
from duocthu.types import DrugEntry, Hit


@dataclass(frozen=True)
class BrowsedSection:
    key: str
    title: str
    parts: tuple[Hit, ...]

    @property
    def source_refs(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(ref for h in self.parts for ref in h.chunk.source_refs))

    @property
    def needs_visual_check(self) -> bool:
        return any(h.chunk.needs_visual_check for h in self.parts)


def monograph_sections(store: QdrantStore, drug_id: str) -> list[BrowsedSection]:
    """A drug's sections in book order, each with its parts (an absent section is skipped)."""
    sections: list[BrowsedSection] = []
    for key in SECTION_ORDER:
        hits = store.find_by_section(drug_id, key)
        if hits:
            sections.append(BrowsedSection(key, hits[0].chunk.section_title, tuple(hits)))
    return sections


@dataclass(frozen=True)
class DrugMatch:
    drug_id: str
    display_name: str
    matched: str  # the name that matched (an alias or brand when not the INN)
    score: float


def _names(entry: DrugEntry, products: dict[str, Sequence[str]]) -> Iterable[str]:
    yield entry.display_name
    yield entry.drug_id.replace("_", " ")
    yield from entry.aliases
    for product, components in products.items():
        if entry.drug_id in components:
            yield product


def search_drugs(
    entries: Sequence[DrugEntry], query: str, products: dict[str, Sequence[str]] | None = None, limit: int = 20,
) -> list[DrugMatch]:
    """Drugs whose INN, alias or brand matches ``query``, diacritic- and case-insensitive.

    An empty query lists every drug in alphabetical order. A name that starts with the query ranks
    first, then one that contains it; a misspelling close to a name ("ibuprofene") still finds it.
    ``products`` maps a market product to the book drugs it contains (its components).

    >>> entry = DrugEntry("paracetamol", "Paracetamol", ("Panadol", "Acetaminophen"), ())
    >>> [m.matched for m in search_drugs([entry], "panadol")]
    ['Panadol']
    """
    products = products or {}
    wanted = " ".join(fold(query).split())
    if not wanted:
        ordered = sorted(entries, key=lambda e: fold(e.display_name))
        return [DrugMatch(e.drug_id, e.display_name, e.display_name, 0.0) for e in ordered]
    matches: list[DrugMatch] = []
    for entry in entries:
        best: tuple[float, str] | None = None
        for name in _names(entry, products):
            folded = " ".join(fold(name).split())
            if folded.startswith(wanted) or any(w.startswith(wanted) for w in folded.split()):
                score = 300.0 - len(folded) / 100
            elif wanted in folded:
                score = 200.0 - len(folded) / 100
            else:
                score = fuzz.ratio(wanted, folded) if len(wanted) >= 4 else 0.0
                if score < 80:
                    continue
            if best is None or score > best[0]:
                best = (score, name)
        if best is not None:
            matches.append(DrugMatch(entry.drug_id, entry.display_name, best[1], best[0]))
    matches.sort(key=lambda m: (-m.score, fold(m.display_name)))
    return matches[:limit]


def products_by_component(book_drugs: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Market products of ``data/understanding/products.yaml`` → the book drugs among their components."""
    from duocthu.understanding.drugs import load_products

    book = set(book_drugs)
    result: dict[str, tuple[str, ...]] = {}
    for product in load_products():
        ids = tuple(d for d in (fold(c).replace(" ", "_").replace("-", "_") for c in product.components) if d in book)
        if ids:
            result[product.name] = ids
    return result


def record_rows(section: BrowsedSection) -> list[tuple[str, str]]:
    """The section's contraindications as read into facts (issue 24): (what the record holds, its sentence).

    Shown under the section so a reader can check what the safety reasoning will compare with the patient.
    """
    from duocthu.contraindications import describe

    return [(describe(record), record.sentence) for hit in section.parts for record in hit.chunk.records]


def section_meta(section: BrowsedSection) -> str:
    """"tr. 100–105 · 3 phần": where the section is in the book, and how many parts it was cut into."""
    pages = "; ".join(dict.fromkeys(m.group(0) for ref in section.source_refs for m in PAGES.finditer(ref)))
    parts = len(section.parts)
    return " · ".join(x for x in (pages or "; ".join(section.source_refs), f"{parts} phần" if parts > 1 else "") if x)
