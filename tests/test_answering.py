"""Grounded generation: the guards reject invented numbers, unknown citations, foreign drugs."""

from __future__ import annotations

from duocthu.agent.answering import (
    ExtractiveAnswerGenerator,
    GenerationRequest,
    GroundedAnswerService,
    LlmAnswerGenerator,
    LlmEntailmentChecker,
    VerbatimEntailmentChecker,
    check_claims,
    numbers_in,
)
from duocthu.budget import RequestBudget
from duocthu.errors import AnswerGenerationUnavailable
from duocthu.providers.llm import ScriptedLlm
from duocthu.types import Chunk, ChunkKind, Hit, ScoreKind


def hit(doc_id: str, text: str, drug: str = "thuoc_a") -> Hit:
    section = doc_id.split("__")[1]
    chunk = Chunk(doc_id, drug, drug.title(), section, section, 0, ChunkKind.PROSE, text, text.lower(), ("tr. 1",))
    return Hit(chunk, 1.0, ScoreKind.EXACT, "section")


EVIDENCE = (hit("thuoc_a__lieu_luong_va_cach_dung__0", "Người lớn: uống 500 mg mỗi 6 giờ, tối đa 4 g/ngày."),)
REQUEST = GenerationRequest("Liều thuốc A?", EVIDENCE)


def claim(text: str, *ids: str) -> dict:
    return {"text": text, "evidence_ids": list(ids)}


def service(llm: ScriptedLlm) -> GroundedAnswerService:
    return GroundedAnswerService(LlmAnswerGenerator(llm), LlmEntailmentChecker(llm))


def test_numbers_are_normalised():
    assert numbers_in("18,5 kg và 18.5 kg, 4 g") == {"18.5", "4"}


def test_invented_number_is_rejected():
    llm = ScriptedLlm([{"claims": [claim("Người lớn uống 650 mg mỗi 6 giờ.", EVIDENCE[0].doc_id)]}])
    result = service(llm).answer_from_result(REQUEST, RequestBudget())
    assert (result.ok, result.reason) == (False, "numeric_grounding_failed")
    assert [h[0] for h in llm.history] == ["generation"]  # entailment never reached


def test_citing_an_id_not_given_is_rejected():
    llm = ScriptedLlm([{"claims": [claim("Người lớn uống 500 mg.", "thuoc_x__chi_dinh__0")]}])
    assert service(llm).answer_from_result(REQUEST, RequestBudget()).reason == "cited_unknown_evidence"


def test_uncited_claim_is_rejected():
    llm = ScriptedLlm([{"claims": [claim("Người lớn uống 500 mg.")]}])
    assert service(llm).answer_from_result(REQUEST, RequestBudget()).reason == "uncited_claim"


def test_drug_outside_the_candidate_list_is_rejected():
    evidence = (hit("thuoc_b__chi_dinh__0", "Tăng huyết áp.", "thuoc_b"),)
    request = GenerationRequest("thuốc trị tăng huyết áp", evidence, list_mode=True, candidate_drug_ids=("thuoc_b",),
                                candidate_names={"thuoc_a": ("Thuốc A", "Alphadol"), "thuoc_b": ("Thuốc B",)})
    llm = ScriptedLlm([{"claims": [claim("Thuốc B và Alphadol đều trị tăng huyết áp.", "thuoc_b__chi_dinh__0")]}])
    assert service(llm).answer_from_result(request, RequestBudget()).reason == "drug_outside_candidates"


def test_grounded_answer_passes_with_three_calls():
    llm = ScriptedLlm([
        {"claims": [claim("Người lớn: uống 500 mg mỗi 6 giờ, tối đa 4 g/ngày.", EVIDENCE[0].doc_id)]},
        {"entailed": True, "grounded_omissions": []},
    ])
    budget = RequestBudget()
    budget.require("understanding")
    result = service(llm).answer_from_result(REQUEST, budget)
    assert result.ok and budget.llm_calls == 3


def test_retry_on_self_reported_insufficiency():
    llm = ScriptedLlm([
        {"claims": [], "evidence_sufficient": False},
        {"claims": [claim("Người lớn: uống 500 mg mỗi 6 giờ.", EVIDENCE[0].doc_id)]},
        {"entailed": True},
    ])
    result = service(llm).answer_from_result(REQUEST, RequestBudget())
    assert result.ok and [h[0] for h in llm.history] == ["generation", "generation", "entailment"]


def test_completeness_repair_and_re_verify():
    llm = ScriptedLlm([
        {"claims": [claim("Người lớn: uống 500 mg mỗi 6 giờ.", EVIDENCE[0].doc_id)]},
        {"entailed": True, "grounded_omissions": ["tối đa 4 g/ngày"]},
        {"claims": [claim("Người lớn: uống 500 mg mỗi 6 giờ, tối đa 4 g/ngày.", EVIDENCE[0].doc_id)]},
        {"entailed": True, "grounded_omissions": []},
    ])
    result = service(llm).answer_from_result(REQUEST, RequestBudget())
    assert result.ok and "4 g/ngày" in result.claims[0].text
    assert [h[0] for h in llm.history] == ["generation", "entailment", "completeness_repair", "entailment"]


def test_entailment_failure_fails_closed():
    llm = ScriptedLlm([{"claims": [claim("Người lớn uống 500 mg.", EVIDENCE[0].doc_id)]}, {"entailed": False, "detail": "x"}])
    assert service(llm).answer_from_result(REQUEST, RequestBudget()).reason == "entailment_failed"


def test_provider_error_fails_closed():
    llm = ScriptedLlm([AnswerGenerationUnavailable("ThrottlingException")])
    result = service(llm).answer_from_result(REQUEST, RequestBudget())
    assert (result.ok, result.reason) == (False, "generation_unavailable")


def test_budget_exhausted_mid_turn():
    llm = ScriptedLlm([{"claims": [claim("Người lớn uống 500 mg.", EVIDENCE[0].doc_id)]}, {"entailed": True}])
    result = service(llm).answer_from_result(REQUEST, RequestBudget(max_llm_calls=1))
    assert result.reason == "budget_exhausted"


def test_extractive_answerer_passes_the_same_guards():
    answers = GroundedAnswerService(ExtractiveAnswerGenerator(), VerbatimEntailmentChecker())
    result = answers.answer_from_result(REQUEST, RequestBudget())
    assert result.ok and result.claims[0].text == EVIDENCE[0].chunk.text
    assert check_claims(REQUEST, result.claims) is None
    assert RequestBudget().llm_calls == 0


def test_a_heading_joined_from_two_lines_is_checked_part_by_part():
    text = "Đường uống:\nNgười lớn: 75 mg/ngày. Thời gian ít nhất 4 tuần."
    request = GenerationRequest("Dùng bao lâu?", (hit("thuoc_a__lieu_luong_va_cach_dung__0", text),))
    answer = ExtractiveAnswerGenerator().generate(request, RequestBudget())
    assert any(c.heading == "Đường uống: Người lớn:" for c in answer.claims)
    assert VerbatimEntailmentChecker().check(request, answer, RequestBudget()).entailed


def test_a_weight_based_adult_line_is_not_put_with_the_children():
    from duocthu.agent.answering import ADULT_GROUP, Claim, children_first

    claims = [Claim("Người lớn: 3–4 mg/kg/ngày.", ("x",)), Claim("Trẻ em: 5 mg/kg/ngày.", ("x",))]
    ordered = children_first(claims)
    assert ordered[0].text.startswith("Trẻ em") and ordered[1].group == ADULT_GROUP
