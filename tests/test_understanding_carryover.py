"""One test per carry-over rule: what a turn inherits from the conversation's frame."""

from __future__ import annotations

from duocthu.understanding.carryover import CARRY_OVER, carry_over, carry_rule_by_id, merge_patient
from duocthu.understanding.cues import apply_cues
from duocthu.understanding.frame import PatientFacts, Population, QueryFrame, TurnType
from duocthu.understanding.intent import IntentPrediction
from duocthu.understanding.learned import base_frame
from tests.understanding_helpers import demo_entities


def turn(text: str, turn_type: TurnType = TurnType.DRUG_ATTRIBUTE, section: str | None = None):
    intent = IntentPrediction(((turn_type.value, 0.9),), ((section or "chi_dinh", 0.9),))
    ev = demo_entities().read(text, intent)
    return ev, apply_cues(ev, base_frame(ev, turn_type, section))


def applied(rule_id: str, prior: QueryFrame, text: str, **kw):
    ev, frame = turn(text, **kw)
    rule = carry_rule_by_id(rule_id)
    return rule.applies(prior, frame, ev), carry_over(prior, frame, ev)


def test_every_rule_is_documented():
    assert all(r.when and r.effect_text and r.why for r in CARRY_OVER)
    # facts first, then what they enable (a switch drops the medicine replaced before the interaction rule)
    assert [r.id for r in CARRY_OVER[-3:]] == ["facts_accumulate", "switches_drug", "with_what_is_taken"]


def test_answers_which_condition():
    prior = QueryFrame(turn_type=TurnType.SYMPTOM_TO_DRUG, condition="đau", condition_ambiguous=True)
    ok, frame = applied("answers_which_condition", prior, "Đau đầu", turn_type=TurnType.MEDICAL_QUESTION)
    assert ok and (frame.turn_type, frame.condition, frame.condition_ambiguous) == (
        TurnType.SYMPTOM_TO_DRUG, "đau đầu", False)


def test_answers_pending_facts():
    prior = QueryFrame(turn_type=TurnType.DOSING_CALC, drugs=["paracetamol"], section_key="lieu_luong_va_cach_dung",
                       population=Population.PEDIATRIC, weight_kg=18)
    ok, frame = applied("answers_pending_facts", prior, "Bé 5 tuổi")
    assert ok and frame.turn_type is TurnType.DOSING_CALC and frame.drugs == ["paracetamol"]
    assert (frame.weight_kg, frame.age_text) == (18, "5 tuổi")


def test_pronoun_is_taken():
    prior = QueryFrame(turn_type=TurnType.DRUG_OVERVIEW, drugs=["warfarin"])
    ok, frame = applied("pronoun_is_taken", prior, "Tôi đang uống nó, giờ đau răng uống ibuprofen được không?")
    assert ok and frame.turn_type is TurnType.INTERACTION and frame.drugs == ["warfarin", "ibuprofen"]
    assert frame.patient.current_medications == ["warfarin"]


def test_pronoun_with_new_drug():
    prior = QueryFrame(turn_type=TurnType.DRUG_ATTRIBUTE, drugs=["sertralin"], section_key="tac_dung_khong_mong_muon")
    ok, frame = applied("pronoun_with_new_drug", prior, "Nó dùng chung với tramadol được không?")
    assert ok and frame.turn_type is TurnType.INTERACTION and frame.drugs == ["sertralin", "tramadol"]


def test_same_question_new_drug():
    prior = QueryFrame(turn_type=TurnType.DRUG_ATTRIBUTE, drugs=["paracetamol"], section_key="tac_dung_khong_mong_muon")
    ok, frame = applied("same_question_new_drug", prior, "Còn ibuprofen thì sao?")
    assert ok and frame.drugs == ["ibuprofen"] and frame.section_key == "tac_dung_khong_mong_muon"


def test_answers_which_drug():
    prior = QueryFrame(turn_type=TurnType.DRUG_ATTRIBUTE, section_key="tac_dung_khong_mong_muon")
    ok, frame = applied("answers_which_drug", prior, "paracetamol", turn_type=TurnType.DRUG_OVERVIEW)
    assert ok and frame.section_key == "tac_dung_khong_mong_muon" and frame.drugs == ["paracetamol"]


def test_inherits_drug():
    prior = QueryFrame(turn_type=TurnType.DRUG_ATTRIBUTE, drugs=["ibuprofen"], section_key="chong_chi_dinh")
    ok, frame = applied("inherits_drug", prior, "Còn tác dụng phụ thì sao?", section="tac_dung_khong_mong_muon")
    assert ok and frame.drugs == ["ibuprofen"] and frame.section_key == "tac_dung_khong_mong_muon"
    # the other product of a compatibility question is its object, not a new drug
    prior = QueryFrame(turn_type=TurnType.DRUG_ATTRIBUTE, drugs=["ceftriaxon"], section_key="do_on_dinh_va_bao_quan")
    ok, frame = applied("inherits_drug", prior, "Có pha chung với Ringer lactat được không?", section="tuong_ky")
    assert ok and frame.drugs == ["ceftriaxon"]


def test_dosing_follow_up():
    prior = QueryFrame(turn_type=TurnType.DOSING_CALC, drugs=["ibuprofen"], section_key="lieu_luong_va_cach_dung",
                       population=Population.ADULT)
    ok, frame = applied("dosing_follow_up", prior, "liều ibuprofen tối đa?", section="lieu_luong_va_cach_dung")
    assert ok and frame.turn_type is TurnType.DOSING_CALC


