"""judge(): one rule per test, on small hand-built records and patient facts."""

from __future__ import annotations

import pytest

from duocthu.retrieval.reasoning import Status, judge
from duocthu.types import ContraindicationRecord, PopulationLimit, Threshold
from duocthu.understanding.frame import PatientFacts, PatientMeasure

CRCL_10 = Threshold("creatinine_clearance", "<", 10.0, "ml/phút")
CRCL_30 = Threshold("creatinine_clearance", "<", 30.0, "ml/phút")
NEWBORN = PopulationLimit("age", "s", max_age_years=28 / 365)


def record(**fields) -> ContraindicationRecord:
    return ContraindicationRecord("thuoc", "chong_chi_dinh", "Câu của sách.", **fields)


def facts(**fields) -> PatientFacts:
    return PatientFacts(**fields)


def verdict(rec, patient=None, age=None, weight=None, classes=frozenset(), **kw):
    return judge(rec, patient or facts(), age, weight, classes, **kw)


def crcl(value: float, comparator: str = "=") -> PatientMeasure:
    return PatientMeasure(quantity="creatinine_clearance", value=value, unit="ml/phút", comparator=comparator)


# conditions and their numbers

def test_stated_condition_applies():
    assert verdict(record(conditions=("hen phế quản",)), facts(conditions=["hen phế quản"])).status == Status.APPLIES


def test_denied_condition_is_ruled_out():
    v = verdict(record(conditions=("loét dạ dày tá tràng",), severity="tiến triển"),
                facts(denied_conditions=["loét dạ dày tá tràng"]))
    assert v.status == Status.RULED_OUT and v.decided_by == ("không bị loét dạ dày tá tràng",)


def test_condition_not_said_is_not_raised():
    assert verdict(record(conditions=("hen phế quản",)), facts(conditions=["tăng huyết áp"])).status == Status.NOT_RAISED


def test_measure_meeting_the_threshold_applies_without_the_condition_named():
    v = verdict(record(conditions=("suy thận",), severity="nặng", thresholds=(CRCL_10,)), facts(measures=[crcl(8)]))
    assert v.status == Status.APPLIES and "8" in v.decided_by[0]


def test_measure_on_the_other_side_is_ruled_out():
    v = verdict(record(conditions=("suy thận",), severity="nặng", thresholds=(CRCL_30,)),
                facts(conditions=["suy thận"], measures=[crcl(45)]))
    assert v.status == Status.RULED_OUT


def test_a_bound_that_decides_whatever_the_exact_number():
    rec = record(conditions=("suy thận",), severity="nặng", thresholds=(CRCL_30,))
    assert verdict(rec, facts(measures=[crcl(10, "<")])).status == Status.APPLIES
    assert verdict(record(conditions=("suy thận",), thresholds=(CRCL_10,)), facts(measures=[crcl(30, "<")])).status \
        == Status.UNDETERMINED


def test_legacy_clearance_field_counts_as_a_measure():
    rec = record(conditions=("suy thận",), severity="nặng", thresholds=(CRCL_10,))
    assert verdict(rec, facts(renal_clearance_ml_min=8)).status == Status.APPLIES


def test_impairment_named_without_the_number_is_undetermined_with_the_question():
    v = verdict(record(conditions=("suy thận",), severity="nặng", thresholds=(CRCL_10,)), facts(conditions=["suy thận"]))
    assert v.status == Status.UNDETERMINED and v.question == "Độ thanh thải creatinin là bao nhiêu?"


def test_severe_form_meets_the_number_that_defines_it_but_not_a_stricter_one():
    patient = facts(conditions=["suy thận nặng"])
    assert verdict(record(conditions=("suy thận",), severity="nặng", thresholds=(CRCL_30,)), patient).status \
        == Status.APPLIES
    assert verdict(record(conditions=("suy thận",), severity="nặng", thresholds=(CRCL_10,)), patient).status \
        == Status.UNDETERMINED


def test_broad_condition_against_a_severe_form_asks_how_severe():
    v = verdict(record(conditions=("suy gan",), severity="nặng"), facts(conditions=["suy gan"]))
    assert v.status == Status.UNDETERMINED and v.question == "Suy gan có nặng không?"
    w = verdict(record(conditions=("nhịp tim chậm",), severity="có triệu chứng"), facts(conditions=["nhịp tim chậm"]))
    assert w.question == "Nhịp tim chậm có triệu chứng không?"


