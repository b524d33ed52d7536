"""Whether one contraindication record of the book holds for this patient, from typed facts only.

Pure: no I/O, no text read. ``judge`` checks each constraint the record carries against the patient's
facts and combines the checks by an ordered table (first row that matches wins):

1. a stated fact excludes a constraint (a denial, a number on the other side, term not preterm) → RULED_OUT
2. a constraint that must be raised by the patient (a condition, a population, an allergy, a purpose,
   a co-medication) is not → NOT_RAISED
3. nothing the patient said touches any constraint → NOT_RAISED
4. every constraint holds → APPLIES
5. otherwise (touched, not decided: "suy thận" with no clearance, a newborn with no word on prematurity)
   → UNDETERMINED, with the one question that decides it

Constraints that only qualify a raised one (a threshold beside a population, prematurity, jaundice, the
form of the drug, a past reaction beside the condition it caused) count as *undecided* when not said:
absence of evidence is never "safe".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from duocthu.drug_classes import CLASS_NAMES
from duocthu.measures import MEASURE_NAMES
from duocthu.text import fold
from duocthu.types import ContraindicationRecord, PopulationLimit, Threshold
from duocthu.understanding.frame import PatientFacts


class Status(StrEnum):
    APPLIES = "applies"
    RULED_OUT = "ruled_out"
    UNDETERMINED = "undetermined"
    NOT_RAISED = "not_raised"


@dataclass(frozen=True)
class Verdict:
    """A record judged for a patient: the status, the facts that decided it, and the question that would."""

    status: Status
    record: ContraindicationRecord
    decided_by: tuple[str, ...] = ()
    question: str | None = None


@dataclass(frozen=True)
class _Check:
    status: Status
    facts: tuple[str, ...] = ()
    question: str | None = None
    gate: bool = True  # a constraint the patient must raise for the record to concern them


@dataclass(frozen=True)
class _Case:
    """The facts ``judge`` reads, gathered once."""

    patient: PatientFacts
    age_years: float | None
    weight_kg: float | None
    drug_classes: frozenset[str]
    allergy_classes: frozenset[str]
    taking: frozenset[str]  # drug ids, their classes and folded names of other products being taken
    form: str | None

    @property
    def is_baby(self) -> bool | None:
        """Under one year (True), older (False), unknown (None)."""
        return None if self.age_years is None else self.age_years < 1

    @property
    def said_baby_facts(self) -> bool:
        p = self.patient
        return p.preterm is not None or p.jaundice is not None or p.gestation_weeks is not None


QUESTIONS: dict[str, str] = {
    "creatinine_clearance": "Độ thanh thải creatinin là bao nhiêu?",
    "egfr": "Mức lọc cầu thận (eGFR) là bao nhiêu?",
    "serum_creatinine": "Creatinin máu là bao nhiêu?",
    "potassium": "Kali máu là bao nhiêu?",
    "sodium": "Natri máu là bao nhiêu?",
    "inr": "Chỉ số INR là bao nhiêu?",
    "qtc": "Khoảng QTc là bao nhiêu?",
    "heart_rate": "Nhịp tim là bao nhiêu lần/phút?",
    "systolic_bp": "Huyết áp tâm thu là bao nhiêu?",
    "alt": "Men gan (ALT) là bao nhiêu?",
    "child_pugh": "Suy gan mức Child-Pugh nào (A, B hay C)?",
    "nyha": "Suy tim độ NYHA mấy?",
    "dose_per_day": "Liều định dùng mỗi ngày là bao nhiêu mg?",
    "dose_per_week": "Liều định dùng mỗi tuần là bao nhiêu mg?",
    "preterm": "Bé sinh đủ tháng hay sinh non?",
    "jaundice": "Bé có bị vàng da không?",
    "age": "Người bệnh bao nhiêu tuổi (trẻ sơ sinh: bao nhiêu ngày tuổi)?",
    "weight": "Người bệnh nặng bao nhiêu kg?",
    "trimester": "Đang mang thai ở tháng thứ mấy?",
    "allergy": "Bạn bị dị ứng với thuốc nào?",
    "reaction": "Trước đây đã từng bị như vậy khi dùng thuốc (hoặc nhóm thuốc) này chưa?",
    "form": "Bạn dùng dạng thuốc nào (uống, tiêm, nhỏ mắt …)?",
    "circumstance": "Trường hợp của người bệnh có đúng như câu trên của Dược thư không?",
}
# The condition a measure grades: a patient who names it without the number is touched but undecided.
MEASURED_CONDITIONS: dict[str, tuple[str, ...]] = {
    "creatinine_clearance": ("suy thận",), "egfr": ("suy thận",), "serum_creatinine": ("suy thận",),
    "child_pugh": ("suy gan",), "alt": ("suy gan",), "nyha": ("suy tim",), "potassium": ("tăng kali máu",),
    "sodium": ("hạ natri máu",), "qtc": ("kéo dài khoảng QT",), "systolic_bp": ("hạ huyết áp",),
    "heart_rate": ("nhịp tim chậm",),
}
# A severity the book defines by this number: "suy thận nặng" means a clearance under 30.
SEVERE_MEANS: dict[str, float] = {"creatinine_clearance": 30.0, "egfr": 30.0}
# Units that name the same scale for the comparison (eGFR per 1,73 m² read as ml/phút; K⁺ in mEq/l is mmol/l).
_SAME_UNITS = ({"ml/phút", "ml/phút/1,73 m²"}, {"mmol/l", "meq/l"}, {"x uln", "lần"})


def judge(
    record: ContraindicationRecord,
    patient: PatientFacts,
    age_years: float | None,
    weight_kg: float | None,
    drug_classes: frozenset[str],
    classes_by_drug: Mapping[str, frozenset[str]] | None = None,
    form: str | None = None,
) -> Verdict:
    """The verdict of one record for this patient (see the module docstring for the table).

    ``classes_by_drug`` maps the book's drug ids to their class ids (``drug_classes.classes_of`` of their ATC
    codes), for past reactions and co-medications named by drug; ``form`` is the form or route asked, if any.
    """
    case = _case(patient, age_years, weight_kg, drug_classes, classes_by_drug or {}, form)
    checks = [check for check in (rule(record, case) for rule in _RULES) if check is not None]
    return _combine(record, checks)


def _case(patient: PatientFacts, age: float | None, weight: float | None, drug_classes: frozenset[str],
          classes_by_drug: Mapping[str, frozenset[str]], form: str | None) -> _Case:
    allergy = set(patient.allergy_classes)
    for drug_id in patient.allergies:
        allergy |= classes_by_drug.get(drug_id, frozenset())
    taking = set(patient.current_medications) | {fold(name) for name in patient.other_medications}
    for drug_id in patient.current_medications:
        taking |= classes_by_drug.get(drug_id, frozenset())
    return _Case(patient, age, weight, drug_classes, frozenset(allergy), frozenset(taking), form)


def _combine(record: ContraindicationRecord, checks: list[_Check]) -> Verdict:
    def facts(selected: Iterable[_Check]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(f for c in selected for f in c.facts))

    ruled_out = [c for c in checks if c.status == Status.RULED_OUT]
    if ruled_out:  # row 1
        return Verdict(Status.RULED_OUT, record, facts(ruled_out))
    if any(c.gate and c.status == Status.NOT_RAISED for c in checks):  # row 2
        return Verdict(Status.NOT_RAISED, record)
    if all(c.status == Status.NOT_RAISED for c in checks):  # row 3
        return Verdict(Status.NOT_RAISED, record)
    if all(c.status == Status.APPLIES for c in checks):  # row 4
        return Verdict(Status.APPLIES, record, facts(checks))
    undecided = [c for c in checks if c.status in (Status.UNDETERMINED, Status.NOT_RAISED)]
    question = next((c.question for c in undecided if c.question), QUESTIONS["circumstance"])
    return Verdict(Status.UNDETERMINED, record, facts(c for c in checks if c.status != Status.NOT_RAISED), question)


# --- one check per kind of constraint ------------------------------------------------------------


def _conditions(record: ContraindicationRecord, case: _Case) -> _Check | None:
    """The condition, graded by the record's numbers when the patient gave them."""
    if not record.conditions:
        return None
    if record.thresholds:
        measured = _thresholds_measured(record.thresholds, case)
        if measured is not None:
            return measured
    denied = _denied(record.conditions, case.patient.denied_conditions)
    if denied:
        return _Check(Status.RULED_OUT, (f"không bị {denied}",))
    for label in record.conditions:
        for stated in case.patient.conditions:
            check = _condition_match(record, label, stated, case.patient.conditions)
            if check is not None:
                return check
    return _Check(Status.NOT_RAISED)


