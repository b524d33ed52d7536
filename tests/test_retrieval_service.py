from __future__ import annotations

from duocthu.providers.rerank import RerankOutcome
from duocthu.retrieval.decision import decide, decide_result
from duocthu.retrieval.packing import pack_evidence
from duocthu.retrieval.policy import EvidencePolicy
from duocthu.retrieval.safety import (
    CandidateStatus,
    ConditionTerm,
    FindingKind,
    MedicationTerm,
    PatientProfile,
    assess_patient_candidates,
)
from duocthu.retrieval.service import rank_indication_drugs
from duocthu.types import Chunk, ChunkKind, Hit, Outcome, ScoreKind

LOET = "Thận trọng gì khi người bị loét dạ dày tá tràng dùng thuốc A?"


def test_section_route_is_exact_and_whole(fixture_retrieval):
    result = fixture_retrieval.retrieve_framed("thuoc_b", "tuong_tac_thuoc", "thuốc B dùng chung lithi")
    assert result.route == "section"
    assert [h.chunk.part_index for h in result.hits] == [0, 1, 2]
    assert decide_result(result).outcome is Outcome.VERIFY_PDF  # quarantined table in that section
    assert decide_result(result).reason == "visual_verification_required"


def test_pooling_recovers_the_contraindication_only_answer(fixture_retrieval):
    result = fixture_retrieval.retrieve_framed("thuoc_a", "than_trong", LOET, drug_names=["Thuốc A", "Alphadol"])
    pooled = [h for h in result.hits if h.route == "pooled"]
    assert [h.doc_id for h in pooled] == ["thuoc_a__chong_chi_dinh__0"]


def test_attractor_is_never_pooled(fixture_retrieval):
    loose = fixture_retrieval.policy.with_overrides(lexical_pool_min_score=1.0, max_lexical_pooled_sections=20)
    result = fixture_retrieval.retrieve_framed("thuoc_a", "than_trong", LOET + " ức chế prostaglandin",
                                               drug_names=["Thuốc A"], policy=loose)
    assert result.hits and all(h.chunk.section_key != "duoc_ly_va_co_che_tac_dung" for h in result.hits)


def test_pooling_only_on_enabled_sections(fixture_retrieval):
    result = fixture_retrieval.retrieve_framed("thuoc_a", "lieu_luong_va_cach_dung", LOET, drug_names=["Thuốc A"])
    assert all(h.route == "section" for h in result.hits)


def test_pooling_caps_sections(fixture_retrieval):
    loose = fixture_retrieval.policy.with_overrides(lexical_pool_min_score=1.0, max_lexical_pooled_sections=1)
    result = fixture_retrieval.retrieve_framed("thuoc_a", "than_trong", LOET + " suy gan nặng", drug_names=["Thuốc A"],
                                               policy=loose)
    assert len({h.chunk.section_key for h in result.hits if h.route == "pooled"}) == 1


def test_overview_keeps_only_intro_sections(fixture_retrieval):
    result = fixture_retrieval.retrieve_framed("thuoc_a", None, "thuốc A", is_overview=True)
    assert {h.chunk.section_key for h in result.hits} == {"ten_chung_quoc_te", "loai_thuoc", "chi_dinh",
                                                          "duoc_ly_va_co_che_tac_dung"}


def test_missing_drug_abstains(fixture_retrieval):
    result = fixture_retrieval.retrieve_framed("khong_co", None, "x")
    assert (decide_result(result).outcome, decide_result(result).reason) == (Outcome.ABSTAIN, "insufficient_retrieval_score")


def test_reverse_lookup_keyword_first_then_dense(fixture_retrieval):
    keyword = fixture_retrieval.retrieve_by_indication("tăng huyết áp")
    assert keyword.mode == "keyword" and [c.drug_id for c in keyword.candidates] == ["thuoc_b"]
    nonsense = fixture_retrieval.retrieve_by_indication("máy bay trực thăng màu xanh lá")
    strict = fixture_retrieval.policy.with_overrides(minimum_score=0.99)
    assert fixture_retrieval.retrieve_by_indication("máy bay trực thăng", policy=strict).candidates == ()
    assert nonsense.mode in ("dense", "none")