def test_condition_that_must_come_with_another():
    rec = record(conditions=("suy gan",), severity="nặng kèm suy thận")
    assert verdict(rec, facts(conditions=["suy gan nặng", "suy thận"])).status == Status.APPLIES
    v = verdict(rec, facts(conditions=["suy gan nặng"]))
    assert v.status == Status.UNDETERMINED and v.question == "Người bệnh có suy gan nặng kèm suy thận không?"


def test_unit_mismatch_is_undetermined():
    rec = record(thresholds=(Threshold("potassium", ">", 5.0, "mmol/l"),))
    patient = facts(measures=[PatientMeasure(quantity="potassium", value=20, unit="mg/dl")])
    assert verdict(rec, patient).status == Status.UNDETERMINED


def test_threshold_only_record_potassium():
    rec = record(thresholds=(Threshold("potassium", ">", 5.0, "mmol/l"),))
    high = facts(measures=[PatientMeasure(quantity="potassium", value=5.9, unit="mmol/l")])
    normal = facts(measures=[PatientMeasure(quantity="potassium", value=4.1, unit="mmol/l")])
    assert verdict(rec, high).status == Status.APPLIES
    assert verdict(rec, normal).status == Status.RULED_OUT
    assert verdict(rec, facts()).status == Status.NOT_RAISED


# populations

def test_age_limit_by_age():
    rec = record(population=PopulationLimit("age", "s", max_age_years=16.0))
    assert verdict(rec, age=10).status == Status.APPLIES
    assert verdict(rec, age=40).status == Status.RULED_OUT
    assert verdict(rec).status == Status.NOT_RAISED


def test_weight_limit_by_weight_and_asks_a_child_weight():
    rec = record(population=PopulationLimit("weight", "s", max_weight_kg=35.0))
    assert verdict(rec, weight=30).status == Status.APPLIES
    assert verdict(rec, weight=50).status == Status.RULED_OUT
    assert verdict(rec, age=10).question == "Người bệnh nặng bao nhiêu kg?"


def test_pregnancy_by_trimester():
    rec = record(population=PopulationLimit("pregnancy", "s", trimesters=(3,)))
    assert verdict(rec, facts(pregnant=True, trimester=3)).status == Status.APPLIES
    assert verdict(rec, facts(pregnant=True, trimester=1)).status == Status.RULED_OUT
    assert verdict(rec, facts(pregnant=True)).status == Status.UNDETERMINED
    assert verdict(rec, facts()).status == Status.NOT_RAISED


def test_breastfeeding():
    rec = record(population=PopulationLimit("breastfeeding", "s"))
    assert verdict(rec, facts(breastfeeding=True)).status == Status.APPLIES


def test_conditional_population_alone_is_undetermined():
    rec = record(population=PopulationLimit("age", "s", max_age_years=18.0, conditional=True))
    assert verdict(rec, age=15).status == Status.UNDETERMINED


def test_route_limited_population_by_the_form_asked():
    rec = record(population=PopulationLimit("age", "s", max_age_years=18.0, conditional=True, route="tiêm"))
    assert verdict(rec, age=10, form="uống").status == Status.RULED_OUT
    assert verdict(rec, age=10).question == "Bạn dùng dạng thuốc nào (uống, tiêm, nhỏ mắt …)?"


def test_dose_threshold_beside_a_population_asks_the_dose():
    rec = record(population=PopulationLimit("pregnancy", "s", trimesters=(3,), conditional=True),
                 thresholds=(Threshold("dose_per_day", ">", 100.0, "mg/ngày"),))
    v = verdict(rec, facts(pregnant=True, trimester=3))
    assert v.status == Status.UNDETERMINED and v.question == "Liều định dùng mỗi ngày là bao nhiêu mg?"


# newborns

def test_preterm_record_for_a_term_baby_is_ruled_out_and_unknown_is_undetermined():
    rec = record(preterm=True)
    assert verdict(rec, facts(preterm=False), age=20 / 365).status == Status.RULED_OUT
    assert verdict(rec, facts(preterm=True), age=20 / 365).status == Status.APPLIES
    v = verdict(rec, facts(), age=20 / 365)
    assert v.status == Status.UNDETERMINED and v.question == "Bé sinh đủ tháng hay sinh non?"
    assert verdict(rec, facts(), age=30).status == Status.RULED_OUT
    assert verdict(rec, facts()).status == Status.NOT_RAISED


def test_gestation_weeks_decide_prematurity():
    assert verdict(record(preterm=True), facts(gestation_weeks=34), age=0.05).status == Status.APPLIES