def _denied(labels: tuple[str, ...], denied: list[str]) -> str | None:
    """The denial that rules these conditions out: the same condition, or a broader one."""
    for label in labels:
        for said in denied:
            if fold(said) == fold(label) or fold(label).startswith(fold(said) + " "):
                return said
    return None


def _condition_match(record: ContraindicationRecord, label: str, stated: str, all_stated: list[str]) -> _Check | None:
    """How a condition the patient stated meets the record's condition ``label`` at its severity."""
    said, wanted = fold(stated), fold(label)
    if said != wanted and not said.startswith(wanted + " "):
        return None
    narrower = said[len(wanted):].strip()  # "nặng" when "suy thận nặng" meets "suy thận"
    facts: tuple[str, ...] = (f"có {stated}",)
    severity, extra = _split_severity(record.severity)
    if extra is not None:  # "rung nhĩ kèm hội chứng WPW": the second condition must be stated too
        if not any(fold(other) in extra for other in all_stated if other != stated):
            return _Check(Status.UNDETERMINED, facts, f"Người bệnh có {label} {record.severity} không?")
        facts = (*facts, f"có {record.severity}")
    measure_question = next((QUESTIONS.get(t.quantity) for t in record.thresholds), None)
    if severity is None and not record.thresholds:
        return _Check(Status.APPLIES, facts)
    if not narrower or (severity is not None and fold(severity) not in narrower):
        # the condition named without how severe, or without the number the book needs
        return _Check(Status.UNDETERMINED, facts, measure_question or _severity_question(label, severity))
    stricter = [t for t in record.thresholds if not _severity_implies(t)]
    if stricter:
        return _Check(Status.UNDETERMINED, facts, QUESTIONS.get(stricter[0].quantity))
    return _Check(Status.APPLIES, facts)


