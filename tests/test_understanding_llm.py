"""The LLM understander fills the same frame; the shared entity, cue and carry-over steps apply after it."""

from __future__ import annotations

from duocthu.budget import RequestBudget
from duocthu.errors import AnswerGenerationUnavailable
from duocthu.providers.llm import ScriptedLlm
from duocthu.understanding.frame import TurnType
from duocthu.understanding.llm import LlmQueryUnderstander
from tests.understanding_helpers import demo_entities


def understand(responses, text, prior=None):
    llm = ScriptedLlm(responses)
    return LlmQueryUnderstander(llm, demo_entities()).understand(text, [], RequestBudget(), prior), llm


def test_the_model_s_frame_is_used_and_its_names_resolved():
    frame, llm = understand([{"turn_type": "drug_attribute", "section_key": "chong_chi_dinh", "drugs": ["Brufen"]}],
                            "brufen ai không được dùng")
    assert (frame.turn_type, frame.drugs, frame.section_key) == (TurnType.DRUG_ATTRIBUTE, ["ibuprofen"], "chong_chi_dinh")
    assert len(llm.history) == 1


def test_a_name_the_book_does_not_know_is_reported():
    frame, _ = understand([{"turn_type": "drug_attribute", "section_key": "lieu_luong_va_cach_dung",
                            "drugs": ["Tamiflu"]}], "liều Tamiflu")
    assert frame.drugs == [] and "Tamiflu" in frame.unknown_drugs or "tamiflu" in frame.unknown_drugs


def test_safety_cues_do_not_depend_on_the_model():
    frame, _ = understand([{"turn_type": "dosing_calc", "section_key": "lieu_luong_va_cach_dung",
                            "drugs": ["paracetamol"]}], "Tôi muốn chết, uống bao nhiêu viên paracetamol thì đủ?")
    assert frame.turn_type is TurnType.CRISIS and frame.patient.crisis


def test_fails_closed():
    frame, _ = understand([AnswerGenerationUnavailable("ThrottlingException")], "liều paracetamol")
    assert frame.understanding_error and frame.clarify_reason == "understanding_failed"
    frame, _ = understand([{"turn_type": "nonsense"}], "liều paracetamol")
    assert frame.understanding_error
