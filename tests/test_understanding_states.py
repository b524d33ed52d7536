"""Typed patient states (issue 24): denials, numbers, newborns, purposes, classes of past reactions.

Every sentence here is written for this test, not taken from an evaluation part.
"""

from __future__ import annotations

import pytest

from duocthu.understanding.frame import TurnType
from duocthu.understanding.intent import IntentPrediction
from duocthu.understanding.learned import base_frame
from duocthu.understanding.patient import clause_of_tokens, extract_facts
from duocthu.understanding.states import (
    denied_positions,
    organs_said_normal,
    parse_birth,
    parse_measures,
    parse_purposes,
    with_broader_classes,
)
from tests.understanding_helpers import demo_entities


def facts(text):
    entities = demo_entities()
    return extract_facts(text, entities.resolver.resolve(text), entities.lexicon, entities.resolver)


def measures(text):
    return [(m.quantity, m.comparator, m.value, m.unit) for m in parse_measures(text)]


# -- denials ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "had", "denied"), [
    ("Chồng tôi không bị hen suyễn, đau lưng dùng naproxen được không", (), ("hen phế quản",)),
    ("ba tôi chưa từng loét bao tử, cũng không suy tim", (), ("loét dạ dày tá tràng", "suy tim")),
    ("em không có tiền sử hen hay loét dạ dày", (), ("hen phế quản", "loét dạ dày tá tràng")),
    ("tôi không sao cả, nhưng bị hen từ nhỏ", ("hen phế quản",), ()),
    ("mẹ tôi bị suy tim nhưng không bị tiểu đường", ("suy tim",), ("đái tháo đường",)),
])
def test_a_denial_governs_the_conditions_of_its_clause(text, had, denied):
    f = facts(text)
    assert set(had) <= set(f.conditions) and set(denied) <= set(f.denied_conditions)
    assert not set(f.conditions) & set(f.denied_conditions)


@pytest.mark.parametrize("text", [
    "dùng ibuprofen được không bị hen thì sao",  # "được không" closes a question
    "không biết con có bị hen không",  # not knowing is no denial
    "bé có bị hen không, uống gì",
])
def test_no_denial_where_the_word_does_not_deny(text):
    f = facts(text)
    assert "hen phế quản" in f.conditions and "hen phế quản" not in f.denied_conditions


def test_a_denial_word_inside_a_condition_s_name_denies_nothing():
    text = "không hen"
    assert denied_positions(text, [(0, 2)], clause_of_tokens(text)) == set()


def test_organs_said_to_work_deny_their_failure():
    text = "chức năng gan và thận của bà vẫn bình thường"
    assert organs_said_normal("chức năng gan và thận vẫn bình thường", clause_of_tokens(text)) == ["suy gan", "suy thận"]
    assert organs_said_normal("thận có tốt không", clause_of_tokens("thận có tốt không")) == []
    assert "suy thận" in facts("ông 70 tuổi, thận bình thường, uống gì hạ sốt").denied_conditions


# -- numbers ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("bố em CrCl dưới 15", [("creatinine_clearance", "<", 15.0, "")]),
    ("độ thanh thải của bà chỉ còn 28 ml/phút", [("creatinine_clearance", "=", 28.0, "ml/phút")]),
    ("eGFR<45", [("egfr", "<", 45.0, "")]),
    ("xét nghiệm kali máu 6,1 mmol/L", [("potassium", "=", 6.1, "mmol/l")]),
    ("INR hiện 2.8 rồi", [("inr", "=", 2.8, "")]),
    ("natri máu thấp hơn 125", [("sodium", "<", 125.0, "")]),
    ("mức lọc cầu thận 60 trở lên", [("egfr", ">=", 60.0, "")]),
    ("QTc đo được 480 ms", [("qtc", "=", 480.0, "ms")]),
    ("tiểu cầu còn 40.000", [("platelets", "=", 40000.0, "")]),
    ("xơ gan Child Pugh C", [("child_pugh", "=", 3.0, "")]),
])
def test_numbers_with_their_measure_comparator_and_unit(text, expected):
    assert measures(text) == expected


@pytest.mark.parametrize("text", [
    "truyền tĩnh mạch 30 phút", "kali clorid 600 mg ngày 2 lần", "INR là gì", "natri clorid 0,9%",
])
def test_no_measure_from_a_dose_a_route_or_a_question(text):
    assert measures(text) == []