def _severity_question(label: str, severity: str | None) -> str:
    """The question that decides a severity: "Suy gan có nặng không?", "Nhịp tim chậm có triệu chứng không?"."""
    if not severity:
        return f"{label.capitalize()} ở mức độ nào?"
    return f"{label.capitalize()} {severity if severity.startswith('có ') else 'có ' + severity} không?"


def _split_severity(severity: str | None) -> tuple[str | None, str | None]:
    """("nặng", "suy thận") for "nặng kèm suy thận": the severity word and the condition that must come with it."""
    if severity is None:
        return None, None
    words = severity.split()
    for index, word in enumerate(words):
        if word == "kèm" or (word == "có" and index > 0):  # "có triệu chứng" opening it is a severity
            base = " ".join(words[:index]) or None
            return base, fold(" ".join(words[index + 1:]))
    return severity, None


def _severity_implies(threshold: Threshold) -> bool:
    """The severe form the patient named already meets this number ("suy thận nặng" meets CrCl < 30)."""
    cut = SEVERE_MEANS.get(threshold.quantity)
    return cut is not None and threshold.comparator in ("<", "<=") and threshold.value >= cut


def _thresholds(record: ContraindicationRecord, case: _Case) -> _Check | None:
    """Numbers of a record that names no condition ("liều trên 100 mg/ngày", "kali > 5,0")."""
    if not record.thresholds or record.conditions:
        return None
    gate = not _has_other_constraint(record)
    measured = _thresholds_measured(record.thresholds, case)
    if measured is not None:
        return _Check(measured.status, measured.facts, measured.question, gate)
    question = QUESTIONS.get(record.thresholds[0].quantity)
    for threshold in record.thresholds:
        for stated in case.patient.conditions:
            if any(_related(stated, c) for c in MEASURED_CONDITIONS.get(threshold.quantity, ())):
                return _Check(Status.UNDETERMINED, (f"có {stated}",), QUESTIONS.get(threshold.quantity), gate)
    return _Check(Status.NOT_RAISED, (), question, gate)


