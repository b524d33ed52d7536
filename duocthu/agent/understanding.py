"""Query understanding: turn text (+ the previous frame) → :class:`QueryFrame`.

Two understanders share one protocol: the rule-based one (the offline default) and an LLM one
(one JSON call, validated against the frame's schema, fail-closed). Both go through
:func:`merge_with_prior_frame`, so a follow-up keeps the drug and facts of the previous turn.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Protocol

from pydantic import ValidationError

from duocthu.agent import patterns as p
from duocthu.agent.drug_resolver import DrugResolver
from duocthu.agent.frame import ConditionRelation, PatientFacts, Population, QueryFrame, TurnType
from duocthu.budget import RequestBudget
from duocthu.errors import AnswerGenerationUnavailable
from duocthu.providers.llm import JsonLlm
from duocthu.sections import SECTION_PHRASES, SECTION_TITLES, resolve_section_match
from duocthu.text import (
    STOPWORDS_ACCENTED,
    find_phrase,
    fold,
    folded_words,
    has_diacritics,
    normalize,
    token_matches,
    words,
)


class QueryUnderstander(Protocol):
    name: str

    def understand(
        self, turn: str, history: Sequence[str], budget: RequestBudget, prior_frame: QueryFrame | None
    ) -> QueryFrame: ...


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
        population = _population(text, facts.age_years)
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

    def _reverse_lookup(self, text: str, common: dict) -> QueryFrame:
        relation = ConditionRelation.INDICATION
        turn_type = TurnType.CONDITION_TO_DRUG
        if p.has_phrase(text, p.CONTRAINDICATION_CUES):
            relation = ConditionRelation.CONTRAINDICATION
        elif p.has_phrase(text, p.CAUSES_CUES):
            relation, turn_type = ConditionRelation.CAUSES, TurnType.CONDITION_RELATION
        elif p.has_phrase(text, p.CAUTION_CUES):
            relation = ConditionRelation.CAUTION
        condition, comorbidities = extract_condition(text, self.resolver)
        patient: PatientFacts = common["patient"].model_copy(update={"conditions": comorbidities})
        if turn_type is TurnType.CONDITION_TO_DRUG and condition and _is_symptom(condition):
            turn_type = TurnType.SYMPTOM_TO_DRUG
        return QueryFrame(
            turn_type=turn_type, condition=condition, indication=condition, condition_relation=relation,
            condition_ambiguous=condition is not None and fold(condition) in p.AMBIGUOUS_CONDITIONS,
            **{**common, "patient": patient, "unknown_drugs": []},
        )


def _population(text: str, age_years: float | None) -> Population | None:
    if age_years is not None:
        if age_years < 18:
            return Population.PEDIATRIC
        return Population.ELDERLY if age_years >= 65 else Population.ADULT
    if p.has_phrase(text, p.PEDIATRIC_WORDS):
        return Population.PEDIATRIC
    if p.has_phrase(text, p.ELDERLY_WORDS):
        return Population.ELDERLY
    if p.has_phrase(text, p.ADULT_WORDS):
        return Population.ADULT
    return None


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


_CLAUSE_SPLIT_RE = re.compile(r"[,.;?!]|\bthì\b|\bmà\b|\bnhưng\b", re.IGNORECASE)
_TREATMENT_CUES = ("trị", "điều trị", "chữa", "dùng cho", "thuốc nào", "thuốc gì", "uống gì", "dùng gì")


def extract_condition(text: str, resolver: DrugResolver) -> tuple[str | None, list[str]]:
    """The condition a reverse-lookup question asks about, and the patient's other conditions.

    The question is cut into clauses; the clause with the treatment cue ("thuốc nào trị …")
    holds the condition, comorbidities named elsewhere ("người bị suy thận thì …") or after
    it ("… cho người suy thận") become patient context.
    """
    clauses = [c.strip() for c in _CLAUSE_SPLIT_RE.split(normalize(text)) if c.strip()]
    if not clauses:
        return None, []
    main = next((c for c in clauses if p.has_phrase(c, _TREATMENT_CUES)), clauses[-1])
    others = [c for c in clauses if c != main and not p.has_phrase(c, p.CURRENT_MEDICATION_CUES)]
    comorbidities: list[str] = []
    head, patient_part = _split_at_patient_marker(main)
    if patient_part:
        comorbidities += [c for c in p.COMORBIDITY_PHRASES if p.has_phrase(patient_part, (c,))]
    condition = _strip_scaffolding(head, resolver)
    if condition is None:
        # "… bị đau đầu thì uống thuốc gì?": the condition sits in another clause.
        for clause in others:
            condition = _strip_scaffolding(_split_at_patient_marker(clause)[0], resolver)
            if condition:
                others = [c for c in others if c != clause]
                break
    if condition is not None and fold(condition) in _NOT_A_CONDITION:
        condition = None
    comorbidities += [c for c in p.COMORBIDITY_PHRASES if any(p.has_phrase(o, (c,)) for o in others)]
    comorbidities = [c for c in dict.fromkeys(comorbidities)
                     if not any(c != o and fold(c) in fold(o) for o in comorbidities)]
    return condition, comorbidities


_NOT_A_CONDITION = frozenset(fold(w) for w in ("bệnh", "bệnh tật", "triệu chứng", "chứng", "bệnh lý", "tình trạng"))
_PATIENT_MARKERS = ("cho người", "ở người", "cho bệnh nhân", "ở bệnh nhân", "cho người bệnh", "ở người bệnh",
                    "người có", "người đang bị", "mà bị")


def _split_at_patient_marker(clause: str) -> tuple[str, str]:
    """("trị đau đầu", "người tăng huyết áp") from "trị đau đầu cho người tăng huyết áp"."""
    raw = words(clause)
    folded = [fold(w) for w in raw]
    positions = [find_phrase(folded, folded_words(m)) for m in _PATIENT_MARKERS]
    positions = [pos for pos in positions if pos > 0]
    if not positions:
        return clause, ""
    cut = min(positions)
    return " ".join(raw[:cut]), " ".join(raw[cut:])


def _remove_phrase(text: str, phrase: str) -> str:
    raw = words(text)
    folded = [fold(w) for w in raw]
    target = folded_words(phrase)
    start = find_phrase(folded, target)
    if start < 0:
        return text
    return " ".join(raw[:start] + raw[start + len(target):])


def _strip_scaffolding(text: str, resolver: DrugResolver) -> str | None:
    """Remove question scaffolding, drug names and patient cues; what remains names the condition.

    Accent-aware: the filler "mấy" does not remove "mày" (as in "mày đay").
    """
    raw = words(text)
    drop = [False] * len(raw)

    def mark(phrase: str) -> None:
        target = words(phrase)
        n = len(target)
        for start in range(len(raw) - n + 1):
            if not any(drop[start : start + n]) and all(
                token_matches(raw[start + i], target[i]) for i in range(n)
            ):
                for i in range(start, start + n):
                    drop[i] = True

    for phrase in sorted(set(p.REVERSE_FILLER), key=lambda f: len(words(f)), reverse=True):
        mark(phrase)
    for phrase in (*p.CURRENT_MEDICATION_CUES, *p.PREGNANCY_WORDS, *p.BREASTFEEDING_WORDS):
        mark(phrase)
    for mention in resolver.find(text)[0]:
        for i in range(mention.start, mention.end):
            drop[i] = True
    kept = [w for w, d in zip(raw, drop, strict=True) if not d and not w.isdigit()]
    return " ".join(kept).strip() or None


def _is_symptom(condition: str) -> bool:
    return any(fold(condition).startswith(fold(head)) for head in p.SYMPTOM_HEADS)


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
                "condition_ambiguous": fold(condition) in p.AMBIGUOUS_CONDITIONS,
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


_LLM_SYSTEM = """Bạn phân tích câu hỏi về thuốc (tiếng Việt) thành JSON theo đúng lược đồ sau, không thêm khóa nào khác.
turn_type ∈ {turn_types}. section_key ∈ {sections} hoặc null.
population ∈ adult|pediatric|elderly|null. condition_relation ∈ indication|contraindication|caution|causes|null.
drugs: danh sách tên thuốc như người dùng viết. Chỉ trả JSON."""


class LlmQueryUnderstander:
    """One JSON call through a :class:`JsonLlm`, validated against :class:`QueryFrame`.

    Fail-closed: any provider error or invalid JSON yields a frame that routes to an abstention
    with a system reason (row 4), never a guess.
    """

    name = "llm"

    def __init__(self, llm: JsonLlm, resolver: DrugResolver):
        self.llm = llm
        self.resolver = resolver

    def understand(
        self, turn: str, history: Sequence[str], budget: RequestBudget, prior_frame: QueryFrame | None
    ) -> QueryFrame:
        system = _LLM_SYSTEM.format(
            turn_types="|".join(t.value for t in TurnType), sections="|".join(SECTION_PHRASES),
        )
        user = json.dumps(
            {"history": list(history)[-12:], "turn": turn,
             "previous_frame": prior_frame.model_dump(mode="json") if prior_frame else None},
            ensure_ascii=False,
        )
        try:
            raw = self.llm.complete_json(system, user, budget, "understanding")
            names = raw.get("drugs") or []
            drug_ids: list[str] = []
            unknown: list[str] = list(raw.get("unknown_drugs") or [])
            for name in names:
                found, _ = self.resolver.find(str(name))
                if found:
                    drug_ids.extend(m.drug_id for m in found if m.drug_id not in drug_ids)
                else:
                    unknown.append(str(name))
            frame = QueryFrame.model_validate({**raw, "drugs": drug_ids, "unknown_drugs": unknown})
        except (AnswerGenerationUnavailable, ValidationError, TypeError, AttributeError) as exc:
            return QueryFrame(
                turn_type=TurnType.DRUG_ATTRIBUTE, needs_clarify=True, clarify_reason="understanding_failed",
                understanding_error=f"{type(exc).__name__}: {str(exc)[:300]}",
            )
        return merge_with_prior_frame(frame, prior_frame, turn)
