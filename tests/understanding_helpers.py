"""The demo formulary's entity layer built straight from the Markdown (no index): fast unit tests."""

from __future__ import annotations

from functools import lru_cache

from tests.conftest import DEMO_FORMULARY


@lru_cache(maxsize=1)
def demo_entities():
    from duocthu.corpus import load_formulary
    from duocthu.types import DrugEntry
    from duocthu.understanding.conditions import LEXICON_SECTIONS, build_lexicon
    from duocthu.understanding.drugs import DrugResolver
    from duocthu.understanding.learned import EntityReader

    monographs = load_formulary(DEMO_FORMULARY)
    resolver = DrugResolver(
        [DrugEntry(m.drug_id, m.name, m.aliases, m.atc_codes) for m in monographs],
        known_words=[s.text for m in monographs for s in m.sections],
    )
    lexicon = build_lexicon([(s.key, s.text) for m in monographs for s in m.sections if s.key in LEXICON_SECTIONS])
    return EntityReader(resolver, lexicon)