def _has_other_constraint(record: ContraindicationRecord) -> bool:
    return bool(record.population or record.hypersensitivity or record.purposes or record.co_medications
                or record.preterm is not None or record.jaundice is not None)


def _related(stated: str, label: str) -> bool:
    return fold(stated) == fold(label) or fold(stated).startswith(fold(label) + " ")


def _thresholds_measured(thresholds: tuple[Threshold, ...], case: _Case) -> _Check | None:
    """Every threshold compared with the patient's number for it; None when a number is missing."""
    results: list[tuple[Status, str]] = []
    for threshold in thresholds:
        measure = _measure_for(threshold.quantity, case.patient)
        if measure is None:
            return None
        value, comparator, unit = measure
        fact = f"{_measure_name(threshold.quantity)} {'' if comparator == '=' else comparator + ' '}{value:g} {unit}".strip()
        if unit and threshold.unit and not _same_unit(unit, threshold.unit):
            results.append((Status.UNDETERMINED, fact))
            continue
        results.append((_compare(value, comparator, threshold), fact))
    facts = tuple(fact for _, fact in results)
    statuses = {status for status, _ in results}
    if Status.RULED_OUT in statuses:
        return _Check(Status.RULED_OUT, facts)
    if statuses == {Status.APPLIES}:
        return _Check(Status.APPLIES, facts)
    return _Check(Status.UNDETERMINED, facts, QUESTIONS.get(thresholds[0].quantity))


def _measure_for(quantity: str, patient: PatientFacts) -> tuple[float, str, str] | None:
    for measure in patient.measures:
        if measure.quantity == quantity:
            return measure.value, measure.comparator, measure.unit
    if quantity in ("creatinine_clearance", "egfr") and patient.renal_clearance_ml_min is not None:
        return patient.renal_clearance_ml_min, "=", "ml/phút"
    return None


def _measure_name(quantity: str) -> str:
    names = MEASURE_NAMES.get(quantity)
    return names[0] if names else quantity


def _same_unit(a: str, b: str) -> bool:
    a, b = a.lower(), b.lower()
    return a == b or any(a in group and b in group for group in _SAME_UNITS)


def _compare(value: float, comparator: str, threshold: Threshold) -> Status:
    """Whether every value the patient's statement allows meets the threshold (APPLIES), none does
    (RULED_OUT), or some do (UNDETERMINED): "dưới 10" meets "< 30" whatever the exact number is."""
    low, low_open, high, high_open = _interval(value, comparator)
    t, op = threshold.value, threshold.comparator
    if op in ("<", "<="):
        all_meet = high < t or (high == t and (op == "<=" or high_open))
        none_meet = low > t or (low == t and (op == "<" or low_open))
    else:
        all_meet = low > t or (low == t and (op == ">=" or low_open))
        none_meet = high < t or (high == t and (op == ">" or high_open))
    if all_meet:
        return Status.APPLIES
    return Status.RULED_OUT if none_meet else Status.UNDETERMINED


