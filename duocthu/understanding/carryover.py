"""Carry-over: how a turn inherits the conversation's frame, as a table of explicit rules.

Read top to bottom; every rule that applies is applied, in order, and records its id in
``frame.inherited``. Patient facts accumulate over the whole conversation; what the turn asks
(drug, section, turn type) is inherited only when the turn itself does not say it. One unit test
per rule lives in ``tests/test_understanding_carryover.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from duocthu.lexicon import LEXICON
from duocthu.text import fold, words
from duocthu.understanding.evidence import TurnEvidence
from duocthu.understanding.frame import (
    PatientFacts,
    PatientMeasure,
    Population,
    QueryFrame,
    TurnType,
)
from duocthu.understanding.patient import PRONOUN_DRUG_REFERENCES
from duocthu.understanding.reverse import condition_answer, is_ambiguous_condition, is_symptom
from duocthu.understanding.scope import has_phrase

FOLLOW_UP_WORDS = LEXICON.phrases("follow_up_words")
TOGETHER_WORDS = LEXICON.phrases("together_words")
DRUG_QUESTIONS = frozenset({TurnType.DRUG_ATTRIBUTE, TurnType.DRUG_OVERVIEW, TurnType.DOSING_CALC, TurnType.INTERACTION})
FACT_FIELDS = ("population", "age_text", "age_years", "weight_kg", "route")
# Turns that end the matter at hand: they do not inherit what was asked.
SELF_CONTAINED = frozenset({TurnType.SMALLTALK, TurnType.OUT_OF_SCOPE, TurnType.CRISIS, TurnType.EMERGENCY,
                            TurnType.MEDICAL_QUESTION, TurnType.CONDITION_RELATION})


@dataclass(frozen=True)
class CarryRule:
    id: str
    when: str  # the situation, in words
    effect_text: str
    why: str
    applies: Callable[[QueryFrame, QueryFrame, TurnEvidence], bool]
    effect: Callable[[QueryFrame, QueryFrame, TurnEvidence], QueryFrame]


def _mark(frame: QueryFrame, rule_id: str, **changes: object) -> QueryFrame:
    return frame.model_copy(update={**changes, "inherited": [*frame.inherited, rule_id]})


def merge_patient(prior: PatientFacts, current: PatientFacts, said_not_pregnant: bool = False) -> PatientFacts:
    """Facts of the whole conversation: lists grow, flags stay set, a new number replaces an old one, and a
    later turn's word on a condition (has it / denies it) or a newborn's state overrides an earlier one."""
    def union(a: list[str], b: list[str]) -> list[str]:
        return list(dict.fromkeys([*a, *b]))

    pregnant = (prior.pregnant or current.pregnant) and not said_not_pregnant
    allergies = union(prior.allergies, current.allergies)
    unnamed = (prior.unnamed_allergy and not current.no_known_drug_allergy) or current.unnamed_allergy
    return PatientFacts(
        current_medications=union(prior.current_medications, current.current_medications),
        other_medications=union(prior.other_medications, current.other_medications),
        conditions=union([c for c in prior.conditions if c not in current.denied_conditions], current.conditions),
        pregnant=pregnant,
        trimester=(current.trimester or prior.trimester) if pregnant else None,
        breastfeeding=prior.breastfeeding or current.breastfeeding,
        renal_clearance_ml_min=current.renal_clearance_ml_min or prior.renal_clearance_ml_min,
        crisis=prior.crisis or current.crisis,
        allergies=allergies,
        denied_conditions=union([c for c in prior.denied_conditions if c not in current.conditions],
                                current.denied_conditions),
        measures=_merge_measures(prior.measures, current.measures),
        gestation_weeks=current.gestation_weeks if current.gestation_weeks is not None else prior.gestation_weeks,
        preterm=current.preterm if current.preterm is not None else prior.preterm,
        jaundice=current.jaundice if current.jaundice is not None else prior.jaundice,
        purposes=union(prior.purposes, current.purposes),
        allergy_classes=union(prior.allergy_classes, current.allergy_classes),
        unnamed_allergy=unnamed,
        # A reaction said anywhere in the conversation outweighs "no drug allergy": fail closed.
        no_known_drug_allergy=(prior.no_known_drug_allergy or current.no_known_drug_allergy)
        and not (allergies or unnamed),
    )


def _merge_measures(prior: list[PatientMeasure], current: list[PatientMeasure]) -> list[PatientMeasure]:
    """One number per measure: the latest said."""
    latest = {m.quantity: m for m in prior}
    latest.update({m.quantity: m for m in current})
    return list(latest.values())


def _asks_nothing_new(frame: QueryFrame, ev: TurnEvidence) -> bool:
    return frame.section_key is None and "section_named" not in frame.cues and not frame.is_reverse_lookup


def _states_new_patient(frame: QueryFrame, prior: QueryFrame, ev: TurnEvidence) -> bool:
    """The turn describes someone else (a new population, or a new drug with new age/weight)."""
    facts = ev.facts
    if facts.states_population and facts.population is not None and prior.population is not None \
            and facts.population is not prior.population:
        return True
    # A question that names its drug and gives an age or a weight is about the patient it describes.
    return bool(ev.resolution.mentions) and (facts.age is not None or facts.weight_kg is not None)


def _patient_facts(prior: QueryFrame, frame: QueryFrame, ev: TurnEvidence) -> QueryFrame:
    patient = merge_patient(prior.patient, frame.patient, said_not_pregnant=ev.facts.pregnant is False)
    updates: dict[str, object] = {"patient": patient}
    if not _states_new_patient(frame, prior, ev):
        weak_population = frame.population is not None and not ev.facts.states_population
        for name in FACT_FIELDS:
            current, previous = getattr(frame, name), getattr(prior, name)
            if previous is not None and (current is None or (name == "population" and weak_population)):
                updates[name] = previous
    return _mark(frame, "facts_accumulate", **updates)


def _pronoun_is_taken(prior: QueryFrame, frame: QueryFrame, ev: TurnEvidence) -> bool:
    return ev.facts.current_pronoun and bool(prior.drugs)


def _taken_pronoun(prior: QueryFrame, frame: QueryFrame, ev: TurnEvidence) -> QueryFrame:
    taken = list(dict.fromkeys([*frame.patient.current_medications, *prior.drugs]))
    patient = frame.patient.model_copy(update={"current_medications": taken})
    asked = [d for d in frame.drugs if d not in prior.drugs]
    if asked or frame.unknown_drugs:
        return _mark(frame, "pronoun_is_taken", patient=patient, turn_type=TurnType.INTERACTION,
                     drugs=list(dict.fromkeys([*prior.drugs, *asked])), section_key="tuong_tac_thuoc")
    return _mark(frame, "pronoun_is_taken", patient=patient)


def _pronoun_with_new_drug(prior: QueryFrame, frame: QueryFrame, ev: TurnEvidence) -> bool:
    return (len(frame.drugs) == 1 and bool(prior.drugs) and frame.drugs[0] not in prior.drugs
            and has_phrase(ev.text, PRONOUN_DRUG_REFERENCES)
            and (frame.turn_type is TurnType.INTERACTION or has_phrase(ev.text, TOGETHER_WORDS)))


def _inherits_drug(prior: QueryFrame, frame: QueryFrame, ev: TurnEvidence) -> bool:
    # "Có pha chung với Ringer lactat được không?": the other product is the object of the question
    # about the conversation's drug, not a drug asked about.
    about_other = frame.section_key in ("tuong_ky", "tuong_tac_thuoc") or has_phrase(ev.text, TOGETHER_WORDS)
    return (not frame.drugs and (not frame.unknown_drugs or about_other) and bool(prior.drugs)
            and frame.turn_type in DRUG_QUESTIONS | {TurnType.OVERDOSE_TAKEN})


def _same_question_new_drug(prior: QueryFrame, frame: QueryFrame, ev: TurnEvidence) -> bool:
    return (bool(frame.drugs) and frame.drugs != prior.drugs and _asks_nothing_new(frame, ev)
            and has_phrase(ev.text, FOLLOW_UP_WORDS) and prior.turn_type in DRUG_QUESTIONS
            and not ev.residual_words)


def _answers_which_drug(prior: QueryFrame, frame: QueryFrame, ev: TurnEvidence) -> bool:
    waiting = (not prior.drugs and (prior.section_key is not None or bool(prior.unknown_drugs)
                                    or bool(prior.ambiguous_names)))
    return waiting and bool(frame.drugs) and _asks_nothing_new(frame, ev) and prior.turn_type in DRUG_QUESTIONS


def _inherit_question(prior: QueryFrame, frame: QueryFrame, rule_id: str, keep_drugs: bool = False) -> QueryFrame:
    return _mark(
        frame, rule_id, turn_type=prior.turn_type, section_key=prior.section_key, attribute=prior.attribute,
        wants_section_overview=prior.wants_section_overview, asks_number=frame.asks_number or prior.asks_number,
        drugs=list(prior.drugs) if keep_drugs else frame.drugs, needs_clarify=False, clarify_reason=None,
        section_candidates=[],
    )


_NEW_MATTER_CUES = LEXICON.phrases("new_matter_cues")


def _answers_pending_facts(prior: QueryFrame, frame: QueryFrame, ev: TurnEvidence) -> bool:
    """"Bé 5 tuổi" / "Người lớn" / "Tôi không nhớ cân nặng" after a dosing clarify: the dose question continues."""
    waiting = prior.population is None or (
        prior.population is Population.PEDIATRIC and (prior.age_text is None or prior.weight_kg is None))
    return (prior.turn_type is TurnType.DOSING_CALC and waiting and bool(prior.drugs) and not frame.drugs
            and not frame.unknown_drugs and not set(frame.cues) & set(_NEW_MATTER_CUES)
            and len(words(ev.text)) <= 12)


def _answers_with_patient_facts(prior: QueryFrame, frame: QueryFrame, ev: TurnEvidence) -> bool:
    """"Bé sinh đủ tháng" / "CrCl 45" / "dị ứng penicilin" after a question about a drug: the answer to the
    question that decides a contraindication (issue 24) — the drug question continues with the new facts."""
    facts = frame.patient
    typed = bool(facts.measures or facts.allergy_classes or facts.purposes or facts.denied_conditions
                 or facts.unnamed_allergy or facts.no_known_drug_allergy
                 or facts.preterm is not None or facts.jaundice is not None or facts.gestation_weeks)
    return (typed and prior.turn_type in DRUG_QUESTIONS and bool(prior.drugs) and not frame.drugs
            and not frame.unknown_drugs and not set(frame.cues) & set(_NEW_MATTER_CUES)
            and len(words(ev.text)) <= 12)


def _answers_which_condition(prior: QueryFrame, frame: QueryFrame, ev: TurnEvidence) -> bool:
    return (prior.is_reverse_lookup and (not prior.condition or prior.condition_ambiguous) and not frame.drugs
            and not frame.unknown_drugs and not frame.is_reverse_lookup
            and not set(frame.cues) & set(_NEW_MATTER_CUES) and len(words(ev.text)) <= 12)


def _condition_from_turn(prior: QueryFrame, frame: QueryFrame, ev: TurnEvidence) -> QueryFrame:
    condition = condition_answer(ev.text)
    turn_type = prior.turn_type
    if condition and turn_type in (TurnType.CONDITION_TO_DRUG, TurnType.SYMPTOM_TO_DRUG):
        turn_type = TurnType.SYMPTOM_TO_DRUG if is_symptom(condition) else TurnType.CONDITION_TO_DRUG
    return _mark(frame, "answers_which_condition", turn_type=turn_type, condition=condition,
                 indication=condition, condition_relation=prior.condition_relation, section_key=None,
                 condition_ambiguous=is_ambiguous_condition(condition), needs_clarify=False, clarify_reason=None)


def _dosing_follow_up(prior: QueryFrame, frame: QueryFrame, ev: TurnEvidence) -> bool:
    return (frame.turn_type is TurnType.DRUG_ATTRIBUTE and frame.section_key == "lieu_luong_va_cach_dung"
            and prior.turn_type is TurnType.DOSING_CALC and frame.drugs == prior.drugs
            and not frame.wants_section_overview)


TAKEN_REFERENCES = LEXICON.phrases("taken_references")


# "thuốc động kinh của tôi", "thuốc huyết áp tôi đang uống": the medicines taken, named by what they treat.
_TAKEN_BY_PURPOSE_RE = re.compile(r"\bthuoc (?:\w+ ){1,3}?(?:cua (?:toi|minh|em)|(?:toi|minh|em) (?:dang|van) (?:uong|dung))\b")


def refers_to_taken(text: str) -> bool:
    return has_phrase(text, TAKEN_REFERENCES) or bool(_TAKEN_BY_PURPOSE_RE.search(fold(text)))


def _taken(prior: QueryFrame, frame: QueryFrame) -> list[str]:
    """The medicines taken, as this turn leaves them (a switch has already dropped the one replaced)."""
    if "switches_drug" in frame.inherited:
        return list(frame.patient.current_medications)
    return list(prior.patient.current_medications or frame.patient.current_medications)


def _with_what_is_taken(prior: QueryFrame, frame: QueryFrame, ev: TurnEvidence) -> bool:
    """One drug asked "with" what the conversation says the patient takes ("bác sĩ kê clarithromycin, có kỵ
    với thuốc tôi đang dùng không?": the newly prescribed drug is asked, the earlier ones are what is taken)."""
    taken = _taken(prior, frame)
    asked = [d for d in frame.drugs if d not in taken]
    # "Tôi bị viêm họng, uống amoxicilin có được không?" from a patient who said they take methotrexat:
    # whether they *can* take it is, first of all, whether it goes with what they take.
    may_i = has_phrase(ev.text, MAY_I_TAKE) and "section_named" not in frame.cues and bool(taken)
    return (len(asked) == 1 and len(frame.drugs) == 1 and bool(taken)
            and frame.turn_type in DRUG_QUESTIONS
            and (has_phrase(ev.text, TOGETHER_WORDS) or refers_to_taken(ev.text) or may_i))


SWITCH_WORDS = LEXICON.phrases("switch_words")


def _switches_drug(prior: QueryFrame, frame: QueryFrame, ev: TurnEvidence) -> bool:
    """"Vậy đổi sang amlodipin thì sao?": the new drug replaces the one last talked about."""
    new = [d for d in frame.drugs if d not in prior.drugs]
    return len(new) == 1 and bool(prior.drugs) and has_phrase(ev.text, SWITCH_WORDS)


def _switch_drug(prior: QueryFrame, frame: QueryFrame, ev: TurnEvidence) -> QueryFrame:
    replaced = prior.drugs[-1]
    new = [d for d in frame.drugs if d not in prior.drugs]
    taken = [d for d in frame.patient.current_medications if d != replaced]
    patient = frame.patient.model_copy(update={"current_medications": taken})
    turn_type = TurnType.DRUG_ATTRIBUTE if frame.turn_type is TurnType.INTERACTION else frame.turn_type
    section = None if frame.section_key == "tuong_tac_thuoc" and not refers_to_taken(ev.text) else frame.section_key
    return _mark(frame, "switches_drug", drugs=new, patient=patient, turn_type=turn_type, section_key=section)


MAY_I_TAKE = LEXICON.phrases("may_i_take")


CARRY_OVER: tuple[CarryRule, ...] = (
    CarryRule("answers_which_condition", "the last turn asked which condition; this one names no drug or section",
              "this turn's words are the condition of the reverse lookup", "'Đau đầu' answers 'which pain?'",
              _answers_which_condition, _condition_from_turn),
    CarryRule("answers_pending_facts", "the last turn was a dose question waiting for who/age/weight; this gives some",
              "the dose question continues with the new facts", "'Bé 5 tuổi' is not a new question",
              _answers_pending_facts, lambda p, f, ev: _inherit_question(p, f, "answers_pending_facts", keep_drugs=True)),
    CarryRule("answers_with_patient_facts", "the last turn was a drug question; this one only states typed facts "
              "about the patient (prematurity, jaundice, a number, a class reacted to, a denial, a purpose)",
              "the drug question continues with the new facts", "'Bé sinh đủ tháng' answers 'sinh đủ tháng hay sinh non?'",
              _answers_with_patient_facts,
              lambda p, f, ev: _inherit_question(p, f, "answers_with_patient_facts", keep_drugs=True)),
    CarryRule("pronoun_is_taken", "'tôi đang uống nó' — a pronoun in a 'đang uống' span",
              "the conversation's drug is a medicine being taken; a newly named drug makes it an interaction",
              "'Warfarin là thuốc gì?' → 'Tôi đang uống nó, giờ uống ibuprofen được không?'",
              _pronoun_is_taken, _taken_pronoun),
    CarryRule("pronoun_with_new_drug", "'nó dùng chung với Y được không' — a pronoun and a new drug",
              "interaction of the conversation's drug and the new one", "'nó' is the drug talked about",
              _pronoun_with_new_drug,
              lambda p, f, ev: _mark(f, "pronoun_with_new_drug", drugs=[*p.drugs, *f.drugs], section_key="tuong_tac_thuoc",
                                     turn_type=TurnType.INTERACTION, needs_clarify=False, clarify_reason=None)),
    CarryRule("same_question_new_drug", "'còn ibuprofen thì sao?' — a new drug and nothing else asked",
              "the previous question about the new drug", "the follow-up swaps the drug, not the question",
              _same_question_new_drug, lambda p, f, ev: _inherit_question(p, f, "same_question_new_drug")),
    CarryRule("answers_which_drug", "the last turn waited for a drug name (or offered one); this names one",
              "the pending question about the named drug", "'Tác dụng phụ là gì?' → 'paracetamol'",
              _answers_which_drug, lambda p, f, ev: _inherit_question(p, f, "answers_which_drug")),
    CarryRule("inherits_drug", "a drug question that names no drug ('còn tác dụng phụ thì sao?', 'nó', 'thuốc này')",
              "the conversation's drug(s)", "a follow-up keeps the drug talked about",
              _inherits_drug, lambda p, f, ev: _mark(f, "inherits_drug", drugs=list(p.drugs))),
    CarryRule("dosing_follow_up", "a dose question about the drug of a dose conversation",
              "stays a personal dose question (the gates apply)", "the patient of the conversation is the same",
              _dosing_follow_up, lambda p, f, ev: _mark(f, "dosing_follow_up", turn_type=TurnType.DOSING_CALC)),
    CarryRule("facts_accumulate", "always (unless this turn describes someone else)",
              "patient facts, age, weight, population and route of the conversation", "follow-ups must not lose the patient",
              lambda p, f, ev: f.turn_type not in (TurnType.SMALLTALK, TurnType.OUT_OF_SCOPE), _patient_facts),
    CarryRule("switches_drug", "'đổi sang Y' — a new drug said to replace the one talked about",
              "Y alone is asked; the replaced drug is no longer a medicine taken",
              "'Hồi trước bác sĩ kê captopril…' → 'Vậy đổi sang amlodipin thì sao?' asks about amlodipin",
              _switches_drug, _switch_drug),
    CarryRule("with_what_is_taken", "one drug asked 'chung với / kỵ với thuốc tôi đang uống' in a conversation that "
              "named the medicines taken", "interaction of the drug with the medicines taken",
              "'Bác sĩ vừa kê clarithromycin, tôi uống chung được không?' after 'tôi đang uống simvastatin'",
              _with_what_is_taken,
              lambda p, f, ev: _mark(f, "with_what_is_taken", turn_type=TurnType.INTERACTION,
                                     drugs=list(dict.fromkeys([*_taken(p, f), *f.drugs])),
                                     section_key="tuong_tac_thuoc", section_candidates=[],
                                     needs_clarify=False, clarify_reason=None)),
)


def carry_over(prior: QueryFrame | None, frame: QueryFrame, ev: TurnEvidence) -> QueryFrame:
    if prior is None:
        return frame
    for rule in CARRY_OVER:
        if rule.applies(prior, frame, ev):
            frame = rule.effect(prior, frame, ev)
    return frame


def carry_rule_by_id(rule_id: str) -> CarryRule:
    return next(rule for rule in CARRY_OVER if rule.id == rule_id)
