"""The routing table of one turn: read it top to bottom; the first matching row wins.

Each row is data — its number, the condition in words, the outcome in words, and two small
functions (when it applies, what it decides). The agent executes the outcome. Rows 1–16 are the
spec's, in the spec's order; rows 17–27 are this project's, placed where they must act (the
crisis and emergency rows right after the scope guard, the contraindicated-dose row before the
paediatric gates, …). Numbers identify rows; the tuple's order is the order of evaluation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from duocthu.retrieval.safety import SafetyScreen
from duocthu.understanding.frame import ConditionRelation, Population, QueryFrame, TurnType


class Action(StrEnum):
    CLARIFY = "clarify"
    ABSTAIN = "abstain"
    SMALLTALK = "smalltalk"
    CONDITION_TO_DRUG = "condition_to_drug"
    INTERACTION = "interaction"
    INTERACTION_WITH_UNKNOWN = "interaction_with_unknown"
    SINGLE_DRUG = "single_drug"
    CONTRAINDICATED = "contraindicated"
    OVERDOSE = "overdose"
    NOT_COVERED = "not_covered"


@dataclass(frozen=True)
class RouteDecision:
    rule: int
    action: Action
    reason: str | None = None


@dataclass(frozen=True)
class RouteContext:
    frame: QueryFrame
    screen: SafetyScreen = field(default_factory=lambda: SafetyScreen((), ()))


@dataclass(frozen=True)
class Rule:
    number: int
    condition: str
    outcome: str
    applies: Callable[[RouteContext], bool]
    decide: Callable[[RouteContext], RouteDecision]


_DRUG_QUESTIONS = (TurnType.DRUG_ATTRIBUTE, TurnType.DRUG_OVERVIEW, TurnType.DOSING_CALC)


def _is_dosing(frame: QueryFrame) -> bool:
    return frame.turn_type is TurnType.DOSING_CALC and bool(frame.drugs) and not frame.wants_section_overview


def _asks_dose(frame: QueryFrame) -> bool:
    return frame.asks_dose and not frame.wants_section_overview


def _asks_quantity(frame: QueryFrame) -> bool:
    return frame.asks_dose or frame.section_key == "qua_lieu_va_xu_tri" or frame.asks_number is not None \
        or frame.turn_type is TurnType.OVERDOSE_TAKEN


def _asks_about_own_state(frame: QueryFrame) -> bool:
    """"Đang cho con bú, methotrexat dùng được không?" names the section of the state the patient is in:
    whether the drug can be used, not what the section says in general."""
    return (frame.section_key == "thoi_ky_mang_thai" and frame.patient.pregnant) or (
        frame.section_key == "thoi_ky_cho_con_bu" and frame.patient.breastfeeding)


def _asks_whether_usable(ctx: RouteContext) -> bool:
    """A dose, or whether the drug can be used: not a named section read for its own sake."""
    frame = ctx.frame
    return bool(frame.drugs) and frame.turn_type in _DRUG_QUESTIONS and (
        _asks_dose(frame) or "section_named" not in frame.cues or _asks_about_own_state(frame))


def _fixed(rule: int, action: Action, reason: str | None = None) -> Callable[[RouteContext], RouteDecision]:
    return lambda _ctx: RouteDecision(rule, action, reason)


def _rule_4(ctx: RouteContext) -> RouteDecision:
    if ctx.frame.understanding_error:
        return RouteDecision(4, Action.ABSTAIN, "understanding_unavailable")
    return RouteDecision(4, Action.CLARIFY, "needs_more_info")


def _rule_8(ctx: RouteContext) -> RouteDecision:
    reason = "no_condition" if ctx.frame.turn_type is TurnType.SYMPTOM_TO_DRUG else "no_indication"
    return RouteDecision(8, Action.CLARIFY, reason)


def _rule_19(ctx: RouteContext) -> RouteDecision:
    return RouteDecision(19, Action.OVERDOSE if ctx.frame.drugs else Action.ABSTAIN, "overdose_taken")


def _uncovered_components(frame: QueryFrame) -> list[str]:
    """Components the book lacks of the products asked about (a product the patient already uses, or reacted
    to, is not asked)."""
    taken = set(frame.patient.other_medications) | set(frame.patient.allergies)
    return [name for product in frame.products for name in product.uncovered if name not in taken]


ROUTING_TABLE: tuple[Rule, ...] = (
    Rule(1, "the turn looks non-human (code, symbol soup, keyboard mashing, an instruction attack)",
         "abstain / out_of_scope",
         lambda c: c.frame.wording.non_human, _fixed(1, Action.ABSTAIN, "out_of_scope")),
    Rule(17, "self-harm intent, or a dose/quantity asked in a conversation with a self-harm signal",
         "abstain / crisis (no doses, no quantities; 115)",
         lambda c: c.frame.turn_type is TurnType.CRISIS
         or (c.frame.patient.crisis and (_asks_quantity(c.frame) or c.frame.wording.asks_quantity)),
         _fixed(17, Action.ABSTAIN, "crisis")),
    Rule(18, "emergency signs described now", "abstain / emergency (urgent care, no drug)",
         lambda c: c.frame.turn_type is TurnType.EMERGENCY, _fixed(18, Action.ABSTAIN, "emergency")),
    Rule(19, "an overdose already taken", "115 first, then Quá liều và xử trí (abstain when no drug of the book)",
         lambda c: c.frame.turn_type is TurnType.OVERDOSE_TAKEN, _rule_19),
    Rule(26, "a question about what a formulary does not cover (price, where to buy, stock, recalls, brand choice, "
         "insurance)", "abstain / not_covered_by_book (a pharmacist can help), unless the drug's own monograph "
         "speaks of it (a withdrawal): then the section that does",
         lambda c: c.frame.uncovered_topic is not None, _fixed(26, Action.NOT_COVERED, "not_covered_by_book")),
    Rule(20, "a dose of a product whose components the book does not all cover",
         "abstain / drug_not_in_formulary naming the uncovered component",
         lambda c: _asks_dose(c.frame) and bool(_uncovered_components(c.frame)),
         _fixed(20, Action.ABSTAIN, "drug_not_in_formulary")),
    Rule(21, "a near miss that could be several drugs or is distant (with or without another drug of the book: "
         "half a question is not answered)",
         "clarify / ambiguous_drug_name (candidates as quick replies)",
         lambda c: bool(c.frame.ambiguous_names) and not c.frame.unknown_drugs,
         _fixed(21, Action.CLARIFY, "ambiguous_drug_name")),
    Rule(22, "a dose, or whether the drug can be used, asked for a patient a Chống chỉ định of the drug applies to",
         "answerable / contraindicated_for_patient (the contraindication is the answer, no dose; other sections "
         "as quick replies)",
         lambda c: _asks_whether_usable(c) and all(c.screen.contraindicated(d) for d in c.frame.drugs),
         _fixed(22, Action.CONTRAINDICATED, "contraindicated_for_patient")),
    Rule(2, "dosing_calc + drugs + not a section overview, population is None", "clarify / missing_population",
         lambda c: _is_dosing(c.frame) and c.frame.population is None,
         _fixed(2, Action.CLARIFY, "missing_population")),
    Rule(3, "same, paediatric and (age_text or weight_kg missing)", "clarify / missing_pediatric_age_or_weight",
         lambda c: _is_dosing(c.frame) and c.frame.population is Population.PEDIATRIC
         and (c.frame.age_text is None or c.frame.weight_kg is None),
         _fixed(3, Action.CLARIFY, "missing_pediatric_age_or_weight")),
    Rule(27, "a dose, or whether the drug can be used, asked for a patient whose stated facts touch a Chống chỉ "
         "định of the drug without deciding it (a condition with no number, an allergy with no name, a newborn with "
         "no word on prematurity)",
         "clarify / contraindication_undetermined (the contraindication quoted, no dose; the one question that "
         "decides it)",
         lambda c: _asks_whether_usable(c) and any(c.screen.undetermined_for(d) for d in c.frame.drugs),
         _fixed(27, Action.CLARIFY, "contraindication_undetermined")),
    Rule(4, "needs_clarify + reason, and not dosing_calc/condition_to_drug/overview",
         "clarify / needs_more_info, or abstain / <system_error> if understanding failed",
         lambda c: c.frame.needs_clarify and bool(c.frame.clarify_reason)
         and c.frame.turn_type not in (TurnType.DOSING_CALC, TurnType.CONDITION_TO_DRUG, TurnType.DRUG_OVERVIEW),
         _rule_4),
    Rule(5, "condition_to_drug / symptom_to_drug, condition ambiguous", "clarify / ambiguous_condition",
         lambda c: c.frame.is_reverse_lookup and c.frame.condition_ambiguous,
         _fixed(5, Action.CLARIFY, "ambiguous_condition")),
    Rule(6, "same, condition_relation != INDICATION", "abstain / unsupported_reverse_relation",
         lambda c: c.frame.is_reverse_lookup and c.frame.condition_relation not in (None, ConditionRelation.INDICATION),
         _fixed(6, Action.ABSTAIN, "unsupported_reverse_relation")),
    Rule(7, "same, condition or indication present", "_condition_to_drug()",
         lambda c: c.frame.is_reverse_lookup and bool(c.frame.condition or c.frame.indication),
         _fixed(7, Action.CONDITION_TO_DRUG)),
    Rule(8, "same, neither present", "clarify / no_condition or no_indication",
         lambda c: c.frame.is_reverse_lookup, _rule_8),
    Rule(9, "condition_relation turn type", "abstain / unsupported_reverse_relation",
         lambda c: c.frame.turn_type is TurnType.CONDITION_RELATION,
         _fixed(9, Action.ABSTAIN, "unsupported_reverse_relation")),
    Rule(10, "drug_attribute with drugs but no attribute", "clarify / missing_attribute",
         lambda c: c.frame.turn_type is TurnType.DRUG_ATTRIBUTE and bool(c.frame.drugs)
         and not c.frame.attribute and c.frame.section_key is None and not c.frame.section_candidates,
         _fixed(10, Action.CLARIFY, "missing_attribute")),
    Rule(23, "drug_attribute with drugs, the section uncertain (below the intent margin)",
         "clarify / ambiguous_intent (the likeliest sections as quick replies)",
         lambda c: c.frame.turn_type is TurnType.DRUG_ATTRIBUTE and bool(c.frame.drugs)
         and c.frame.section_key is None and bool(c.frame.section_candidates),
         _fixed(23, Action.CLARIFY, "ambiguous_intent")),
    Rule(11, "smalltalk", "answerable / smalltalk (fixed greeting)",
         lambda c: c.frame.turn_type is TurnType.SMALLTALK, _fixed(11, Action.SMALLTALK, "smalltalk")),
    Rule(12, "out_of_scope", "abstain / out_of_scope",
         lambda c: c.frame.turn_type is TurnType.OUT_OF_SCOPE, _fixed(12, Action.ABSTAIN, "out_of_scope")),
    Rule(24, "a health question that names no drug and asks for none", "abstain / medical_out_of_scope",
         lambda c: c.frame.turn_type is TurnType.MEDICAL_QUESTION and not c.frame.drugs and not c.frame.unknown_drugs,
         _fixed(24, Action.ABSTAIN, "medical_out_of_scope")),
    Rule(13, "no drugs, but unknown_drugs", "abstain / drug_not_in_formulary naming them",
         lambda c: not c.frame.drugs and bool(c.frame.unknown_drugs),
         _fixed(13, Action.ABSTAIN, "drug_not_in_formulary")),
    Rule(14, "no drugs at all", "clarify / no_drug",
         lambda c: not c.frame.drugs and not c.frame.unknown_drugs, _fixed(14, Action.CLARIFY, "no_drug")),
    Rule(15, "interaction with ≥2 drugs", "_interaction()",
         lambda c: c.frame.turn_type is TurnType.INTERACTION and len(c.frame.drugs) >= 2,
         _fixed(15, Action.INTERACTION)),
    Rule(25, "interaction of a drug of the book with a medicine not in it",
         "the other medicine looked up by name in the drug's Tương tác thuốc and Chống chỉ định",
         lambda c: c.frame.turn_type is TurnType.INTERACTION and len(c.frame.drugs) == 1 and bool(c.frame.unknown_drugs),
         _fixed(25, Action.INTERACTION_WITH_UNKNOWN)),
    Rule(16, "otherwise", "_single_drug()", lambda c: True, _fixed(16, Action.SINGLE_DRUG)),
)


def route(frame: QueryFrame, screen: SafetyScreen | None = None) -> RouteDecision:
    """The first row of the table that applies to this frame and safety screen."""
    context = RouteContext(frame, screen or SafetyScreen((), ()))
    for rule in ROUTING_TABLE:
        if rule.applies(context):
            return rule.decide(context)
    raise AssertionError("row 16 always applies")


def rule_by_number(number: int) -> Rule:
    return next(rule for rule in ROUTING_TABLE if rule.number == number)
