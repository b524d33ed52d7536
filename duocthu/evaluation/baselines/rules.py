"""The rule-based understander: the first version's hand-written phrase rules, kept as a baseline.

It is what the learned understander (``learned.py``) is measured against (notebook
``07_understanding``): phrase tables (``patterns.py``), a dozen early returns whose order matters,
and its own frame merge (:func:`merge_with_prior_frame`). It shares the entity layer (drug
resolver, quantities, reverse-lookup condition extraction) with the other understanders.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from duocthu.budget import RequestBudget
from duocthu.evaluation.baselines import patterns as p
from duocthu.sections import SECTION_TITLES, resolve_section_match
from duocthu.text import (
    STOPWORDS_ACCENTED,
    find_phrase,
    fold,
    folded_words,
    has_diacritics,
    normalize,
    words,
)
from duocthu.understanding.drugs import DrugResolver
from duocthu.understanding.frame import ConditionRelation, PatientFacts, QueryFrame, TurnType
from duocthu.understanding.patient import population_of
from duocthu.understanding.reverse import extract_condition, is_ambiguous_condition, is_symptom


class RuleBasedUnderstander:
    """Offline understanding from Vietnamese surface patterns (with or without diacritics)."""

    name = "rules"

    def __init__(self, resolver: DrugResolver, condition_texts: Sequence[str] = ()):
        self.resolver = resolver
        # Accented words of the formulary's indications: a turn naming one is medical, not
        # out of scope ("Tăng huyết áp" alone); "đá" (football) never matches "da" (skin).
        self._condition_bigrams = {
            pair for text in condition_texts for line in text.split("\n")
            for pair in zip(words(line), words(line)[1:], strict=False)
            if not (set(pair) & STOPWORDS_ACCENTED) and any(has_diacritics(w) for w in pair)
        }

    def _names_a_condition(self, text: str) -> bool:
        tokens = words(text)
        return any(pair in self._condition_bigrams for pair in zip(tokens, tokens[1:], strict=False))

    def understand(
        self, turn: str, history: Sequence[str], budget: RequestBudget, prior_frame: QueryFrame | None
    ) -> QueryFrame:
        frame = self.parse(turn)
        return merge_with_prior_frame(frame, prior_frame, turn)

    def parse(self, turn: str) -> QueryFrame:
        text = normalize(turn).strip()
        mentions, unknown = self.resolver.find(text)
        section = resolve_section_match(text)
        facts = p.extract_age_and_weight(text)
        population = population_of(text, facts.age_years)
        route = next((name for name, cues in p.ROUTE_WORDS.items() if p.has_phrase(text, cues)), None)
        patient = _patient_facts(text, mentions)
        patient_meds = set(patient.current_medications)
        drugs = [m.drug_id for m in mentions if m.drug_id not in patient_meds]
        common: dict[str, Any] = dict(
            unknown_drugs=unknown if not drugs else [], population=population, age_text=facts.age_text,
            age_years=facts.age_years, weight_kg=facts.weight_kg, route=route, patient=patient,
        )

        if p.looks_like_instruction_attack(text) or p.looks_like_code(text):
            return QueryFrame(turn_type=TurnType.OUT_OF_SCOPE, out_of_scope_kind="attack")
        if not drugs and p.has_phrase(text, p.GREETINGS) and section is None and len(words(text)) <= 8:
            return QueryFrame(turn_type=TurnType.SMALLTALK)
        if not drugs and p.has_phrase(text, p.OUT_OF_SCOPE_TOPICS):
            return QueryFrame(turn_type=TurnType.OUT_OF_SCOPE, out_of_scope_kind="topic")

        if not drugs and p.has_phrase(text, p.REVERSE_CUES):
            return self._reverse_lookup(text, common)

        if len(drugs) == 1 and p.has_phrase(text, p.VAGUE_DRUG_REFERENCES) and (
            p.has_phrase(text, p.INTERACTION_CUES) or (section is not None and section.section_key == "tuong_tac_thuoc")
        ):
            return QueryFrame(
                turn_type=TurnType.INTERACTION, drugs=drugs, section_key="tuong_tac_thuoc", needs_clarify=True,
                clarify_reason="unresolved_second_drug", **common,
            )
        if len(drugs) >= 2 and (
            (section is not None and section.section_key == "tuong_tac_thuoc")
            or (section is None and p.has_phrase(text, p.INTERACTION_CUES))
        ):
            return QueryFrame(turn_type=TurnType.INTERACTION, drugs=drugs, section_key="tuong_tac_thuoc", **common)

        section_key = section.section_key if section else None
        patient_specific = (
            facts.age_text is not None or facts.weight_kg is not None or population is not None
        )
        asks_dose = section_key == "lieu_luong_va_cach_dung" or p.has_phrase(text, p.DOSING_CUES)
        asks_quantity = p.has_phrase(text, p.QUANTITY_CUES)  # "how many tablets?" is personal dosing
        wants_whole_section = p.has_phrase(text, p.SECTION_OVERVIEW_CUES)
        if (drugs and asks_dose and section_key in (None, "lieu_luong_va_cach_dung")
                and (patient_specific or asks_quantity) and not wants_whole_section):
            return QueryFrame(
                turn_type=TurnType.DOSING_CALC, drugs=drugs, section_key="lieu_luong_va_cach_dung",
                attribute=SECTION_TITLES["lieu_luong_va_cach_dung"], wants_section_overview=wants_whole_section,
                **common,
            )
        if section_key is not None:
            return QueryFrame(
                turn_type=TurnType.DRUG_ATTRIBUTE, drugs=drugs, section_key=section_key,
                attribute=SECTION_TITLES[section_key], wants_section_overview=wants_whole_section, **common,
            )
        if drugs:
            residual = _residual_words(text, self.resolver, drugs)
            if not residual and p.has_phrase(text, p.ASK_ABOUT_CUES):
                return QueryFrame(turn_type=TurnType.DRUG_ATTRIBUTE, drugs=drugs, **common)
            if p.has_phrase(text, p.OVERVIEW_CUES) or not residual and not _is_question(text):
                return QueryFrame(turn_type=TurnType.DRUG_OVERVIEW, drugs=drugs, **common)
            return QueryFrame(
                turn_type=TurnType.DRUG_ATTRIBUTE, drugs=drugs,
                attribute=" ".join(residual) if residual else None, **common,
            )
        if unknown:
            return QueryFrame(turn_type=TurnType.DRUG_ATTRIBUTE, **common)
        has_facts = facts.age_text is not None or facts.weight_kg is not None or p.has_phrase(
            text, (*p.PEDIATRIC_WORDS, *p.STRONG_ADULT_WORDS, *p.ELDERLY_WORDS))
        if has_facts or route is not None or p.has_phrase(text, p.MEDICAL_WORDS) or self._names_a_condition(text):
            return QueryFrame(turn_type=TurnType.DRUG_ATTRIBUTE, **common)
        if not p.has_phrase(text, p.FOLLOW_UP_CUES) and _residual_words(text, self.resolver, []):
            return QueryFrame(turn_type=TurnType.OUT_OF_SCOPE, out_of_scope_kind="unrelated", **common)
        return QueryFrame(turn_type=TurnType.DRUG_ATTRIBUTE, **common)

    def _drug_spans(self, text: str) -> list[tuple[int, int]]:
        return [(m.start, m.end) for m in self.resolver.find(text)[0]]

    def _reverse_lookup(self, text: str, common: dict) -> QueryFrame:
        relation = ConditionRelation.INDICATION
        turn_type = TurnType.CONDITION_TO_DRUG
        if p.has_phrase(text, p.CONTRAINDICATION_CUES):
            relation = ConditionRelation.CONTRAINDICATION
        elif p.has_phrase(text, p.CAUSES_CUES):
            relation, turn_type = ConditionRelation.CAUSES, TurnType.CONDITION_RELATION
        elif p.has_phrase(text, p.CAUTION_CUES):
            relation = ConditionRelation.CAUTION
        condition, comorbidities = extract_condition(text, self._drug_spans, _comorbidities)
        patient: PatientFacts = common["patient"].model_copy(update={"conditions": comorbidities})
        if turn_type is TurnType.CONDITION_TO_DRUG and condition and is_symptom(condition):
            turn_type = TurnType.SYMPTOM_TO_DRUG
        return QueryFrame(
            turn_type=turn_type, condition=condition, indication=condition, condition_relation=relation,
            condition_ambiguous=is_ambiguous_condition(condition),
            **{**common, "patient": patient, "unknown_drugs": []},
        )


def _comorbidities(text: str) -> list[str]:
    return [c for c in p.COMORBIDITY_PHRASES if p.has_phrase(text, (c,))]


def _patient_facts(text: str, mentions: Sequence) -> PatientFacts:
    tokens = folded_words(text)
    cue_positions = [
        find_phrase(tokens, folded_words(cue)) for cue in p.CURRENT_MEDICATION_CUES
    ]
    cue_positions = [pos for pos in cue_positions if pos >= 0]
    current = []
    if cue_positions:
        first_cue = min(cue_positions)
        current = [m.drug_id for m in mentions if m.start > first_cue]
    conditions = [c for c in p.COMORBIDITY_PHRASES if p.has_phrase(text, (c,))]
    # Keep the longest of overlapping phrases ("loét dạ dày tá tràng" over "loét dạ dày").
    conditions = [c for c in conditions if not any(c != o and fold(c) in fold(o) for o in conditions)]
    return PatientFacts(
        current_medications=current, conditions=conditions,
        pregnant=p.has_phrase(text, p.PREGNANCY_WORDS), breastfeeding=p.has_phrase(text, p.BREASTFEEDING_WORDS),
    )


def _residual_words(text: str, resolver: DrugResolver, drugs: Sequence[str]) -> list[str]:
    """Content words left after removing drug names, stopwords and question scaffolding."""
    mentions, _ = resolver.find(text)
    raw = words(text)
    drop = [False] * len(raw)
    for mention in mentions:
        for i in range(mention.start, mention.end):
            drop[i] = True
    scaffolding = (*p.FOLLOW_UP_CUES, *p.OVERVIEW_CUES, *p.ASK_ABOUT_CUES, "cho hỏi", "xin hỏi", "về", "thuốc", "hỏi",
                   "biết", "muốn", "chút", "một chút", "với")
    folded = [fold(w) for w in raw]
    for phrase in scaffolding:
        phrase_words = folded_words(phrase)
        start = find_phrase(folded, phrase_words)
        if start >= 0:
            for i in range(start, start + len(phrase_words)):
                drop[i] = True
    from duocthu.text import content_words

    return [w for w, d in zip(raw, drop, strict=True) if not d and content_words(w)]


def _is_question(text: str) -> bool:
    return "?" in text or p.has_phrase(text, ("không", "sao", "gì", "nào", "thế nào", "ra sao", "được không"))


_FACT_FIELDS = ("population", "age_text", "age_years", "weight_kg", "route")


def merge_with_prior_frame(frame: QueryFrame, prior: QueryFrame | None, turn: str = "") -> QueryFrame:
    """Carry the drug and facts of the previous frame into a follow-up turn.

    "Còn tác dụng phụ thì sao?" keeps the drug; "Bé 5 tuổi" after a dosing clarify keeps the
    drug, the dosing question and the weight given earlier; "còn ibuprofen thì sao?" keeps the
    question and swaps the drug; "Nó dùng chung với tramadol được không?" adds the earlier drug;
    a condition typed after "which condition?" completes the reverse lookup.
    """
    if prior is None or frame.turn_type is TurnType.SMALLTALK:
        return frame
    if prior.is_reverse_lookup and (not prior.condition or prior.condition_ambiguous) and not frame.drugs \
            and frame.section_key is None and not frame.is_reverse_lookup and not _is_attack(turn):
        condition = " ".join(words(turn)).strip() or None
        if condition:
            return prior.model_copy(update={
                "condition": condition, "indication": condition,
                "condition_ambiguous": is_ambiguous_condition(condition),
                "needs_clarify": False, "clarify_reason": None, "inherited": ["turn_type"],
            })
    if frame.turn_type is TurnType.OUT_OF_SCOPE and frame.out_of_scope_kind == "unrelated" and prior.drugs \
            and len(words(turn)) <= 8:
        # A short reply mid-conversation ("Cháu đang đi mẫu giáo") is part of it, not a new topic.
        frame = frame.model_copy(update={"turn_type": TurnType.DRUG_ATTRIBUTE, "out_of_scope_kind": None})
    if frame.turn_type is TurnType.OUT_OF_SCOPE or frame.unknown_drugs:
        return frame
    if frame.is_reverse_lookup or frame.turn_type is TurnType.CONDITION_RELATION:
        return frame
    updates: dict[str, Any] = {}
    inherited: list[str] = []
    if (len(frame.drugs) == 1 and prior.drugs and frame.drugs[0] not in prior.drugs
            and p.has_phrase(turn, p.PRONOUN_DRUG_REFERENCES) and p.has_phrase(turn, p.INTERACTION_CUES)):
        return frame.model_copy(update={
            "turn_type": TurnType.INTERACTION, "drugs": [*prior.drugs, *frame.drugs], "section_key": "tuong_tac_thuoc",
            "needs_clarify": False, "clarify_reason": None, "inherited": ["drugs"],
        })
    if not frame.drugs and prior.drugs:
        updates["drugs"] = list(prior.drugs)
        inherited.append("drugs")
    same_drugs = (updates.get("drugs") or frame.drugs) == prior.drugs
    asks_nothing_new = frame.section_key is None and frame.attribute is None
    is_follow_up_swap = (
        bool(frame.drugs) and frame.drugs != prior.drugs and asks_nothing_new and p.has_phrase(turn, p.FOLLOW_UP_CUES)
    )
    answers_which_drug = (
        not prior.drugs and prior.section_key is not None and bool(frame.drugs) and asks_nothing_new
    )
    if (not frame.drugs and asks_nothing_new) or is_follow_up_swap or answers_which_drug:
        if prior.turn_type not in (TurnType.SMALLTALK, TurnType.OUT_OF_SCOPE):
            updates["turn_type"] = prior.turn_type
            updates["section_key"] = prior.section_key
            updates["attribute"] = prior.attribute
            updates["wants_section_overview"] = prior.wants_section_overview
            inherited += ["turn_type", "section_key"]
    elif frame.turn_type is TurnType.DRUG_ATTRIBUTE and frame.section_key == "lieu_luong_va_cach_dung" and (
        prior.turn_type is TurnType.DOSING_CALC and same_drugs
    ):
        updates["turn_type"] = TurnType.DOSING_CALC
        inherited.append("turn_type")
    describes_new_patient = bool(frame.drugs) and (
        frame.age_text is not None or frame.weight_kg is not None or _states_population(turn, frame)
    )
    if prior.drugs and (same_drugs or is_follow_up_swap) and not describes_new_patient:
        weak_population = frame.population is not None and not _states_population(turn, frame)
        for field in _FACT_FIELDS:
            current = getattr(frame, field)
            previous = getattr(prior, field)
            if previous is not None and (current is None or (field == "population" and weak_population)):
                updates[field] = previous
                inherited.append(field)
        if frame.patient.is_empty and not prior.patient.is_empty:
            updates["patient"] = prior.patient
            inherited.append("patient")
    target_type = updates.get("turn_type", frame.turn_type)
    if target_type is TurnType.DOSING_CALC:
        updates["section_key"] = "lieu_luong_va_cach_dung"
    if updates:
        updates["inherited"] = inherited
        return frame.model_copy(update=updates)
    return frame


def _states_population(turn: str, frame: QueryFrame) -> bool:
    """Whether the turn itself says who the patient is (not just "tôi", which a parent says too)."""
    return frame.age_years is not None or p.has_phrase(turn, (*p.STRONG_ADULT_WORDS, *p.PEDIATRIC_WORDS, *p.ELDERLY_WORDS))


def _is_attack(turn: str) -> bool:
    return p.looks_like_instruction_attack(turn) or p.looks_like_code(turn)