def test_jaundiced_newborn_record():
    rec = record(population=NEWBORN, preterm=False, jaundice=True)
    assert verdict(rec, facts(preterm=False, jaundice=False), age=20 / 365).status == Status.RULED_OUT
    assert verdict(rec, facts(preterm=False, jaundice=True), age=20 / 365).status == Status.APPLIES
    v = verdict(rec, facts(preterm=False), age=20 / 365)
    assert v.status == Status.UNDETERMINED and v.question == "Bé có bị vàng da không?"
    assert verdict(rec, facts(), age=40).status == Status.RULED_OUT


# allergies

def test_reaction_to_the_class_applies():
    rec = record(hypersensitivity=("penicilin",))
    assert verdict(rec, facts(allergy_classes=["penicilin"])).status == Status.APPLIES


def test_reaction_named_by_drug_maps_to_its_classes():
    rec = record(hypersensitivity=("self", "cephalosporin"))
    patient = facts(allergies=["cefixim"])
    v = verdict(rec, patient, classes_by_drug={"cefixim": frozenset({"cephalosporin", "beta_lactam"})})
    assert v.status == Status.APPLIES


def test_self_applies_to_a_reaction_to_the_drug_or_its_class():
    rec = record(hypersensitivity=("self",))
    assert verdict(rec, facts(allergies=["thuoc"])).status == Status.APPLIES
    assert verdict(rec, facts(allergy_classes=["quinolon"]), classes=frozenset({"quinolon"})).status == Status.APPLIES


def test_unnamed_allergy_is_undetermined_and_asks_which():
    v = verdict(record(hypersensitivity=("self",)), facts(unnamed_allergy=True))
    assert v.status == Status.UNDETERMINED and v.question == "Bạn bị dị ứng với thuốc nào?"


def test_no_known_drug_allergy_rules_out():
    assert verdict(record(hypersensitivity=("self",)), facts(no_known_drug_allergy=True)).status == Status.RULED_OUT


def test_other_allergy_does_not_raise_it():
    rec = record(hypersensitivity=("quinolon",))
    assert verdict(rec, facts(allergy_classes=["penicilin"])).status == Status.NOT_RAISED


def test_reaction_that_qualifies_a_condition_is_asked():
    rec = record(conditions=("hen phế quản",), hypersensitivity=("nsaid",))
    assert verdict(rec, facts(conditions=["hen phế quản"])).status == Status.UNDETERMINED
    both = facts(conditions=["hen phế quản"], allergy_classes=["nsaid"])
    assert verdict(rec, both).status == Status.APPLIES


# purposes, co-medications, form

def test_purpose():
    rec = record(purposes=("weight_loss",))
    assert verdict(rec, facts(purposes=["weight_loss"])).status == Status.APPLIES
    assert verdict(rec, facts(purposes=["sleep"])).status == Status.RULED_OUT
    assert verdict(rec, facts()).status == Status.NOT_RAISED


def test_co_medication_by_drug_class_or_name():
    rec = record(co_medications=("methotrexat", "maoi", "mefloquin"))
    assert verdict(rec, facts(current_medications=["methotrexat"])).status == Status.APPLIES
    assert verdict(rec, facts(current_medications=["x"]), classes_by_drug={"x": frozenset({"maoi"})}).status \
        == Status.APPLIES
    assert verdict(rec, facts(other_medications=["Mefloquin"])).status == Status.APPLIES
    assert verdict(rec, facts(current_medications=["paracetamol"])).status == Status.NOT_RAISED


def test_co_medication_with_a_condition_needs_both():
    rec = record(conditions=("suy thận",), co_medications=("colchicin",))
    assert verdict(rec, facts(conditions=["suy thận"])).status == Status.NOT_RAISED
    assert verdict(rec, facts(conditions=["suy thận"], current_medications=["colchicin"])).status == Status.APPLIES


def test_form_limited_record():
    rec = record(conditions=("nhiễm virus",), form="thuốc nhỏ mắt")
    patient = facts(conditions=["nhiễm virus"])
    assert verdict(rec, patient).status == Status.UNDETERMINED
    assert verdict(rec, patient, form="thuốc nhỏ mắt").status == Status.APPLIES
    # forms are compared by their words: another word for the form ("viên đạn" for "thuốc đạn") must not rule it out
    assert verdict(rec, patient, form="uống").status == Status.UNDETERMINED


@pytest.mark.parametrize("status", list(Status))
def test_statuses_are_strings(status):
    assert isinstance(status.value, str)
