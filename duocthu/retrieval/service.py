"""RetrievalService: the routes of the retrieval pipeline (spec 09).

Similarity is the fallback, not the default: a question that names its section is answered by
an exact payload filter; the free-form route reranks then packs to a token budget; reverse
lookup is keyword first, dense only when the keyword pass finds nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from duocthu.lexical import lexical_query_tokens
from duocthu.providers.rerank import KeepOrderReranker, Reranker
from duocthu.qdrant_store import QdrantStore
from duocthu.retrieval.packing import pack_evidence
from duocthu.retrieval.policy import EvidencePolicy
from duocthu.sections import INTRO_SECTIONS, SECTION_PHRASES, resolve_section
from duocthu.types import DrugCandidate, EvidencePack, Hit, RetrievalResult

QueryEmbedder = Callable[[str], np.ndarray]


@dataclass(frozen=True)
class IndicationResult:
    """The drugs reverse lookup found (it decides nothing: the caller decides on its final pool)."""

    indication: str
    mode: str  # "keyword" | "synonyms" | "dense" | "hybrid" | "none"
    candidates: tuple[DrugCandidate, ...]
    pool_size: int = 0
    steps: tuple[str, ...] = field(default_factory=tuple)

    @property
    def hits(self) -> tuple[Hit, ...]:
        return tuple(h for c in self.candidates for h in c.hits)


class RetrievalService:
    def __init__(
        self,
        store: QdrantStore,
        embed_query: QueryEmbedder,
        reranker: Reranker | None = None,
        policy: EvidencePolicy | None = None,
    ):
        self.store = store
        self.embed_query = embed_query
        self.reranker = reranker or KeepOrderReranker()
        self.policy = policy or EvidencePolicy()

    # -- single drug ---------------------------------------------------------------------------
    def retrieve_framed(
        self,
        drug_id: str,
        section_key: str | None,
        query: str,
        is_overview: bool = False,
        drug_names: Iterable[str] = (),
        policy: EvidencePolicy | None = None,
    ) -> RetrievalResult:
        policy = policy or self.policy
        if section_key is not None:
            return self._section_route(drug_id, section_key, query, drug_names, policy)
        hits = self.store.find_by_drug(drug_id)
        if not hits:
            return RetrievalResult("drug", EvidencePack(()), steps=(f"find_by_drug({drug_id}) → nothing",),
                                   abstain_reason="insufficient_retrieval_score")
        if is_overview:
            intro = tuple(h for h in hits if h.chunk.section_key in INTRO_SECTIONS)
            pack = pack_evidence(intro, None)
            return RetrievalResult(
                "overview", pack,
                steps=(f"find_by_drug → {len(hits)} prose chunks", f"kept INTRO_SECTIONS → {len(intro)}"),
            )
        outcome = self.reranker.rerank(query, hits, policy.rerank_top_k)
        # The cap applies even when rerank is off or failed open: an ordering aid must not
        # also remove the size bound.
        ranked = outcome.hits[: policy.rerank_top_k]
        pack = pack_evidence(ranked, policy.max_context_tokens)
        steps = (
            f"find_by_drug → {len(hits)} prose chunks",
            f"rerank[{self.reranker.name}] → top {len(ranked)}"
            + (f" (failed open: {outcome.failure})" if outcome.failure else ""),
            f"pack_evidence({policy.max_context_tokens}) → {len(pack.hits)} kept, {len(pack.omitted_evidence_ids)} omitted",
        )
        failures = (outcome.failure,) if outcome.failure else ()
        return RetrievalResult("free_form", pack, steps=steps, failures=failures)

    def _section_route(
        self, drug_id: str, section_key: str, query: str, drug_names: Iterable[str], policy: EvidencePolicy
    ) -> RetrievalResult:
        hits = self.store.find_by_section(drug_id, section_key)
        steps = [f"find_by_section({drug_id}, {section_key}) → {len(hits)} parts (score 1.0 by construction)"]
        pooled = self.pooled_neighbour_hits(drug_id, section_key, query, drug_names, policy)
        if pooled:
            steps.append("lexical pooling → " + ", ".join(f"{h.doc_id} ({h.score:g})" for h in pooled))
        evidence = tuple(hits) + tuple(pooled)
        pack = pack_evidence(evidence, None)
        return RetrievalResult("section", pack, steps=tuple(steps))

    def pooled_neighbour_hits(
        self,
        drug_id: str,
        section_key: str,
        query: str,
        drug_names: Iterable[str] = (),
        policy: EvidencePolicy | None = None,
    ) -> list[Hit]:
        """Bounded cross-section pooling: only from the enabled sections, never the attractor."""
        policy = policy or self.policy
        if section_key not in policy.lexical_pool_enabled_sections:
            return []
        excluded = set(policy.lexical_pool_excluded_sections) | {section_key}
        if policy.lexical_scorer == "bm25":
            candidates = [
                h for h in self.store.search_bm25(query, limit=20, drug_id=drug_id)
                if h.chunk.section_key not in excluded and h.score >= policy.bm25_pool_min_score
            ]
        else:
            tokens = lexical_query_tokens(query, exclude=[*drug_names, *SECTION_PHRASES[section_key]])
            candidates = self.store.search_lexical(
                tokens, drug_id, exclude_sections=excluded, min_score=policy.lexical_pool_min_score
            )
        chosen_sections: list[str] = []
        pooled: list[Hit] = []
        for hit in candidates:
            key = hit.chunk.section_key
            if key not in chosen_sections:
                if len(chosen_sections) >= policy.max_lexical_pooled_sections:
                    continue
                chosen_sections.append(key)
            pooled.append(Hit(hit.chunk, hit.score, hit.score_kind, "pooled"))
        return pooled

    # -- the legacy path (ANSWER_PROVIDER=disabled) --------------------------------------------
    def retrieve(self, query: str, drug_id: str | None = None, drug_names: Iterable[str] = (),
                 policy: EvidencePolicy | None = None) -> RetrievalResult:
        """Keyword section router first; otherwise dense top-``candidate_limit`` cut to ``evidence_limit``.

        Hydration of parent chunks is a no-op here: no chunk of the corpus carries a ``parent_id``.
        """
        policy = policy or self.policy
        section_key = resolve_section(query)
        if drug_id is not None and section_key is not None:
            return self._section_route(drug_id, section_key, query, drug_names, policy)
        hits = self.store.search(
            self.embed_query(query), limit=policy.candidate_limit, drug_id=drug_id, min_score=policy.minimum_score
        )
        evidence = tuple(hits[: policy.evidence_limit])
        steps = (f"resolve_section → {section_key}", f"dense search (min {policy.minimum_score}) → {len(hits)}",
                 f"evidence_limit {policy.evidence_limit} → {len(evidence)}")
        if not evidence:
            return RetrievalResult("dense", EvidencePack(()), steps=steps, abstain_reason="insufficient_retrieval_score")
        return RetrievalResult("dense", pack_evidence(evidence, None), steps=steps)

    # -- similarity-only route (used for measurement) -------------------------------------------
    def dense_top_k(self, query: str, drug_id: str | None, limit: int | None = None) -> list[Hit]:
        return self.store.search(self.embed_query(query), limit=limit or self.policy.candidate_limit, drug_id=drug_id)

    # -- reverse lookup ------------------------------------------------------------------------
    def retrieve_by_indication(
        self, indication: str, policy: EvidencePolicy | None = None, alternatives: Sequence[str] = (),
        typed_with_accents: bool = False,
    ) -> IndicationResult:
        """Keyword first; the book's words for the condition (``alternatives``) next; dense last."""
        policy = policy or self.policy
        steps: list[str] = []
        mode = policy.indication_mode
        pool: list[Hit] = []
        used = "none"
        if mode in ("keyword_then_dense", "keyword"):
            pool = self.store.find_by_indication(indication, limit=policy.indication_retrieval_limit,
                                                 typed_with_accents=typed_with_accents)
            steps.append(f"find_by_indication({indication!r}) → {len(pool)} chunks")
            used = "keyword" if pool else used
            if not pool and alternatives and policy.indication_synonyms == "fallback":
                for alternative in alternatives:
                    pool += [h for h in self.store.find_by_indication(alternative, limit=policy.indication_retrieval_limit,
                                                                      typed_with_accents=typed_with_accents)
                             if h.doc_id not in {p.doc_id for p in pool}]
                steps.append(f"find_by_indication(synonyms {list(alternatives)[:4]}…) → {len(pool)} chunks")
                used = "synonyms" if pool else used
        if not pool and mode in ("keyword_then_dense", "dense"):
            pool = self.store.search_indication(
                self.embed_query(indication), policy.indication_retrieval_limit, policy.minimum_score
            )
            steps.append(f"search_indication (dense, min {policy.minimum_score}) → {len(pool)} chunks")
            used = "dense" if pool else used
        if mode == "hybrid":
            # RRF scores carry no absolute meaning, so the gate is the keyword pass or a dense hit
            # above the minimum score; without one, a made-up condition would still get "matches".
            keyword = self.store.find_by_indication(indication, limit=1, typed_with_accents=typed_with_accents)
            vector = self.embed_query(indication)
            gated = bool(keyword) or bool(self.store.search_indication(vector, 1, policy.minimum_score))
            pool = self.store.search_hybrid(
                indication, vector, limit=policy.indication_retrieval_limit, section_keys=["chi_dinh"],
            ) if gated else []
            used = "hybrid" if pool else used
            steps.append(f"search_hybrid (gate {'passed' if gated else 'closed'}) → {len(pool)} chunks")
        candidates = rank_indication_drugs(pool, policy.indication_candidate_limit, policy.indication_evidence_per_drug)
        return IndicationResult(indication, used, tuple(candidates), len(pool), tuple(steps))


def rank_indication_drugs(pool: Sequence[Hit], drug_limit: int, per_drug: int) -> list[DrugCandidate]:
    """Group a chunk pool by drug; a drug's score is its *best* chunk, never a sum or count."""
    groups: dict[str, list[Hit]] = {}
    for hit in pool:
        groups.setdefault(hit.chunk.drug_id, []).append(hit)
    candidates = []
    for drug_id, hits in groups.items():
        hits.sort(key=lambda h: (-h.score, h.chunk.part_index))
        candidates.append(DrugCandidate(drug_id, hits[0].chunk.display_name, hits[0].score, tuple(hits[:per_drug])))
    candidates.sort(key=lambda c: (-c.score, c.drug_id))
    return candidates[:drug_limit]