def test_facts_accumulate():
    prior = QueryFrame(turn_type=TurnType.DRUG_ATTRIBUTE, drugs=["propranolol"], section_key="than_trong",
                       patient=PatientFacts(conditions=["hen phế quản"], current_medications=["warfarin"]),
                       population=Population.ADULT, age_text="60 tuổi", age_years=60)
    ok, frame = applied("facts_accumulate", prior, "Tác dụng phụ của ibuprofen?", section="tac_dung_khong_mong_muon")
    assert ok and frame.patient.conditions == ["hen phế quản"] and frame.age_years == 60
    # a question that names its drug and gives an age is about the patient it describes
    _, frame = applied("facts_accumulate", prior, "Liều paracetamol cho bé 3 tuổi?", section="lieu_luong_va_cach_dung")
    assert frame.age_text == "3 tuổi" and frame.patient.conditions == ["hen phế quản"]


def test_with_what_is_taken():
    prior = QueryFrame(turn_type=TurnType.DRUG_ATTRIBUTE, drugs=["simvastatin"],
                       patient=PatientFacts(current_medications=["simvastatin"]))
    # (it reads the facts accumulated just before it, so it is checked on the carried frame)
    _, frame = applied("with_what_is_taken", prior, "Bác sĩ vừa kê clarithromycin, tôi uống chung được không?")
    assert "with_what_is_taken" in frame.inherited
    assert frame.turn_type is TurnType.INTERACTION and frame.drugs == ["simvastatin", "clarithromycin"]


def test_merge_patient_keeps_flags_and_replaces_numbers():
    merged = merge_patient(PatientFacts(pregnant=True, trimester=1, crisis=True, renal_clearance_ml_min=40),
                           PatientFacts(trimester=2, renal_clearance_ml_min=25))
    assert (merged.pregnant, merged.trimester, merged.crisis, merged.renal_clearance_ml_min) == (True, 2, True, 25)
    assert not merge_patient(PatientFacts(pregnant=True), PatientFacts(), said_not_pregnant=True).pregnant


def test_with_what_is_taken_when_the_new_drug_is_also_prescribed():
    prior = QueryFrame(turn_type=TurnType.DRUG_ATTRIBUTE, drugs=["warfarin"],
                       patient=PatientFacts(current_medications=["warfarin"]))
    _, frame = applied("with_what_is_taken", prior,
                       "Bác sĩ kê thêm fluconazol, có kỵ với thuốc tôi đang dùng không?")
    assert frame.turn_type is TurnType.INTERACTION and frame.drugs == ["warfarin", "fluconazol"]


def test_may_i_take_a_new_drug_while_taking_one_is_an_interaction():
    prior = QueryFrame(turn_type=TurnType.DRUG_ATTRIBUTE, drugs=["warfarin"],
                       patient=PatientFacts(current_medications=["warfarin"]))
    _, frame = applied("with_what_is_taken", prior, "Đau lưng quá, uống naproxen có được không?")
    assert frame.turn_type is TurnType.INTERACTION and frame.drugs == ["warfarin", "naproxen"]


def test_the_medicine_taken_named_by_what_it_treats():
    prior = QueryFrame(turn_type=TurnType.INTERACTION, drugs=["carbamazepin"],
                       patient=PatientFacts(current_medications=["carbamazepin"]))
    _, frame = applied("with_what_is_taken", prior, "Bác sĩ cho azithromycin, có kỵ với thuốc động kinh của tôi không?")
    assert frame.drugs == ["carbamazepin", "azithromycin"] and not frame.needs_clarify


def test_switches_drug():
    prior = QueryFrame(turn_type=TurnType.DRUG_ATTRIBUTE, drugs=["captopril"],
                       patient=PatientFacts(current_medications=["captopril"], pregnant=True))
    ok, frame = applied("switches_drug", prior, "Thế chuyển sang losartan thì sao, dùng được không?")
    assert ok and frame.drugs == ["losartan"] and "captopril" not in frame.patient.current_medications


def test_merge_patient_a_later_word_on_a_condition_overrides_an_earlier_one():
    merged = merge_patient(PatientFacts(conditions=["hen phế quản", "suy tim"]),
                           PatientFacts(denied_conditions=["hen phế quản"]))
    assert merged.conditions == ["suy tim"] and merged.denied_conditions == ["hen phế quản"]
    again = merge_patient(merged, PatientFacts(conditions=["hen phế quản"]))
    assert "hen phế quản" in again.conditions and again.denied_conditions == []


def test_merge_patient_keeps_the_latest_number_of_each_measure_and_newborn_state():
    from duocthu.understanding.frame import PatientMeasure

    old = PatientFacts(measures=[PatientMeasure(quantity="potassium", value=5.1), PatientMeasure(quantity="inr", value=2)],
                       preterm=True, gestation_weeks=34, jaundice=True)
    new = PatientFacts(measures=[PatientMeasure(quantity="potassium", value=5.8)], jaundice=False)
    merged = merge_patient(old, new)
    assert {m.quantity: m.value for m in merged.measures} == {"potassium": 5.8, "inr": 2}
    assert (merged.preterm, merged.gestation_weeks, merged.jaundice) == (True, 34, False)


def test_merge_patient_an_allergy_said_anywhere_outweighs_no_known_allergy():
    merged = merge_patient(PatientFacts(no_known_drug_allergy=True), PatientFacts(allergy_classes=["quinolon"],
                                                                                   allergies=["ciprofloxacin"]))
    assert not merged.no_known_drug_allergy and merged.allergy_classes == ["quinolon"]
    cleared = merge_patient(PatientFacts(unnamed_allergy=True), PatientFacts(no_known_drug_allergy=True))
    assert cleared.no_known_drug_allergy and not cleared.unnamed_allergy
