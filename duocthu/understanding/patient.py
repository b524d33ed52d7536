"""Facts about the patient stated in one turn: who, how old and heavy, pregnant or breastfeeding,
which conditions, which medicines are being taken.

The conversation's facts are these accumulated over every turn (see ``carryover.py``). The
medicines being taken are the ones in the clause of a "đang uống/đang dùng …" cue, so in "Đang
dùng isosorbid dinitrat thì uống sildenafil được không?" isosorbid is taken and sildenafil asked.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from duocthu.lexicon import LEXICON
from duocthu.text import fold, folded_words, normalize, words
from duocthu.understanding.conditions import ConditionLexicon
from duocthu.understanding.drugs import Resolution
from duocthu.understanding.frame import Population
from duocthu.understanding.quantities import (
    Age,
    folded_with_digits,
    parse_age,
    parse_renal_clearance,
    parse_trimester,
    parse_weight,
)
from duocthu.understanding.scope import has_phrase

PEDIATRIC_WORDS = LEXICON.phrases("pediatric_words")
STRONG_ADULT_WORDS = LEXICON.phrases("strong_adult_words")
ADULT_WORDS = LEXICON.phrases("adult_words")  # "tôi" is weak: a parent says it too
ELDERLY_WORDS = LEXICON.phrases("elderly_words")
CHILD_ONLY_WEIGHT_KG = 25
ORGAN_IMPAIRMENT_WORDS = LEXICON.phrases("organ_impairment_words")
ADJUSTMENT_WORDS = LEXICON.phrases("adjustment_words")
DIALYSIS_WORDS = LEXICON.phrases("dialysis_words")
ROUTE_WORDS = LEXICON.group("route_words")
PREGNANCY_WORDS = LEXICON.phrases("pregnancy_words")
NOT_PREGNANT_WORDS = LEXICON.phrases("not_pregnant_words")
BREASTFEEDING_WORDS = LEXICON.phrases("breastfeeding_words")
CURRENT_MEDICATION_CUES = LEXICON.phrases("current_medication_cues")
# "dị ứng penicillin", "mẫn cảm với aspirin": what the patient must not be given again. "Hồi trước uống
# aspirin thì bị lên cơn hen": a past reaction, not a medicine taken now nor the one asked about.
ALLERGY_CUES = LEXICON.phrases("allergy_cues")
# Allergens the book's hypersensitivity lines name that are not drugs of the book ("dị ứng iod").
ALLERGEN_WORDS = frozenset(fold(w) for w in LEXICON.phrases("allergen_words"))
PAST_USE_CUES = LEXICON.phrases("past_use_cues")
REACTION_WORDS = LEXICON.phrases("reaction_words")
# Signs of an allergic reaction ("bị đau dạ dày" after a medicine is a side effect, not an allergy).
ALLERGIC_SIGNS = tuple(w for w in REACTION_WORDS if w != "bị")
# Words after which a condition is what a drug may cause, not what the patient has ("có làm giảm tiểu cầu không").
CAUSAL_VERBS = frozenset(fold(w) for w in LEXICON.phrases("causal_verbs"))
PRONOUN_DRUG_REFERENCES = LEXICON.phrases("pronoun_drug_references")
_CLAUSE_WORDS = frozenset(fold(w) for w in LEXICON.phrases("clause_words"))
_SECOND_ACTION_WORDS = frozenset(fold(w) for w in LEXICON.phrases("second_action_words"))
_PIECE_RE = re.compile(r"\w+|[^\w\s]", re.UNICODE)


@dataclass(frozen=True)
class TurnFacts:
    """Patient facts stated in one turn (``None``: not said)."""

    age: Age | None = None
    weight_kg: float | None = None
    population: Population | None = None
    states_population: bool = False  # said who the patient is (not just "tôi", which a parent says too)
    route: str | None = None
    pregnant: bool | None = None
    trimester: int | None = None
    breastfeeding: bool | None = None
    conditions: tuple[str, ...] = ()  # condition labels
    current_medications: tuple[str, ...] = ()  # drug_ids being taken
    # taken and named again outside the "đang uống …" span: "đang uống Sintrom vì rung nhĩ. Sintrom là thuốc gì?"
    taken_and_asked: tuple[str, ...] = ()
    other_medications: tuple[str, ...] = ()  # names not in the book being taken
    current_pronoun: bool = False  # "tôi đang uống nó": the medicine taken is the conversation's drug
    renal_clearance_ml_min: float | None = None
    allergies: tuple[str, ...] = ()  # drug_ids or names the patient reacted to ("penicillin")
    history_drugs: tuple[str, ...] = ()  # drug_ids named only as taken in the past (not asked about)


def clause_of_tokens(text: str) -> list[int]:
    """For each word token of ``words(text)``, the index of the clause it belongs to.

    Clauses end at punctuation and at linking words ("thì", "mà", "nhưng", "giờ" …).
    """
    clause = 0
    ids: list[int] = []
    for piece in _PIECE_RE.findall(normalize(text).lower()):
        if not (piece[0].isalnum() or piece[0] == "_"):
            if piece in ",.;?!:":
                clause += 1
            continue
        if fold(piece) in _CLAUSE_WORDS:
            clause += 1
        ids.append(clause)
    return ids


def population_of(text: str, age_years: float | None) -> Population | None:
    if age_years is not None:
        if age_years < 18:
            return Population.PEDIATRIC
        return Population.ELDERLY if age_years >= 65 else Population.ADULT
    if has_phrase(text, PEDIATRIC_WORDS):
        return Population.PEDIATRIC
    if has_phrase(text, ELDERLY_WORDS):
        return Population.ELDERLY
    if has_phrase(text, ADULT_WORDS):
        return Population.ADULT
    return None


_PAST_YEAR_RE = re.compile(r"\b((?:hồi|hoi|năm|nam|vào năm|từ năm|khoảng năm)\s+(?:19[5-9]\d|20[0-4]\d))\b", re.IGNORECASE)


def _past_years(text: str) -> tuple[str, ...]:
    """"Hồi 2020", "năm 2019": a year told as when something happened is a cue of the past, like "hồi trước"."""
    return tuple(dict.fromkeys(m.group(1) for m in _PAST_YEAR_RE.finditer(text)))


def _cue_starts(tokens: list[str], folded: list[str], cues: tuple[str, ...]) -> Iterator[tuple[int, int]]:
    """(start, length) of every occurrence of a cue, accent-aware where the user typed accents."""
    for cue in cues:
        cue_words = [fold(w) for w in words(cue)]
        n = len(cue_words)
        for start in range(len(tokens) - n + 1):
            if folded[start : start + n] == cue_words and _accent_ok(tokens[start : start + n], words(cue)):
                yield start, n


def _taken_positions(text: str) -> tuple[set[int], bool]:
    """Token positions inside a "đang uống …" span, and whether a pronoun ("nó") sits in one."""
    tokens = words(text)
    folded = [fold(t) for t in tokens]
    clauses = clause_of_tokens(text)
    positions: set[int] = set()
    pronoun = False
    for start, n in _cue_starts(tokens, folded, CURRENT_MEDICATION_CUES):
        end = start + n
        clause = clauses[start] if start < len(clauses) else -1
        seen_content = False
        while end < len(tokens) and clauses[end] == clause:
            if seen_content and folded[end] in _SECOND_ACTION_WORDS:
                break
            positions.add(end)
            seen_content = True
            end += 1
        span = " ".join(tokens[start + n : end])
        if has_phrase(span, PRONOUN_DRUG_REFERENCES):
            pronoun = True
    # "Tôi uống nó mỗi ngày": the conversation's drug, taken regularly.
    pronoun = pronoun or bool(_REGULAR_PRONOUN_RE.search(" ".join(folded)))
    return positions, pronoun


_LIST_JOINERS = frozenset(frozenset(LEXICON.phrases("list_joiners")))  # not "lan": "ngày 1 lần" is no "lẫn"
_STRENGTH_WORDS = frozenset(frozenset(LEXICON.phrases("strength_words")))


def _listed_after_taken(taken: set[int], resolution: Resolution, text: str) -> set[int]:
    """"đang uống warfarin, digoxin và metformin", "mỗi ngày uống simvastatin 20, amlodipin 5 với aspirin 81":
    the drugs listed after the first one taken, across the commas, when the list closes with "và / với".
    "đang uống warfarin, ibuprofen có được không?" closes with nothing: ibuprofen is asked."""
    folded = [fold(t) for t in words(text)]
    mentions = sorted(resolution.every_mention or resolution.mentions, key=lambda m: m.start)
    chain: list[tuple[int, int]] = []
    added: set[int] = set()
    for previous, current in zip(mentions, mentions[1:], strict=False):
        if current.start in taken:
            continue
        if previous.start not in taken and (previous.start, previous.end) not in chain:
            chain = []
            continue
        gap = folded[previous.end : current.start]
        if len(gap) > 4 or not all(w.isdigit() or w in _LIST_JOINERS | _STRENGTH_WORDS for w in gap):
            chain = []
            continue
        chain.append((current.start, current.end))
        if _LIST_JOINERS & set(gap):  # the list closes: every item of it was taken
            added.update(i for start, end in chain for i in range(start, end))
            chain = []
    return added


_REGULAR_PRONOUN_RE = re.compile(r"\b(?:uong|dung|tiem|xai) (?:no|thuoc nay|thuoc do|thuoc ay)"
                                 r" (?:moi ngay|hang ngay|deu|thuong xuyen|lau nay|suot|(?:may|nhieu|\d+) (?:nam|thang) nay"
                                 r"|(?:moi|hang|vao moi|vao) (?:sang|toi|trua|chieu|dem|buoi sang|buoi toi|tuan))\b"
                                 # "Sáng nào tôi cũng uống nó"
                                 r"|\b(?:sang|toi|trua|chieu|ngay|hom|dem) nao (?:\w+ )?cung (?:uong|dung|tiem|xai)"
                                 r" (?:no|thuoc nay|thuoc do|thuoc ay)\b")


_TRIGGER_WORDS = frozenset(fold(w) for w in LEXICON.phrases("trigger_words"))  # "sau đợt uống X"


def _cue_spans(text: str, cues: tuple[str, ...], names_at: frozenset[int] | None = None,
               reaction: bool = False) -> list[tuple[int, int]]:
    """(start, end) token spans from after each cue to the end of its clause — or, given the token
    positions where names start, to the first "uống / dùng / thêm" after a name ("dị ứng thời tiết, uống
    thêm Telfast": Telfast is not the allergy)."""
    tokens = words(text)
    folded = [fold(t) for t in tokens]
    clauses = clause_of_tokens(text)
    spans: list[tuple[int, int]] = []
    for start, n in _cue_starts(tokens, folded, cues):
        end = start + n
        clause = clauses[start] if start < len(clauses) else -1
        named = False
        while end < len(tokens) and clauses[end] == clause:
            action = folded[end] in _SECOND_ACTION_WORDS
            if reaction and action and folded[end - 1] not in _TRIGGER_WORDS:
                break  # "dị ứng thời tiết uống thêm X": X is asked; "dị ứng khi uống X": X is the cause
            if names_at is not None and not reaction and action and (named or end > start + n + 2) \
                    and folded[end - 1] not in _TRIGGER_WORDS:
                break  # "… sau khi uống X": X is the cause of what happened, still in the past
            named = named or (names_at is not None and end in names_at)
            end += 1
        spans.append((start + n, end))
    return spans


_HISTORY_WORDS = ("tiền sử", "bệnh sử")
_CAUSE_OF_HISTORY = (("khi",), ("sau", "khi"), ("do",), ("vi",), ("sau",))
# How a medicine is taken, folded (the verb before its name: "uống paracetamol", "tiêm insulin").
USE_VERBS = frozenset(fold(w) for w in LEXICON.phrases("use_verbs"))


def _history_cause_spans(text: str) -> list[tuple[int, int]]:
    """"tiền sử lên cơn hen khi dùng aspirin": the drug after "khi / sau khi / do … dùng" in a history clause
    caused that history; it is not the drug asked about."""
    tokens = words(text)
    folded = [fold(t) for t in tokens]
    clauses = clause_of_tokens(text)
    spans: list[tuple[int, int]] = []
    for start, n in _cue_starts(tokens, folded, _HISTORY_WORDS):
        clause = clauses[start] if start < len(clauses) else -1
        for i in range(start + n, len(tokens)):
            if clauses[i] != clause:
                break
            for trigger in _CAUSE_OF_HISTORY:
                after = i + len(trigger)
                if tuple(folded[i:after]) == trigger and after < len(tokens) and folded[after] in USE_VERBS:
                    end = after + 1
                    while end < min(after + 4, len(tokens)) and clauses[end] == clause:
                        end += 1
                    spans.append((after + 1, end))
    return spans


def _in_spans(position: int, spans: list[tuple[int, int]]) -> bool:
    return any(start <= position < end for start, end in spans)


def _caused_not_had(text: str, start: int) -> bool:
    """The condition at ``start`` follows "làm"/"gây" — asked as an effect of a drug."""
    folded = [fold(t) for t in words(text)]
    before = folded[max(0, start - 2) : start]
    return any(w in CAUSAL_VERBS for w in before)


def _accent_ok(typed: list[str], cue: list[str]) -> bool:
    from duocthu.text import token_matches

    return all(token_matches(t, c) for t, c in zip(typed, cue, strict=True))


_NURSING_AGE_RE = re.compile(r"\b(?:cho (?:con |be |em be )?bu|bu me|nuoi con)\b[^.?!,;]{0,12}?\d+\s*(?:thang|tuan|ngay)")


# "Con em mới sinh được 10 ngày, em bú mẹ. Coversyl em đang uống …", "bé mới 2 tuần tuổi và đang bú mẹ. Em vẫn
# phải uống captopril": a parent whose infant is breastfed asks about the parent's own medicine.
_INFANT_RE = re.compile(r"\b(?:con|be|chau)\b(?: \w+){0,4}? (?:moi sinh|so sinh|\d+ (?:ngay|tuan|thang)\b)")
# The parent takes the medicine or has the illness ("em uống", "em bị cao huyết áp" — not "con em bị"), or asks
# whether it reaches the baby ("có ảnh hưởng bé không").
_FIRST_PERSON_TAKES_RE = re.compile(r"(?<!con )(?<!chau )\b(?:em(?! be)|toi|minh)\b(?: \w+){0,2}? (?:uong|dung|tiem|bi)\b"
                                    r"|\banh huong (?:den |toi |cho )?(?:be|con|chau|sua)\b")
# "Em vừa sinh 6 tuần": the weeks since the speaker gave birth, not anyone's age.
_POSTPARTUM_RE = re.compile(r"(?<!con )\b(?:em|toi|minh) (?:vua|moi) (?:sinh|de)\b(?: \w+){0,2}? \d+ (?:ngay|tuan|thang)\b"
                            r"|\bsau sinh \d+ (?:ngay|tuan|thang)\b")
_GIVEN_TO_CHILD = LEXICON.phrases("given_to_child")


def _nurses_own_infant(text: str) -> bool:
    folded = folded_with_digits(text)
    if _POSTPARTUM_RE.search(folded):
        return True
    return bool("bu" in folded_words(text) and _INFANT_RE.search(folded) and _FIRST_PERSON_TAKES_RE.search(folded)
                and not has_phrase(text, _GIVEN_TO_CHILD))


SINCE_CHILDHOOD = LEXICON.phrases("since_childhood")


def _without_nursing_words(text: str) -> str:
    """"đang cho bé bú": the baby is not the patient — the nursing mother is; "hen từ bé": nor is a child."""
    out = text
    for phrase in sorted((*BREASTFEEDING_WORDS, *SINCE_CHILDHOOD), key=len, reverse=True):
        out = re.sub(re.escape(phrase), " ", out, flags=re.IGNORECASE)
    return out


def _stated_population(text: str, age: Age | None, nursing: bool, own_infant: bool, weight: float | None,
                       renal_clearance: float | None) -> Population | None:
    """Who the patient is (adult, child, elderly), from the words, the age, a weight or an adult's adjustment."""
    not_a_child = nursing or has_phrase(text, SINCE_CHILDHOOD)
    population = population_of(_without_nursing_words(text) if not_a_child else text, age.years if age else None)
    if own_infant:
        population = Population.ADULT  # the parent takes the medicine; the infant is who it may reach
    if population is Population.ADULT and age is None and weight is not None and not has_phrase(text, STRONG_ADULT_WORDS):
        # "Mình nặng 38 kg": a weight alone does not say adult or child, and "tôi/mình" may be a parent.
        population = None
    if population is None and age is None and weight is not None and weight < CHILD_ONLY_WEIGHT_KG:
        population = Population.PEDIATRIC  # "con nặng 18 ký": no adult weighs that; the age is still asked
    if population is None and (renal_clearance is not None or has_phrase(text, DIALYSIS_WORDS)):
        # A creatinine clearance in ml/phút, or dialysis, is how adult doses are adjusted (the book's renal
        # tables and its lines for patients on dialysis).
        population = Population.ADULT
    if population is None and has_phrase(text, ORGAN_IMPAIRMENT_WORDS) and has_phrase(text, ADJUSTMENT_WORDS):
        # "Người suy gan dùng sertralin thì giảm còn bao nhiêu mg?": how the adult dose is adjusted, as the book's
        # lines for liver and kidney failure say it — a child would have been named.
        population = Population.ADULT
    return population


def _medicines_of(text: str, resolution: Resolution) -> tuple[
        tuple[str, ...], tuple[str, ...], tuple[str, ...], bool, tuple[str, ...], tuple[str, ...]]:
    """The medicines the turn says the patient takes, takes and asks about, takes outside the book, and whether
    "thuốc đó" is what is taken; what the patient is allergic to, and the drugs named only as past history."""
    taken, pronoun = _taken_positions(text)
    taken |= _listed_after_taken(taken, resolution, text)
    names_at = frozenset([m.start for m in resolution.mentions] + [u.start for u in resolution.unknown])
    allergy_spans = _cue_spans(text, ALLERGY_CUES, names_at, reaction=True)
    past_spans = _cue_spans(text, (*PAST_USE_CUES, *_past_years(text)), names_at) + _history_cause_spans(text)
    reacted = has_phrase(text, REACTION_WORDS)
    in_past = {m.drug_id for m in resolution.mentions if _in_spans(m.start, past_spans) and m.start not in taken}
    in_allergy = {m.drug_id for m in resolution.mentions if _in_spans(m.start, allergy_spans)}
    # A drug named only as a past reaction or an allergy is background; named again, it is asked about.
    elsewhere = {m.drug_id for m in resolution.every_mention or resolution.mentions
                 if not _in_spans(m.start, past_spans) and not _in_spans(m.start, allergy_spans)}
    history = tuple(d for d in dict.fromkeys(m.drug_id for m in resolution.mentions)
                    if d in in_past | in_allergy and d not in elsewhere)
    allergies = tuple(dict.fromkeys(
        [m.drug_id for m in resolution.mentions if m.drug_id in in_allergy]
        + [u.name for u in resolution.unknown if _in_spans(u.start, allergy_spans)]
        # "Năm ngoái uống Valtrex … bị dị ứng": a product reacted to, by its ingredients the book may name
        + [n for p in resolution.products
           if _in_spans(p.start, allergy_spans) or (reacted and _in_spans(p.start, past_spans)) for n in p.uncovered]
        + [_allergy_words(text, s) for s in allergy_spans if not _span_has_name(s, resolution)]
        + (sorted(in_past) if reacted else [])
        # "Hồi trước tôi uống erythromycin bị nổi mẩn ngứa": a medicine not in the book, reacted to in the past
        + ([u.name for u in resolution.unknown if _in_spans(u.start, past_spans) and u.start not in taken]
           if has_phrase(text, ALLERGIC_SIGNS) else [])
        # "Hồi bé tiêm penicilin bị mề đay": a class the book names, reacted to in the past.
        + ([_allergen_in(text, s) for s in past_spans] if reacted else [])
    ))
    allergies = tuple(a for a in allergies if a)
    current = tuple(dict.fromkeys(m.drug_id for m in resolution.mentions if m.start in taken
                                  and m.drug_id not in allergies))
    taken_and_asked = tuple(dict.fromkeys(m.drug_id for m in resolution.every_mention or resolution.mentions
                                          if m.drug_id in current and m.start not in taken))
    others = tuple(dict.fromkeys(u.name for u in resolution.unknown if u.start in taken and u.name not in allergies))
    others += tuple(n for p in resolution.products if p.start in taken for n in p.uncovered if n not in others)
    return current, taken_and_asked, others, pronoun, allergies, history


def extract_facts(text: str, resolution: Resolution, lexicon: ConditionLexicon) -> TurnFacts:
    """The facts one turn states about the patient."""
    age = parse_age(text)
    own_infant = _nurses_own_infant(text)
    nursing = has_phrase(text, BREASTFEEDING_WORDS) or (own_infant and "bu" in folded_words(text))
    if age is not None and (own_infant or (nursing and _NURSING_AGE_RE.search(folded_with_digits(text)))):
        age = None  # "cho con bú 5 tháng", "con em mới sinh 10 ngày, em cho bú": the baby's age, not the patient's
    weight = parse_weight(text)
    renal_clearance = parse_renal_clearance(text)
    population = _stated_population(text, age, nursing, own_infant, weight, renal_clearance)
    states_population = age is not None or has_phrase(text, (*STRONG_ADULT_WORDS, *PEDIATRIC_WORDS, *ELDERLY_WORDS))
    route = next((name for name, cues in ROUTE_WORDS.items() if has_phrase(text, cues)), None)
    pregnant: bool | None = None
    trimester = parse_trimester(text)
    if has_phrase(text, NOT_PREGNANT_WORDS):
        pregnant, trimester = False, None
    elif has_phrase(text, PREGNANCY_WORDS) or trimester is not None:
        pregnant = True
    breastfeeding = True if nursing else None
    if population is None and (pregnant or breastfeeding):
        population = Population.ADULT  # a pregnant or nursing woman, unless an age says otherwise
    current, taken_and_asked, others, pronoun, allergies, history = _medicines_of(text, resolution)
    conditions = tuple(m.condition.label for m in lexicon.find(text)
                       if m.condition.patient_condition and not _caused_not_had(text, m.start))
    conditions += tuple(m.condition.label for phrase in _organ_failures_told_organ_first(text)
                        for m in lexicon.find(phrase) if m.condition.patient_condition and m.condition.label not in conditions)
    return TurnFacts(
        age=age, weight_kg=weight, population=population, states_population=states_population,
        route=route, pregnant=pregnant, trimester=trimester, breastfeeding=breastfeeding, conditions=conditions,
        current_medications=current, taken_and_asked=taken_and_asked, other_medications=others, current_pronoun=pronoun,
        renal_clearance_ml_min=renal_clearance, allergies=allergies, history_drugs=history,
    )


# "Gan mình bác sĩ bảo suy mức độ vừa", "thận của bố bị suy nặng rồi": the organ first, its failure later —
# not "suy nghĩ", "suy dinh dưỡng".
_ORGAN_FIRST_RE = re.compile(r"\b(gan|than|tim)\b(?: \w+){0,6}? suy\b(?: (?:muc do|o muc|o muc do|do))?"
                             r"(?: (nhe|vua|trung binh|nang))?(?= roi\b| lam\b|\s*[,.;?!]|\s*$)")
_ORGANS = LEXICON.mapping("organs")
_SEVERITIES = LEXICON.mapping("severities")


def _organ_failures_told_organ_first(text: str) -> list[str]:
    return [f"suy {_ORGANS[m.group(1)]} {_SEVERITIES.get(m.group(2) or '', '')}".strip()
            for m in _ORGAN_FIRST_RE.finditer(fold(normalize(text)))]


_ALLERGY_FILLER = frozenset(fold(w) for w in LEXICON.phrases("allergy_filler"))


def _allergen_in(text: str, span: tuple[int, int]) -> str:
    return next((t for t in words(text)[span[0] : span[1]] if fold(t) in ALLERGEN_WORDS), "")


def _span_has_name(span: tuple[int, int], resolution: Resolution) -> bool:
    return any(span[0] <= m.start < span[1] for m in resolution.mentions) or \
        any(span[0] <= u.start < span[1] for u in resolution.unknown)


def _allergy_words(text: str, span: tuple[int, int]) -> str:
    """The class named after "dị ứng" when no drug name resolved ("dị ứng nhóm sulfamid" → "sulfamid")."""
    tokens = words(text)[span[0] : span[1]]
    allergen = next((t for t in tokens if fold(t) in ALLERGEN_WORDS), None)
    if allergen:
        return allergen
    if not tokens or fold(tokens[0]) not in {"thuoc", "nhom", "khang"}:
        return ""  # "dị ứng thời tiết", "trị dị ứng": no medicine named
    kept = [t for t in tokens if fold(t) not in _ALLERGY_FILLER and t.isalpha() and len(t) >= 4]
    return " ".join(kept[:2])