def _interval(value: float, comparator: str) -> tuple[float, bool, float, bool]:
    inf = float("inf")
    return {
        "<": (-inf, True, value, True), "<=": (-inf, True, value, False),
        ">": (value, True, inf, True), ">=": (value, False, inf, True),
    }.get(comparator, (value, False, value, False))


def _population(record: ContraindicationRecord, case: _Case) -> _Check | None:
    limit = record.population
    if limit is None:
        return None
    check = _population_status(limit, case)
    if check.status == Status.APPLIES and limit.route and case.form is not None:
        if fold(limit.route) not in fold(case.form):
            return _Check(Status.RULED_OUT, (f"dùng {case.form}",))
    elif check.status == Status.APPLIES and limit.conditional and not _has_own_circumstance(record):
        question = QUESTIONS["form"] if limit.route else QUESTIONS["circumstance"]
        return _Check(Status.UNDETERMINED, check.facts, question)
    return check


def _has_own_circumstance(record: ContraindicationRecord) -> bool:
    """The record itself carries what makes its population conditional (a condition, jaundice, a purpose …)."""
    return bool(record.conditions or record.thresholds or record.purposes or record.co_medications
                or record.jaundice is not None or record.hypersensitivity)


def _population_status(limit: PopulationLimit, case: _Case) -> _Check:
    patient = case.patient
    if limit.kind == "pregnancy":
        if not patient.pregnant:
            return _Check(Status.NOT_RAISED)
        if not limit.trimesters:
            return _Check(Status.APPLIES, ("đang mang thai",))
        if patient.trimester is None:
            return _Check(Status.UNDETERMINED, ("đang mang thai",), QUESTIONS["trimester"])
        fact = (f"mang thai 3 tháng thứ {patient.trimester}",)
        return _Check(Status.APPLIES if patient.trimester in limit.trimesters else Status.RULED_OUT, fact)
    if limit.kind == "breastfeeding":
        return _Check(Status.APPLIES, ("đang cho con bú",)) if patient.breastfeeding else _Check(Status.NOT_RAISED)
    if limit.kind == "weight":
        return _weight_status(limit, case)
    return _age_status(limit, case)


def _age_status(limit: PopulationLimit, case: _Case) -> _Check:
    age = case.age_years
    if age is None:
        if case.said_baby_facts:
            return _Check(Status.UNDETERMINED, (), QUESTIONS["age"])
        return _Check(Status.NOT_RAISED)
    fact = (f"tuổi: {age_text(age)}",)
    if limit.max_age_years is not None and age >= limit.max_age_years:
        return _Check(Status.RULED_OUT, fact)
    if limit.min_age_years is not None and age < limit.min_age_years:
        return _Check(Status.RULED_OUT, fact)
    return _Check(Status.APPLIES, fact)


def _weight_status(limit: PopulationLimit, case: _Case) -> _Check:
    if case.weight_kg is None:
        if case.age_years is not None and case.age_years < 18:
            return _Check(Status.UNDETERMINED, (f"tuổi: {age_text(case.age_years)}",), QUESTIONS["weight"])
        return _Check(Status.NOT_RAISED)
    fact = (f"cân nặng: {case.weight_kg:g} kg",)
    below = limit.max_weight_kg is not None and case.weight_kg < limit.max_weight_kg
    return _Check(Status.APPLIES if below else Status.RULED_OUT, fact)


def age_text(years: float) -> str:
    """An age as the book writes it: years, else months, else days."""
    if years >= 1:
        return f"{years:g} tuổi"
    if years * 12 >= 1:
        return f"{years * 12:.0f} tháng"
    return f"{years * 365:.0f} ngày"


