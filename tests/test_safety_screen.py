"""The patient-safety screen over the demo formulary: what applies, what is only shown, what is not found."""

from __future__ import annotations

import pytest

from duocthu.retrieval.safety import (
    ConditionTerm,
    FindingKind,
    MedicationTerm,
    PatientProfile,
    screen_patient,
)
from duocthu.understanding.profile import condition_term, medication_term


def screen(runtime, drugs, **profile):
    return screen_patient(runtime.store, drugs, PatientProfile(**profile))


def test_a_contraindicated_condition_applies_whatever_was_asked(demo_runtime):
    result = screen(demo_runtime, ["propranolol"],
                    conditions=(condition_term("hen phế quản", demo_runtime.lexicon),))
    applying = result.contraindicated("propranolol")
    assert applying and "Hen phế quản" in applying[0].quote and applying[0].kind is FindingKind.CONTRAINDICATION


def test_an_age_under_the_book_s_limit_applies(demo_runtime):
    result = screen(demo_runtime, ["tramadol"], age_years=6, age_text="6 tuổi", pediatric=True)
    assert [f.kind for f in result.contraindicated()] == [FindingKind.AGE_LIMIT]
    assert "dưới 12 tuổi" in result.contraindicated()[0].quote
    older = screen(demo_runtime, ["tramadol"], age_years=14, age_text="14 tuổi", pediatric=True)
    assert not older.contraindicated()  # the under-18 limit is only for tonsillectomy pain
    unknown_age = screen(demo_runtime, ["tramadol"], pediatric=True)
    assert unknown_age.findings and not unknown_age.contraindicated()  # shown, the age still to ask


def test_a_severe_form_in_the_book_is_shown_not_applied_to_an_unstated_severity(demo_runtime):
    kidney = condition_term("suy thận", demo_runtime.lexicon)
    result = screen(demo_runtime, ["metformin"], conditions=(kidney,))
    assert any("suy thận nặng" in f.quote.lower() for f in result.findings) and not result.contraindicated()
    measured = screen(demo_runtime, ["metformin"], conditions=(kidney,), renal_clearance_ml_min=20)
    assert measured.contraindicated()


def test_pregnancy_trimester(demo_runtime):
    third = screen(demo_runtime, ["ibuprofen"], pregnant=True, trimester=3)
    assert third.contraindicated() and any(f.kind is FindingKind.PREGNANCY for f in third.findings)
    first = screen(demo_runtime, ["ibuprofen"], pregnant=True, trimester=1)
    assert not first.contraindicated()


def test_interactions_both_directions(demo_runtime):
    warfarin = medication_term("warfarin", demo_runtime.resolver)
    names = {"ibuprofen": medication_term("ibuprofen", demo_runtime.resolver).phrases}
    result = screen_patient(demo_runtime.store, ["ibuprofen"], PatientProfile(medications=(warfarin,)), names)
    quotes = [f for f in result.findings if f.kind is FindingKind.INTERACTION]
    assert {f.hit.chunk.drug_id for f in quotes} >= {"ibuprofen", "warfarin"}
    assert all(f.drug_id == "ibuprofen" for f in quotes)


def test_nothing_found_is_reported_as_not_found(demo_runtime):
    result = screen(demo_runtime, ["paracetamol"], conditions=(ConditionTerm("nhược cơ", ("nhược cơ",)),))
    assert result.unmatched_facts("paracetamol") == ("nhược cơ",)


def test_a_history_naming_a_class_is_not_a_contraindicated_combination(demo_runtime):
    nsaid = MedicationTerm("naproxen", ("thuốc chống viêm không steroid",))
    result = screen(demo_runtime, ["ibuprofen"], medications=(nsaid,))
    history = [f for f in result.findings if "tiền sử hen" in f.quote.lower()]
    assert history and not any(f.applies for f in history)


def test_no_facts_no_screen(demo_runtime):
    assert screen(demo_runtime, ["ibuprofen"]).is_empty


def test_an_allergy_to_a_class_applies_to_its_members(demo_runtime):
    from duocthu.retrieval.safety import AllergyTerm

    result = screen(demo_runtime, ["amoxicilin"], allergies=(AllergyTerm("penicillin", ("penicillin",)),))
    applying = result.contraindicated("amoxicilin")
    assert applying and "penicilin" in applying[0].quote and applying[0].matched == "dị ứng penicillin"


