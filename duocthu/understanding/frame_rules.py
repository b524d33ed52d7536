"""The frame rules: where the entities overrule the turn type, as first-match tables over typed facts.

The intent model (or the cue table) proposes a turn type; the entities the turn names may disagree (a
book drug named is a question about that drug; an interaction needs a second drug). What the turn says
is computed once into :class:`IntentFacts` — each fact one small function with a test — and the rules
are rows ``Row(name, when, then)`` read top to bottom: in each table the first row whose ``when``
holds for (facts, turn type so far) gives the frame update, and no other row of that table applies.

Two points of the pipeline use them: :data:`RECONCILE` after the cues (four short tables in turn:
what kind of turn, overview or attribute, the patient's state, a name the book lacks), and
:data:`SETTLE` after carry-over (the last consistency of a turn type and its section). One test per
row lives in ``tests/test_understanding_frame_rules.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from duocthu.lexicon import LEXICON
from duocthu.sections import SECTION_TITLES
from duocthu.text import fold, turn_sentences, words
from duocthu.understanding.cues import INTERACTION_ONLY_WORDS, REVERSE_CUES, named_section
from duocthu.understanding.evidence import TurnEvidence
from duocthu.understanding.frame import PatientFacts, QueryFrame, TurnType
from duocthu.understanding.scope import has_phrase, looks_like_code, looks_like_instruction_attack

SECTION_MARGIN = 0.1
"""Below this gap between the two likeliest sections the understander does not pick one: it asks (dev-tuned)."""
UNKNOWN_NAME_FLOOR = 0.5
"""A leftover drug-like word is named as a medicine not in the book when the turn is this likely a drug question."""

DRUG_TURN_TYPES = frozenset({TurnType.DRUG_ATTRIBUTE, TurnType.DRUG_OVERVIEW, TurnType.DOSING_CALC})
_NOT_DRUG_QUESTIONS = frozenset({TurnType.SMALLTALK, TurnType.OUT_OF_SCOPE, TurnType.MEDICAL_QUESTION,
                                 TurnType.CONDITION_TO_DRUG, TurnType.SYMPTOM_TO_DRUG, TurnType.CONDITION_RELATION})
_REVERSE_TYPES = frozenset({TurnType.CONDITION_TO_DRUG, TurnType.SYMPTOM_TO_DRUG, TurnType.CONDITION_RELATION})
_STATE_SECTIONS = ("thoi_ky_mang_thai", "thoi_ky_cho_con_bu")

# The cue rows that already decided what the turn is about: the rules below must not undo them. Read from
# the frame's record of the cue rows that fired (the one place these names are read).
_ENDS_SMALLTALK = frozenset({"greeting", "about_assistant"})
_ASKS_TWO_DRUGS_OR_OVERDOSE = frozenset({"overdose_question", "two_drugs_together", "taking_then_asking",
                                         "vague_second_drug", "avoid_with_taken"})


# -- the facts -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class IntentFacts:
    """What the turn and its entities say, computed once for the rule tables."""

    turn_type: TurnType  # as the model and the cue table left it
    names_book_drug: bool
    names_one_book_drug: bool
    names_unknown_drug: bool
    takes_medicines: bool
    needs_clarify: bool
    is_attack: bool
    cue_reverse_lookup: bool
    cue_not_covered: bool  # a topic the book does not cover (price, where to buy …) about a medicine
    cue_ends_smalltalk: bool
    cue_vague_about_drug: bool
    has_reverse_words: bool
    has_interaction_only_words: bool
    names_condition: bool
    has_residual_words: bool
    drug_question_without_drug: bool
    only_asks_to_ask: bool
    only_names_the_drug: bool
    asks_what_the_drug_is: bool
    section: str | None  # the section the turn names by name, else None
    model_section: str | None  # the model's section, whatever its margin
    model_section_clear: bool  # the model's section is ahead of the next by the margin
    model_top_sections: tuple[str, ...]
    state_section: str | None  # the pregnancy or breastfeeding section the patient's state asks
    unnamed_drug: str | None  # a drug-like word the book does not know, in a likely drug question


def intent_facts(ev: TurnEvidence, frame: QueryFrame) -> IntentFacts:
    """The facts of a turn whose frame the model and the cue table made."""
    intent = ev.intent
    fired = set(frame.cues)
    return IntentFacts(
        turn_type=frame.turn_type, names_book_drug=bool(frame.drugs), names_one_book_drug=len(frame.drugs) == 1,
        names_unknown_drug=bool(frame.unknown_drugs), takes_medicines=bool(frame.patient.current_medications),
        needs_clarify=frame.needs_clarify, is_attack=is_attack(ev.text),
        cue_reverse_lookup="reverse_lookup" in fired, cue_not_covered="not_covered" in fired, cue_ends_smalltalk=bool(fired & _ENDS_SMALLTALK),
        cue_vague_about_drug="vague_about_drug" in fired,
        has_reverse_words=has_phrase(ev.text, REVERSE_CUES),
        has_interaction_only_words=has_phrase(ev.text, INTERACTION_ONLY_WORDS),
        names_condition=bool(ev.conditions), has_residual_words=bool(ev.residual_words),
        drug_question_without_drug=drug_question_without_drug(ev, frame),
        only_asks_to_ask=only_asks_to_ask(ev), only_names_the_drug=only_names_the_drug(ev),
        asks_what_the_drug_is=asks_what_the_drug_is(ev), section=named_section(ev.text),
        model_section=intent.section if intent else None,
        model_section_clear=intent is not None and intent.section_margin >= SECTION_MARGIN,
        model_top_sections=tuple(intent.top_sections(3)) if intent else (),
        state_section=patient_state_section(ev, frame), unnamed_drug=unnamed_drug(ev),
    )


def is_attack(text: str) -> bool:
    """Instructions to the assistant, prompt requests or code (the cue table's first row)."""
    return looks_like_instruction_attack(text) or looks_like_code(text)


def unnamed_drug(ev: TurnEvidence) -> str | None:
    """"Berberin có dùng cho bà bầu được không?": the first drug-like word the book does not know, when the
    model is sure enough the turn asks about a drug (and not a medical question)."""
    intent = ev.intent
    if not ev.resolution.leftovers or intent is None or intent.turn_type_p < UNKNOWN_NAME_FLOOR \
            or intent.p("medical_question") >= 0.2:
        return None
    return ev.resolution.leftovers[0][1]


def drug_question_without_drug(ev: TurnEvidence, frame: QueryFrame) -> bool:
    """"Thế liều người lớn?", "Ai không được dùng?", "Cất giữ ra sao?": a drug question naming no drug,
    whatever the model read (a short follow-up gives it little to go on)."""
    if frame.turn_type not in _NOT_DRUG_QUESTIONS or frame.drugs or frame.unknown_drugs \
            or frame.patient.current_medications:
        return False
    if set(frame.cues) & {"attack", "greeting", "about_assistant", "reverse_lookup", "not_covered"} \
            or has_phrase(ev.text, REVERSE_CUES):
        return False
    if frame.turn_type in (TurnType.SMALLTALK, TurnType.OUT_OF_SCOPE):
        return bool(named_section(ev.text)) or refers_to_a_medicine(ev.text)
    return bool(named_section(ev.text)) and not ev.conditions


# What is left of an overview question once the drug's name is taken out ("Brufen", "Paracetamol là thuốc gì?").
_OVERVIEW_WORDS = frozenset(fold(w) for w in LEXICON.phrases("overview_words"))
ASKS_TO_ASK = LEXICON.phrases("asks_to_ask")
_ASKING_WORDS = frozenset(fold(w) for w in LEXICON.phrases("asking_words"))


def _words_but_names(ev: TurnEvidence) -> list[str]:
    spans = [(m.start, m.end) for m in ev.resolution.mentions]
    return [fold(w) for i, w in enumerate(words(ev.text)) if not any(a <= i < b for a, b in spans)]


def only_asks_to_ask(ev: TurnEvidence) -> bool:
    """"Cho em hỏi chút về thuốc ibuprofen ạ": which attribute is still to be asked."""
    if not has_phrase(ev.text, ASKS_TO_ASK) or named_section(ev.text) is not None:
        return False
    return all(w in _OVERVIEW_WORDS | _ASKING_WORDS for w in _words_but_names(ev))


def only_names_the_drug(ev: TurnEvidence) -> bool:
    """"Brufen", "Paracetamol là thuốc gì?": nothing but the name and overview words."""
    return all(w in _OVERVIEW_WORDS for w in _words_but_names(ev)) and named_section(ev.text) is None


def asks_what_the_drug_is(ev: TurnEvidence) -> bool:
    """The last sentence names a drug and asks what it is ("… Sintrom là thuốc gì vậy?"), whatever came before."""
    sentences = turn_sentences(ev.text)
    if len(sentences) < 2 or not LEXICON.matches("asks_what_it_is", sentences[-1]):
        return False
    offset = len(words(ev.text)) - len(words(sentences[-1]))
    last = words(sentences[-1])
    spans = [(m.start - offset, m.end - offset) for m in ev.resolution.every_mention or ev.resolution.mentions
             if m.start >= offset]
    rest = [fold(w) for i, w in enumerate(last) if not any(a <= i < b for a, b in spans)]
    return bool(spans) and all(w in _OVERVIEW_WORDS for w in rest) and named_section(sentences[-1]) is None


# Words that show a turn is about a medicine even when it names none ("thuốc này", "uống mấy viên").
DRUG_REFERENCE_WORDS = LEXICON.phrases("drug_reference_words")
# Counted only as typed with their diacritics: unaccented, "nho" may be "nhổ" (a tooth), "dung" "đúng", "no" "no"
# (full), "vien" "viện" (hospital), "dat" "đất".
DRUG_REFERENCE_WORDS_WITH_DIACRITICS = frozenset(frozenset(LEXICON.phrases("drug_reference_words_with_diacritics")))


def refers_to_a_medicine(text: str) -> bool:
    """The turn speaks of a medicine, named or not ("thuốc này", "uống mấy viên")."""
    return has_phrase(text, DRUG_REFERENCE_WORDS) or any(
        w.lower() in DRUG_REFERENCE_WORDS_WITH_DIACRITICS for w in words(text))


_DOSE_WORDS = LEXICON.phrases("dose_words")


def patient_state_section(ev: TurnEvidence, frame: QueryFrame) -> str | None:
    """The pregnancy or breastfeeding section, when this turn states that state and asks no other section."""
    if not (ev.facts.pregnant or ev.facts.breastfeeding) or frame.wants_section_overview:
        return None
    named = named_section(ev.text)
    state = "thoi_ky_mang_thai" if ev.facts.pregnant else "thoi_ky_cho_con_bu"
    if named not in (None, *_STATE_SECTIONS) or has_phrase(ev.text, _DOSE_WORDS):
        return None
    if set(frame.cues) & _ASKS_TWO_DRUGS_OR_OVERDOSE:
        return None
    return named or state


# -- the rows ------------------------------------------------------------------------------------

Update = dict[str, object]
FactsT = TypeVar("FactsT")


@dataclass(frozen=True)
class Row(Generic[FactsT]):
    """One rule: when it holds for the facts and the turn type so far, the frame update it makes."""

    name: str
    when: Callable[[FactsT, TurnType], bool]
    then: Callable[[FactsT], Update]
    why: str
    recorded: bool = False  # the row's name goes to ``frame.cues`` (later stages and research mode read it)


def first_match(table: tuple[Row[FactsT], ...], facts: FactsT, turn_type: TurnType) -> Row[FactsT] | None:
    """The first row of the table that holds, or None."""
    return next((row for row in table if row.when(facts, turn_type)), None)


def _apply(tables: tuple[tuple[Row[FactsT], ...], ...], facts: FactsT, frame: QueryFrame) -> QueryFrame:
    for table in tables:
        row = first_match(table, facts, frame.turn_type)
        if row is not None:
            update = row.then(facts)
            frame = frame.model_copy(update={**update, "cues": [*frame.cues, row.name]} if row.recorded else update)
    return frame


def _section(key: str) -> Update:
    return {"turn_type": TurnType.DRUG_ATTRIBUTE, "section_key": key, "section_candidates": [],
            "attribute": SECTION_TITLES[key]}


def _about_the_named_drug(f: IntentFacts) -> Update:
    section = f.section or (f.model_section if f.model_section_clear else None)
    turn_type = TurnType.DRUG_ATTRIBUTE if section or f.has_residual_words else TurnType.DRUG_OVERVIEW
    return {"turn_type": turn_type, "section_key": section,
            "section_candidates": [] if section else list(f.model_top_sections)}


def _about_an_unnamed_drug(f: IntentFacts) -> Update:
    section = f.section or f.model_section
    return {"turn_type": TurnType.DRUG_ATTRIBUTE, "section_key": section, "section_candidates": [],
            "attribute": SECTION_TITLES[section] if section else None}


_TALK_TYPES = frozenset({TurnType.MEDICAL_QUESTION, TurnType.SMALLTALK, TurnType.OUT_OF_SCOPE,
                         TurnType.CONDITION_TO_DRUG, TurnType.CONDITION_RELATION})
_NO_ATTRIBUTE: Update = {"section_key": None, "section_candidates": [], "attribute": None}

TURN_KIND: tuple[Row[IntentFacts], ...] = (
    Row("book_drug_named",
        lambda f, t: t in _TALK_TYPES and f.names_book_drug and not f.is_attack and not f.cue_reverse_lookup
        and not f.cue_not_covered,
        _about_the_named_drug, "a book drug named: it is a question about that drug"),
    Row("interaction_of_one_drug",
        lambda f, t: t is TurnType.INTERACTION and f.names_one_book_drug and not f.needs_clarify
        and not f.takes_medicines and not f.names_unknown_drug,
        lambda f: {"turn_type": TurnType.DRUG_ATTRIBUTE, "section_key": "tuong_tac_thuoc", "section_candidates": []},
        "one drug and 'tương tác với những thuốc nào?': its interaction section"),
    Row("unknown_drug_asked",
        lambda f, t: t in _REVERSE_TYPES and f.names_unknown_drug and not f.names_book_drug
        and not f.has_reverse_words and not f.cue_reverse_lookup,
        lambda f: {"turn_type": TurnType.DRUG_ATTRIBUTE, "condition": None, "indication": None,
                   "condition_relation": None},
        "'Prednison trị viêm khớp uống sáng hay tối?': a question about that (unknown) drug, not a reverse lookup"),
    Row("medicine_not_off_topic",
        lambda f, t: t is TurnType.OUT_OF_SCOPE and f.names_condition and not f.names_book_drug
        and not f.names_unknown_drug and not f.is_attack and not f.cue_not_covered,
        lambda f: {"turn_type": TurnType.MEDICAL_QUESTION},
        "'Vì sao cứ bị nhiệt miệng hoài?': medicine, not off topic"),
    Row("drug_question_without_drug",
        lambda f, t: f.drug_question_without_drug,
        _about_an_unnamed_drug,
        "'Thế liều người lớn?', 'Ai không được dùng?': a question about a drug, even a short one"),
)

# Read with the turn type the first table left; an interaction the model read keeps its section.
OVERVIEW_OR_ATTRIBUTE: tuple[Row[IntentFacts], ...] = (
    Row("vague_about_drug",
        lambda f, t: t in (TurnType.DRUG_ATTRIBUTE, TurnType.DRUG_OVERVIEW) and f.turn_type is not TurnType.INTERACTION
        and f.names_book_drug and f.only_asks_to_ask and not f.cue_vague_about_drug and not f.takes_medicines,
        lambda f: {"turn_type": TurnType.DRUG_ATTRIBUTE, **_NO_ATTRIBUTE},
        "'Cho em hỏi chút về thuốc ibuprofen ạ': which attribute is still to be asked", recorded=True),
    Row("only_the_name",
        lambda f, t: t in (TurnType.DRUG_ATTRIBUTE, TurnType.DOSING_CALC) and f.turn_type is not TurnType.INTERACTION
        and f.names_book_drug and not f.cue_vague_about_drug and (
            (t is TurnType.DRUG_ATTRIBUTE and f.only_names_the_drug and not f.takes_medicines)
            or f.asks_what_the_drug_is),
        lambda f: {"turn_type": TurnType.DRUG_OVERVIEW, **_NO_ATTRIBUTE},
        "only a name ('Brufen', '… Sintrom là thuốc gì vậy?'): nothing for the model to read a section from"),
)

PATIENT_STATE: tuple[Row[IntentFacts], ...] = (
    Row("patient_state_section",
        lambda f, t: f.state_section is not None and f.names_book_drug and t in DRUG_TURN_TYPES,
        lambda f: _section(f.state_section or "thoi_ky_mang_thai"),
        "'Đang cho con bú, uống cefalexin được không?': the section of the state the patient is in"),
)

NAME_THE_BOOK_LACKS: tuple[Row[IntentFacts], ...] = (
    Row("unknown_drug_named",
        lambda f, t: t in DRUG_TURN_TYPES | {TurnType.INTERACTION} and not f.names_book_drug
        and not f.names_unknown_drug and f.unnamed_drug is not None,
        lambda f: {"unknown_drugs": [f.unnamed_drug]},
        "'Berberin có dùng cho bà bầu được không?': a drug-like word the book does not know"),
)

# Last, so that a name the book lacks is never looked for in a reverse lookup read this way.
INTERACTIONS_ASKED: tuple[Row[IntentFacts], ...] = (
    Row("interactions_of_an_unnamed_drug",
        lambda f, t: t in _REVERSE_TYPES and not f.names_book_drug and not f.names_unknown_drug
        and not f.takes_medicines and f.has_interaction_only_words and not f.cue_reverse_lookup,
        lambda f: _section("tuong_tac_thuoc"),
        "'Có kỵ thuốc nào không?': the interactions of a drug not named yet — which drug?"),
)

RECONCILE: tuple[tuple[Row[IntentFacts], ...], ...] = (
    TURN_KIND, OVERVIEW_OR_ATTRIBUTE, PATIENT_STATE, NAME_THE_BOOK_LACKS, INTERACTIONS_ASKED)
"""The tables read in turn after the cues, each with the turn type the previous ones left."""


def apply_reconcile(ev: TurnEvidence, frame: QueryFrame) -> QueryFrame:
    """Make the frame agree with the entities the turn names (the :data:`RECONCILE` tables)."""
    return _apply(RECONCILE, intent_facts(ev, frame), frame)


# -- after carry-over ----------------------------------------------------------------------------


@dataclass(frozen=True)
class SettledFacts:
    """What the last table reads of a frame after carry-over."""

    section_key: str | None
    asks_no_drug_at_all: bool
    patient: PatientFacts


# A drink is not a medicine: "mỗi khi uống cà phê" does not ask about a drug.
_DRINKING_RE = re.compile(
    r"\b(?:uống|uong)\s+(?:cà phê|ca phe|cafe|café|trà|tra|chè|rượu|ruou|bia|sữa|sua|nước|nuoc)\b", re.IGNORECASE)


def asks_no_drug_at_all(ev: TurnEvidence, frame: QueryFrame) -> bool:
    """"Bé 7 tháng mọc răng sốt nhẹ có sao không?": a drug question with no drug named, inherited or even
    mentioned, and no cue row but a section's name behind it."""
    return (frame.turn_type in DRUG_TURN_TYPES and not frame.drugs and not frame.unknown_drugs
            and not frame.ambiguous_names and not frame.products
            and named_section(ev.text) in (None, *_STATE_SECTIONS)
            # the drink left out here only: an off-topic reading of "uống cà phê … có sao không" is first made a
            # drug question (by "uống"), and so reaches this medical reading rather than staying off topic
            and not refers_to_a_medicine(_DRINKING_RE.sub(" ", ev.text))
            and not set(frame.cues) - {"section_named"})


def settled_facts(ev: TurnEvidence, frame: QueryFrame) -> SettledFacts:
    """The facts of a frame after carry-over."""
    return SettledFacts(frame.section_key, asks_no_drug_at_all(ev, frame), frame.patient)


SETTLE: tuple[Row[SettledFacts], ...] = (
    Row("no_drug_at_all",
        lambda f, t: f.asks_no_drug_at_all,
        lambda f: {"turn_type": TurnType.MEDICAL_QUESTION, **_NO_ATTRIBUTE},
        "no drug named, inherited or even mentioned: a medical question, not 'which drug?'"),
    Row("dose_reads_dosing",
        lambda f, t: t is TurnType.DOSING_CALC and f.section_key != "lieu_luong_va_cach_dung",
        lambda f: {"section_key": "lieu_luong_va_cach_dung", "section_candidates": []},
        "a personal dose reads the dosing section"),
    Row("interaction_reads_interactions",
        lambda f, t: t is TurnType.INTERACTION and f.section_key != "tuong_tac_thuoc",
        lambda f: {"section_key": "tuong_tac_thuoc", "section_candidates": []},
        "an interaction reads the interaction section"),
    Row("crisis_marks_the_conversation",
        lambda f, t: t is TurnType.CRISIS,
        lambda f: {"section_key": None, "section_candidates": [],
                   "patient": f.patient.model_copy(update={"crisis": True})},
        "the conversation stays marked at risk, whichever step named the crisis; no section is asked"),
    Row("emergency_asks_no_section",
        lambda f, t: t is TurnType.EMERGENCY,
        lambda f: {"section_key": None, "section_candidates": []},
        "an emergency needs urgent care, not a section"),
)
"""After carry-over, first match wins: the last consistency of a turn type and its section."""


def apply_settle(ev: TurnEvidence, frame: QueryFrame) -> QueryFrame:
    """Settle a frame after carry-over (the :data:`SETTLE` table)."""
    return _apply((SETTLE,), settled_facts(ev, frame), frame)