def test_the_clearance_of_today_is_still_set():
    f = facts("suy thận, độ thanh thải creatinin 22 ml/phút")
    assert f.renal_clearance_ml_min == 22.0 and f.measures[0].value == 22.0


# -- newborns --------------------------------------------------------------------------------------------

def test_gestation_at_birth_and_prematurity():
    assert parse_birth("con em sinh non lúc 33 tuần", set()).gestation_weeks == 33.0
    assert parse_birth("con em sinh non lúc 33 tuần", set()).preterm is True
    assert parse_birth("bé trai sinh đủ tháng, nặng 3 ký", set()).preterm is False
    assert parse_birth("bé sinh lúc 38 tuần", set()).preterm is False
    assert parse_birth("bé được 3 tuần tuổi", set()).gestation_weeks is None


def test_the_weeks_at_birth_are_not_the_baby_s_age():
    f = facts("bé gái sinh non 34 tuần, nay được 12 ngày tuổi")
    assert (f.birth.gestation_weeks, f.birth.preterm, f.age.text) == (34.0, True, "12 ngày tuổi")
    assert f.pregnant is None


def test_jaundice_said_or_denied():
    assert facts("bé 8 ngày tuổi, không vàng da, bú tốt").jaundice is False
    assert facts("bé 5 ngày, da hơi vàng, bác sĩ nói vàng da sơ sinh").jaundice is True
    assert facts("bé 5 ngày tuổi bú kém").jaundice is None


# -- purposes --------------------------------------------------------------------------------------------

def test_purposes_need_a_purpose_word():
    text = "chị tôi muốn uống thuốc tuyến giáp để xuống cân"
    assert parse_purposes(text, clause_of_tokens(text)).ids == ("weight_loss",)
    text = "bạn tôi cần thuốc cai nghiện"
    assert parse_purposes(text, clause_of_tokens(text)).ids == ("opioid_withdrawal",)
    text = "tôi bị béo phì độ 2, huyết áp cao"
    assert parse_purposes(text, clause_of_tokens(text)).ids == ()


def test_a_name_after_a_purpose_is_not_a_drug_to_ask_about():
    text = "anh tôi dùng methadon để cai heroin được không"
    ev = demo_entities().read(text, IntentPrediction((("drug_attribute", 0.9),), (("chi_dinh", 0.9),)))
    frame = base_frame(ev, TurnType.DRUG_ATTRIBUTE, None)
    assert frame.patient.purposes == ["opioid_withdrawal"]
    assert not frame.ambiguous_names and "heroin" not in frame.unknown_drugs


# -- past reactions --------------------------------------------------------------------------------------

def test_classes_of_past_reactions_in_any_spelling():
    assert facts("hồi nhỏ tôi dị ứng penicillin").allergy_classes == ("penicilin", "beta_lactam")
    assert "quinolon" in facts("em bị mẫn cảm với nhóm fluoroquinolone").allergy_classes
    # a brand not in the book, through its ingredient's class
    assert "quinolon" in facts("năm ngoái tôi dị ứng Tavanic").allergy_classes
    # a book drug, through its ATC codes
    assert "cephalosporin" in facts("con tôi từng dị ứng cefalexin").allergy_classes


def test_a_reaction_to_a_medicine_left_unnamed_is_undecided():
    f = facts("mẹ tôi dị ứng thuốc kháng sinh, không nhớ tên")
    assert f.unnamed_allergy and not f.allergy_classes and not f.no_known_drug_allergy
    assert not facts("tôi dị ứng phấn hoa").unnamed_allergy


def test_no_known_drug_allergy():
    f = facts("ông tôi không dị ứng thuốc nào cả")
    assert f.no_known_drug_allergy and not f.allergies and not f.unnamed_allergy
    assert "dị ứng" in f.denied_conditions and "dị ứng" not in f.conditions


def test_broader_classes_come_from_atc_membership():
    assert with_broader_classes(["salicylat"]) == ("salicylat", "nsaid")
    assert with_broader_classes(["cephalosporin"]) == ("cephalosporin", "beta_lactam")


def test_a_parent_of_a_preterm_baby_is_still_the_patient():
    f = facts("Bé nhà tôi sinh non 35 tuần, mới được 9 ngày, tôi cho bé bú mẹ hoàn toàn, tôi đang uống thuốc huyết áp")
    assert f.birth.preterm is True and f.age is None


def test_a_normal_organ_then_a_denial_in_the_next_clause():
    text = "thận tốt, không bị hen"
    assert organs_said_normal(text, clause_of_tokens(text)) == ["suy thận"]