def test_an_allergy_to_the_drug_asked_applies_to_its_hypersensitivity_line(demo_runtime):
    from duocthu.understanding.profile import allergy_term

    names = {d: demo_runtime.resolver.names_of(d) for d in demo_runtime.resolver.catalogue}
    allergy = allergy_term("ibuprofen", demo_runtime.resolver)
    result = screen_patient(demo_runtime.store, ["ibuprofen"], PatientProfile(allergies=(allergy,)), names)
    assert any("Quá mẫn với ibuprofen" in f.quote for f in result.contraindicated("ibuprofen"))



def test_a_severe_form_the_patient_has_matches_the_book_s_broader_line(demo_runtime):
    term = condition_term("hen phế quản nặng", demo_runtime.lexicon)
    assert "hen phế quản" in [form.lower() for form in term.phrases]
    result = screen(demo_runtime, ["propranolol"], conditions=(term,))
    assert result.contraindicated("propranolol")



def test_a_pregnancy_limit_with_a_circumstance_still_applies():
    from duocthu.retrieval.safety import _limit_applies
    from duocthu.types import PopulationLimit
    limit = PopulationLimit("pregnancy", "Phụ nữ mang thai, khi dùng cho bệnh không phải ung thư.", conditional=True)
    assert _limit_applies(limit, PatientProfile(pregnant=True)) == (True, "mang thai")
    nursing = PopulationLimit("breastfeeding", "Phụ nữ cho con bú khi dùng liều cao.", conditional=True)
    assert _limit_applies(nursing, PatientProfile(breastfeeding=True)) == (True, "cho con bú")


def test_a_condition_named_as_an_exception_is_not_matched(demo_runtime):
    result = screen(demo_runtime, ["digoxin"], conditions=(condition_term("suy tim", demo_runtime.lexicon),))
    assert not any("trừ khi" in f.quote and f.matched == "suy tim" for f in result.findings)


def test_taking_the_drug_asked_about_is_not_a_finding_about_it(demo_runtime):
    digoxin = medication_term("digoxin", demo_runtime.resolver)
    result = screen(demo_runtime, ["digoxin"], medications=(digoxin,))
    assert not result.contraindicated("digoxin") and result.unmatched_facts("digoxin") == ()


def test_anthrax_is_not_kidney_disease(demo_runtime):
    drugs = {h.chunk.drug_id for h in demo_runtime.store.find_by_indication("bệnh than")}
    assert "doxycyclin" in drugs and "captopril" not in drugs


def test_an_age_group_the_dosing_section_declines_is_an_age_limit(demo_runtime):
    from duocthu.agent.compose import finding_title
    result = screen(demo_runtime, ["meloxicam"], age_years=13, age_text="13 tuổi", pediatric=True)
    limits = result.contraindicated("meloxicam")
    assert limits and limits[0].hit.chunk.section_key == "lieu_luong_va_cach_dung"
    assert finding_title(limits[0]).startswith("Giới hạn tuổi")
    assert not screen(demo_runtime, ["meloxicam"], age_years=17, age_text="17 tuổi").contraindicated()


def test_a_short_form_inside_a_severe_phrase_does_not_make_it_apply(demo_runtime):
    # "hen" sits inside "Hen phế quản nặng"; the patient did not say theirs is severe.
    result = screen(demo_runtime, ["bisoprolol"], conditions=(condition_term("hen phế quản", demo_runtime.lexicon),))
    assert any("nặng" in f.quote for f in result.findings) and not result.contraindicated("bisoprolol")


def test_what_the_user_wrote_finds_a_contraindication_the_lexicon_does_not_know(demo_runtime):
    said = ["Tôi bị dị ứng với mọi thứ có nguồn gốc từ lợn, sau mổ tiêm heparin được không?"]
    result = screen_patient(demo_runtime.store, ["heparin"], PatientProfile(), stated=said)
    echoed = [f for f in result.findings if "lợn" in f.quote]
    assert echoed and echoed[0].kind is FindingKind.CONTRAINDICATION and not echoed[0].applies
    assert echoed[0].matched in result.facts  # the phrase is shown back as what was screened


def test_an_effect_asked_about_or_common_words_echo_nothing(demo_runtime):
    for said in ("Heparin có gây giảm tiểu cầu không?", "Người bệnh dùng heparin liều cao thì sao?"):
        result = screen_patient(demo_runtime.store, ["heparin"], PatientProfile(), stated=[said])
        assert not result.findings, said


def test_a_medicine_named_but_not_said_to_be_taken_is_shown_without_applying(demo_runtime):
    named = MedicationTerm("rilpivirin", ("rilpivirin",), taken=False)
    result = screen(demo_runtime, ["pantoprazol"], medications=(named,))
    assert any("rilpivirin" in f.quote for f in result.findings) and not result.contraindicated()
    assert "rilpivirin" in result.facts and "đang dùng rilpivirin" not in result.facts


