"""The routing table of one turn: read it top to bottom; the first matching row wins.

Each row is data — its number, the condition in words, the outcome in words, and two small
functions (when it applies, what it decides). The agent executes the outcome.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from duocthu.agent import patterns as p
from duocthu.agent.frame import ConditionRelation, Population, QueryFrame, TurnType


class Action(StrEnum):
    CLARIFY = "clarify"
    ABSTAIN = "abstain"
    SMALLTALK = "smalltalk"
    CONDITION_TO_DRUG = "condition_to_drug"
    INTERACTION = "interaction"
    SINGLE_DRUG = "single_drug"


@dataclass(frozen=True)
class RouteDecision:
    rule: int
    action: Action
    reason: str | None = None


@dataclass(frozen=True)
class RouteContext:
    turn: str
    frame: QueryFrame
    known_tokens: frozenset[str]


@dataclass(frozen=True)
class Rule:
    number: int
    condition: str
    outcome: str
    applies: Callable[[RouteContext], bool]
    decide: Callable[[RouteContext], RouteDecision]


def looks_non_human(turn: str, known_tokens: frozenset[str] = frozenset()) -> bool:
    """Deterministic scope guard: empty, symbol soup, code, gibberish or instruction attacks."""
    text = turn.strip()
    if not text:
        return True
    if p.looks_like_instruction_attack(text) or p.looks_like_code(text):
        return True
    if p.letter_ratio(text) < 0.5:
        return True
    return p.looks_like_gibberish(text, set(known_tokens))


def _is_dosing(frame: QueryFrame) -> bool:
    return frame.turn_type is TurnType.DOSING_CALC and bool(frame.drugs) and not frame.wants_section_overview


def _fixed(rule: int, action: Action, reason: str | None = None) -> Callable[[RouteContext], RouteDecision]:
    return lambda _ctx: RouteDecision(rule, action, reason)


def _rule_4(ctx: RouteContext) -> RouteDecision:
    if ctx.frame.understanding_error:
        return RouteDecision(4, Action.ABSTAIN, "understanding_unavailable")
    return RouteDecision(4, Action.CLARIFY, "needs_more_info")


def _rule_8(ctx: RouteContext) -> RouteDecision:
    reason = "no_condition" if ctx.frame.turn_type is TurnType.SYMPTOM_TO_DRUG else "no_indication"
    return RouteDecision(8, Action.CLARIFY, reason)


ROUTING_TABLE: tuple[Rule, ...] = (
    Rule(1, "looks_non_human(turn)", "abstain / out_of_scope",
         lambda c: looks_non_human(c.turn, c.known_tokens), _fixed(1, Action.ABSTAIN, "out_of_scope")),
    Rule(2, "dosing_calc + drugs + not a section overview, population is None", "clarify / missing_population",
         lambda c: _is_dosing(c.frame) and c.frame.population is None,
         _fixed(2, Action.CLARIFY, "missing_population")),
    Rule(3, "same, paediatric and (age_text or weight_kg missing)", "clarify / missing_pediatric_age_or_weight",
         lambda c: _is_dosing(c.frame) and c.frame.population is Population.PEDIATRIC
         and (c.frame.age_text is None or c.frame.weight_kg is None),
         _fixed(3, Action.CLARIFY, "missing_pediatric_age_or_weight")),
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
         and not c.frame.attribute and c.frame.section_key is None,
         _fixed(10, Action.CLARIFY, "missing_attribute")),
    Rule(11, "smalltalk", "answerable / smalltalk (fixed greeting)",
         lambda c: c.frame.turn_type is TurnType.SMALLTALK, _fixed(11, Action.SMALLTALK, "smalltalk")),
    Rule(12, "out_of_scope", "abstain / out_of_scope",
         lambda c: c.frame.turn_type is TurnType.OUT_OF_SCOPE, _fixed(12, Action.ABSTAIN, "out_of_scope")),
    Rule(13, "no drugs, but unknown_drugs", "abstain / drug_not_in_formulary naming them",
         lambda c: not c.frame.drugs and bool(c.frame.unknown_drugs),
         _fixed(13, Action.ABSTAIN, "drug_not_in_formulary")),
    Rule(14, "no drugs at all", "clarify / no_drug",
         lambda c: not c.frame.drugs, _fixed(14, Action.CLARIFY, "no_drug")),
    Rule(15, "interaction with ≥2 drugs", "_interaction()",
         lambda c: c.frame.turn_type is TurnType.INTERACTION and len(c.frame.drugs) >= 2,
         _fixed(15, Action.INTERACTION)),
    Rule(16, "otherwise", "_single_drug()", lambda c: True, _fixed(16, Action.SINGLE_DRUG)),
)


def route(turn: str, frame: QueryFrame, known_tokens: frozenset[str] = frozenset()) -> RouteDecision:
    context = RouteContext(turn, frame, known_tokens)
    for rule in ROUTING_TABLE:
        if rule.applies(context):
            return rule.decide(context)
    raise AssertionError("row 16 always applies")


def rule_by_number(number: int) -> Rule:
    return next(rule for rule in ROUTING_TABLE if rule.number == number)