def _hit(drug: str, part: int, score: float, section: str = "chi_dinh", refs=("p. 1",), visual=False) -> Hit:
    chunk = Chunk(Chunk.make_doc_id(drug, section, part), drug, drug.title(), section, section, part, ChunkKind.PROSE,
                  "x " * 10, "x " * 10, tuple(refs), requires_visual_check=visual)
    return Hit(chunk, score, ScoreKind.PHRASE, "indication_keyword")


def test_group_by_max_never_sum():
    pool = [_hit("many", i, 1.5) for i in range(5)] + [_hit("one", 0, 2.5)]
    ranked = rank_indication_drugs(pool, drug_limit=8, per_drug=2)
    assert [c.drug_id for c in ranked] == ["one", "many"]
    assert len(ranked[1].hits) == 2
    assert len(rank_indication_drugs([_hit(f"d{i}", 0, 1.0) for i in range(12)], 8, 2)) == 8


def test_decide_rules():
    assert decide([]).reason == "parent_hydration_failed"
    assert decide([_hit("a", 0, 1, refs=())]).reason == "missing_provenance"
    assert decide([_hit("a", 0, 1), _hit("a", 1, 1, visual=True)]).outcome is Outcome.VERIFY_PDF
    assert decide([_hit("a", 0, 1)]).outcome is Outcome.ANSWERABLE


def test_pack_evidence_whole_blocks_and_omissions():
    hits = [_hit("a", i, 1.0) for i in range(5)]
    pack = pack_evidence(hits, max_tokens=25)
    assert len(pack.hits) == 2 and pack.tokens_used <= 25
    assert pack.omitted_evidence_ids == tuple(h.doc_id for h in hits[2:])
    assert pack_evidence(hits, None).hits == tuple(hits)


class _FailingReranker:
    name = "failing"

    def rerank(self, query, hits, top_k):
        return RerankOutcome(tuple(hits), failure="boom")


def test_token_cap_holds_when_rerank_fails(fixture_retrieval):
    fixture_retrieval.reranker = _FailingReranker()
    policy = fixture_retrieval.policy.with_overrides(max_context_tokens=120, rerank_top_k=6)
    result = fixture_retrieval.retrieve_framed("thuoc_a", None, "thuốc A có gây buồn nôn không", policy=policy)
    assert result.pack.tokens_used <= 120 and len(result.hits) <= 6
    assert result.failures == ("boom",)
    assert any("failed open" in s for s in result.steps)


def _profile(medications=(), conditions=()):
    return PatientProfile(
        medications=tuple(MedicationTerm(m, (m,)) for m in medications),
        conditions=tuple(ConditionTerm(c, (c,)) for c in conditions),
    )


def test_patient_safety_facets_and_absence_is_not_safe(fixture_retrieval):
    candidates = fixture_retrieval.retrieve_by_indication("tăng huyết áp").candidates
    policy = EvidencePolicy()
    on_lithium = assess_patient_candidates(fixture_retrieval.store, candidates, _profile(["lithi"]), policy)
    assert on_lithium[0].status is CandidateStatus.SAFETY_EVIDENCE_FOUND
    assert {f.kind for f in on_lithium[0].findings} == {FindingKind.INTERACTION}
    kidney = assess_patient_candidates(fixture_retrieval.store, candidates, _profile(conditions=["suy thận"]), policy)
    assert {f.kind for f in kidney[0].findings} >= {FindingKind.CAUTION}
    generic = assess_patient_candidates(fixture_retrieval.store, candidates, _profile(conditions=["chức năng"]), policy)
    assert generic[0].status is CandidateStatus.INSUFFICIENT_EVIDENCE
    unrelated = assess_patient_candidates(fixture_retrieval.store, candidates, _profile(["metformin"]), policy)
    assert unrelated[0].status is CandidateStatus.INSUFFICIENT_EVIDENCE


def test_legacy_retrieve_uses_the_section_router_then_dense(fixture_retrieval):
    named = fixture_retrieval.retrieve("chống chỉ định của thuốc A", "thuoc_a")
    assert named.route == "section" and named.hits[0].chunk.section_key == "chong_chi_dinh"
    loose = fixture_retrieval.policy.with_overrides(minimum_score=0.0)
    free = fixture_retrieval.retrieve("thuốc A và buồn nôn", "thuoc_a", policy=loose)
    assert free.route == "dense" and len(free.hits) == 3  # evidence_limit of the candidate_limit=5 search