def _preterm(record: ContraindicationRecord, case: _Case) -> _Check | None:
    if record.preterm is None:
        return None
    patient = case.patient
    said = patient.preterm
    if said is None and patient.gestation_weeks is not None:
        said = patient.gestation_weeks < 37
    if said is not None:
        fact = ("sinh non",) if said else ("sinh đủ tháng",)
        return _Check(Status.APPLIES if said == record.preterm else Status.RULED_OUT, fact, gate=False)
    if case.is_baby is False:
        return _Check(Status.RULED_OUT, (f"tuổi: {age_text(case.age_years or 0)}",), gate=False)
    status = Status.UNDETERMINED if case.is_baby else Status.NOT_RAISED
    return _Check(status, (), QUESTIONS["preterm"], gate=record.population is None)


def _jaundice(record: ContraindicationRecord, case: _Case) -> _Check | None:
    if not record.jaundice:
        return None
    said = case.patient.jaundice
    if said is not None:
        return _Check(Status.APPLIES if said else Status.RULED_OUT, ("vàng da",) if said else ("không vàng da",),
                      gate=False)
    status = Status.UNDETERMINED if case.is_baby else Status.NOT_RAISED
    return _Check(status, (), QUESTIONS["jaundice"], gate=False)


def _hypersensitivity(record: ContraindicationRecord, case: _Case) -> _Check | None:
    if not record.hypersensitivity:
        return None
    patient = case.patient
    gate = not record.conditions  # "Tiền sử hen khi dùng NSAID": the reaction qualifies the condition
    hits = [h for h in record.hypersensitivity if h != "self" and (h in case.allergy_classes or h in patient.allergies)]
    if "self" in record.hypersensitivity and (record.drug_id in patient.allergies
                                              or case.drug_classes & case.allergy_classes):
        hits.insert(0, "self")
    if hits:
        named = ", ".join("thuốc này" if h == "self" else CLASS_NAMES.get(h, (h,))[0] for h in hits)
        return _Check(Status.APPLIES, (f"đã dị ứng/phản ứng với {named}",), gate=gate)
    if patient.unnamed_allergy:
        return _Check(Status.UNDETERMINED, ("có dị ứng thuốc (chưa rõ thuốc nào)",), QUESTIONS["allergy"], gate=False)
    if patient.no_known_drug_allergy:
        return _Check(Status.RULED_OUT, ("không dị ứng thuốc",), gate=gate)
    return _Check(Status.NOT_RAISED, (), QUESTIONS["reaction"], gate=gate)


def _purposes(record: ContraindicationRecord, case: _Case) -> _Check | None:
    if not record.purposes:
        return None
    wanted = set(case.patient.purposes)
    shared = [p for p in record.purposes if p in wanted]
    if shared:
        return _Check(Status.APPLIES, (f"dùng để: {', '.join(shared)}",))
    if wanted:
        return _Check(Status.RULED_OUT, (f"dùng để: {', '.join(sorted(wanted))}",))
    return _Check(Status.NOT_RAISED)


def _co_medications(record: ContraindicationRecord, case: _Case) -> _Check | None:
    if not record.co_medications:
        return None
    shared = [m for m in record.co_medications if m in case.taking or fold(m) in case.taking]
    if shared:
        return _Check(Status.APPLIES, (f"đang dùng {', '.join(shared)}",))
    return _Check(Status.NOT_RAISED)


def _form(record: ContraindicationRecord, case: _Case) -> _Check | None:
    if record.form is None:
        return None
    if case.form is None:
        return _Check(Status.NOT_RAISED, (), QUESTIONS["form"], gate=False)
    same = fold(case.form) in fold(record.form) or fold(record.form) in fold(case.form)
    if not same:
        # forms are compared by their words ("viên đạn" is "đặt trực tràng"): a mismatch of words rules nothing out
        return _Check(Status.NOT_RAISED, (), QUESTIONS["form"], gate=False)
    return _Check(Status.APPLIES, (f"dùng {case.form}",), gate=False)


_RULES: tuple[Callable[[ContraindicationRecord, _Case], _Check | None], ...] = (
    _conditions, _thresholds, _population, _preterm, _jaundice, _hypersensitivity, _purposes, _co_medications, _form,
)