def test_a_contraindication_written_for_pregnant_women_does_not_apply_to_others(demo_runtime):
    epilepsy = condition_term("động kinh", demo_runtime.lexicon)
    result = screen(demo_runtime, ["acid_valproic"], conditions=(epilepsy,))
    assert any("Phụ nữ có thai bị động kinh" in f.quote for f in result.findings) and not result.contraindicated()
    pregnant = screen(demo_runtime, ["acid_valproic"], conditions=(epilepsy,), pregnant=True)
    assert pregnant.contraindicated()


def test_a_phrase_continued_the_opposite_way_echoes_nothing(demo_runtime):
    said = ["Tim tôi hay đập nhanh, uống bisoprolol được không"]  # the book forbids a slow heart rate
    result = screen_patient(demo_runtime.store, ["bisoprolol"], PatientProfile(), stated=["nhịp tim nhanh"] + said)
    assert not any("chậm" in f.quote for f in result.findings)


def test_a_weight_under_the_dosing_section_s_limit_applies(demo_runtime):
    light = screen(demo_runtime, ["domperidon"], age_years=13, age_text="13 tuổi", weight_kg=30, pediatric=True)
    assert any("dưới 35 kg" in f.quote for f in light.contraindicated())
    heavier = screen(demo_runtime, ["domperidon"], age_years=13, age_text="13 tuổi", weight_kg=40, pediatric=True)
    assert not heavier.contraindicated()


def test_an_age_group_the_caution_section_declines_is_an_age_limit(demo_runtime):
    infant = screen(demo_runtime, ["cetirizin"], age_years=1.2, age_text="14 tháng", pediatric=True)
    assert any("dưới 2 tuổi" in f.quote for f in infant.contraindicated())
    assert not screen(demo_runtime, ["cetirizin"], age_years=3, age_text="3 tuổi", pediatric=True).contraindicated()


def test_a_limit_for_one_route_applies_when_that_route_is_asked(demo_runtime):
    injected = screen(demo_runtime, ["diclofenac"], age_years=10, age_text="10 tuổi", pediatric=True, route="tiêm")
    assert any("Dạng tiêm" in f.quote for f in injected.contraindicated())
    swallowed = screen(demo_runtime, ["diclofenac"], age_years=10, age_text="10 tuổi", pediatric=True, route="uống")
    assert not swallowed.contraindicated()


def test_a_limit_waived_only_by_a_doctor_s_order_applies_to_a_parent_asking(demo_runtime):
    infant = screen(demo_runtime, ["ibuprofen"], age_years=7 / 52, age_text="7 tuần tuổi", weight_kg=4.2, pediatric=True)
    assert any("dưới 3 tháng" in f.quote for f in infant.contraindicated())


# Issue 26: interaction contraindications the clinical review added, screened from both drugs' text.
@pytest.mark.parametrize("asked, taken", [
    ("domperidon", "fluconazol"), ("fluconazol", "domperidon"),
    ("domperidon", "levofloxacin"), ("levofloxacin", "domperidon"),
])
def test_a_qt_contraindicated_pair_applies_whichever_is_asked(demo_runtime, asked, taken):
    term = medication_term(taken, demo_runtime.resolver)
    names = {asked: demo_runtime.resolver.names_of(asked)}
    result = screen_patient(demo_runtime.store, [asked], PatientProfile(medications=(term,)), names)
    applying = result.contraindicated(asked)
    assert applying and all(f.hit.chunk.section_key == "chong_chi_dinh" for f in applying)
    assert any(taken in f.quote.lower() for f in applying)


def test_azithromycin_with_domperidon_is_a_caution_not_a_contraindication(demo_runtime):
    term = medication_term("azithromycin", demo_runtime.resolver)
    result = screen(demo_runtime, ["domperidon"], medications=(term,))
    assert not result.contraindicated("domperidon")
    assert any(f.kind is FindingKind.INTERACTION and "thận trọng" in f.quote for f in result.findings)


def test_aspirin_and_methotrexat_is_still_contraindicated_and_says_for_which_doses(demo_runtime):
    term = medication_term("methotrexat", demo_runtime.resolver)
    applying = screen(demo_runtime, ["acid_acetylsalicylic"], medications=(term,)).contraindicated()
    assert applying and "liều giảm đau" in applying[0].quote and "15 mg/tuần" in applying[0].quote
