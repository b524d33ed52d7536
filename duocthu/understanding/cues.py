"""The cue table: the few high-precision overrides of the intent model, read top to bottom.

Each row is data: an id, the cue in words, its effect on the frame, and why it exists. Every row
that applies is applied, in order (later rows see earlier rows' effects); a row never fires on
words alone when the entities say otherwise (a reverse-lookup cue with a book drug named is a
question about that drug). One unit test per row lives in ``tests/test_understanding_cues.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from duocthu.lexicon import LEXICON
from duocthu.sections import SECTION_TITLES
from duocthu.text import fold, folded_words, phrase_set, turn_sentences, words
from duocthu.understanding.evidence import TurnEvidence
from duocthu.understanding.frame import ConditionRelation, QueryFrame, TurnType
from duocthu.understanding.scope import has_phrase, looks_like_code, looks_like_instruction_attack
from duocthu.understanding.signals import is_emergency, is_overdose_taken, is_self_harm
from duocthu.understanding.telling import CRISIS, EMERGENCY, OVERDOSE_TAKEN, Subject, silenced

ABOUT_ASSISTANT = LEXICON.phrases("about_assistant")
# Where the answers come from: a source asked ("từ nguồn nào") of the answers or of the assistant.
SOURCE_ASKED = LEXICON.phrases("source_asked")
ANSWERS_GIVEN = LEXICON.phrases("answers_given")


def asks_about_assistant(text: str) -> bool:
    return has_phrase(text, ABOUT_ASSISTANT) or (has_phrase(text, SOURCE_ASKED) and has_phrase(text, ANSWERS_GIVEN))
GREETINGS = LEXICON.phrases("greetings")
REVERSE_CUES = LEXICON.phrases("reverse_cues")
CAUSES_CUES = LEXICON.phrases("causes_cues")
CONTRAINDICATION_CUES = LEXICON.phrases("contraindication_cues")
CAUTION_CUES = LEXICON.phrases("caution_cues")
INTERACTION_WORDS = LEXICON.phrases("interaction_words")
VAGUE_SECOND_DRUG = LEXICON.phrases("vague_second_drug")
WHOLE_SECTION = LEXICON.phrases("whole_section")
QUANTITY_WORDS = LEXICON.phrases("quantity_words")
OVERDOSE_QUESTION = LEXICON.phrases("overdose_question")
VAGUE_ABOUT_DRUG = LEXICON.phrases("vague_about_drug")

# Whether a drug comes as a form ("có dạng xịt dưới lưỡi không?") is asked of the forms section. A form that is
# also a verb counts only with "dạng" typed with its diacritics: "co dang xit" may be "có đang xịt".
DOSAGE_FORM_NOUNS = LEXICON.phrases("dosage_form_nouns")
DOSAGE_FORM_VERBS = LEXICON.phrases("dosage_form_verbs")
_FORM_VERB_NAMES = tuple(f"có dạng {form}" for form in DOSAGE_FORM_VERBS)

# The section's own names: when the user names a section, the name decides (the spec's
# "longest phrase wins" keeps "chống chỉ định" from reading as "chỉ định", "quá liều" as "liều").
SECTION_NAMES: dict[str, tuple[str, ...]] = LEXICON.group("section_names")
SECTION_NAMES["dang_thuoc_va_ham_luong"] += tuple(f"có dạng {form}" for form in DOSAGE_FORM_NOUNS)
_NAMES_LONGEST_FIRST = sorted(
    ((tuple(words(name)), name, key) for key, names in SECTION_NAMES.items() for name in names),
    key=lambda item: (-len(item[0]), -len(item[1])),
)


# How to handle what happened: beside a named side effect, the question is the ADR-handling section.
HANDLING_WORDS = LEXICON.phrases("handling_words")


@lru_cache(maxsize=1024)
def named_section(text: str) -> str | None:
    """The section the turn names by one of its names, longest name first, or None (remembered per text:
    the cue rows and the frame rules ask it of the same turn many times)."""
    if "dạng" in text.lower() and has_phrase(text, _FORM_VERB_NAMES) and not _asks_other_section(
            text, "dang_thuoc_va_ham_luong"):
        return "dang_thuoc_va_ham_luong"
    for _tokens, name, key in _NAMES_LONGEST_FIRST:
        if has_phrase(text, (name,)):
            # "dùng cho bà bầu" names the pregnancy section; "cách dùng" the dosing one — but a
            # pregnancy word beside a dose or side-effect question is a patient fact, not the ask.
            if key in ("thoi_ky_mang_thai", "thoi_ky_cho_con_bu") and _asks_other_section(text, key):
                continue
            if key == "tac_dung_khong_mong_muon" and has_phrase(text, HANDLING_WORDS):
                return "huong_dan_xu_tri_adr"  # the side effects named, and what to do about them asked
            return key
    return None


def _asks_other_section(text: str, key: str) -> bool:
    for _tokens, name, other in _NAMES_LONGEST_FIRST:
        if other != key and other not in ("thoi_ky_mang_thai", "thoi_ky_cho_con_bu") and has_phrase(text, (name,)):
            return True
    return False


Effect = Callable[[TurnEvidence, QueryFrame], QueryFrame]
Test = Callable[[TurnEvidence, QueryFrame], bool]


@dataclass(frozen=True)
class Cue:
    id: str
    cue: str  # the cue, in words
    effect_text: str  # the effect on the frame, in words
    why: str
    applies: Test
    effect: Effect
    ends_the_table: bool = False  # a safety row: once it fires, no later row may turn the turn back


def _update(frame: QueryFrame, cue_id: str, **changes: object) -> QueryFrame:
    return frame.model_copy(update={**changes, "cues": [*frame.cues, cue_id]})


def _has_book_drug(ev: TurnEvidence, frame: QueryFrame) -> bool:
    return bool(frame.drugs or frame.patient.current_medications)


PRODUCT_DOSE_WORDS = LEXICON.phrases("product_dose_words")
# "thuốc nào làm buồn ngủ": which drugs *do* it — an effect, unless what they do is a treatment.


# The same with a few words between ("thuốc nào có thể làm …", "uống vào sẽ bị …").
_WHICH_DRUG_DOES_RE = re.compile(r"\bthuoc (?:nao|gi)\b(?: \w+){0,3}? (?:lam|khien)\b"
                                 r"|\b(?:uong|dung|tiem) vao (?:\w+ ){0,2}(?:bi|lam)\b")


def _reverse_relation(text: str) -> tuple[TurnType, ConditionRelation]:
    if has_phrase(text, CONTRAINDICATION_CUES):
        return TurnType.CONDITION_TO_DRUG, ConditionRelation.CONTRAINDICATION
    does = bool(_WHICH_DRUG_DOES_RE.search(" ".join(folded_words(text))))
    if has_phrase(text, CAUSES_CUES) or (does and not has_phrase(text, THERAPEUTIC_EFFECTS)):
        return TurnType.CONDITION_RELATION, ConditionRelation.CAUSES
    if has_phrase(text, CAUTION_CUES):
        return TurnType.CONDITION_TO_DRUG, ConditionRelation.CAUTION
    return TurnType.CONDITION_TO_DRUG, ConditionRelation.INDICATION


def _asks_reverse(ev: TurnEvidence, frame: QueryFrame) -> bool:
    # A medicine named as being taken ("đang điều trị HIV bằng nelfinavir") is the patient's, not asked.
    # So is one the patient is allergic to ("cho người dị ứng penicilin").
    background = {fold(n) for n in (*ev.facts.other_medications, *ev.facts.allergies)}
    asked_unknown = [u for u in ev.resolution.unknown if fold(u.name) not in background]
    asked = [d for d in frame.drugs if (d not in frame.patient.current_medications or d in ev.facts.taken_and_asked)
             and d not in ev.facts.allergies]
    if "avoid_with_taken" in frame.cues:
        return False
    if not frame.patient.current_medications and has_phrase(ev.text, INTERACTION_ONLY_WORDS):
        return False  # "Có kỵ thuốc nào không?": the interactions of a drug not named yet — which drug?
    return not asked and not asked_unknown and (has_phrase(ev.text, REVERSE_CUES) or _asks_which_of_a_kind(ev.text))


# "Có thuốc chống động kinh nào …", "thuốc hạ áp gì": which drug of a kind, the kind named in between —
# not "thuốc này uống lúc nào", "thuốc đó dùng bao lâu".
_CLASS_WHICH_RE = re.compile(r"\bthuoc ((?:\w+ ){1,3}?)(?:nao|gi)\b")
_NOT_A_KIND = frozenset(frozenset(LEXICON.phrases("not_a_kind")))


def _asks_which_of_a_kind(text: str) -> bool:
    return any(not (_NOT_A_KIND & set(m.group(1).split())) for m in _CLASS_WHICH_RE.finditer(fold(text)))


INTERACTION_ONLY_WORDS = LEXICON.phrases("interaction_only_words")
# "X có làm / có gây Y không": Y is what the drug may cause — its side effects, not an indication.
EFFECT_VERBS = LEXICON.phrases("effect_verbs")


def _asks_effect(ev: TurnEvidence, frame: QueryFrame) -> bool:
    if not frame.drugs or frame.turn_type not in (TurnType.DRUG_ATTRIBUTE, TurnType.DRUG_OVERVIEW) \
            or named_section(ev.text) is not None or frame.section_key == "tac_dung_khong_mong_muon":
        return False
    if not has_phrase(ev.text, EFFECT_VERBS) or has_phrase(ev.text, THERAPEUTIC_EFFECTS):
        return False
    intent = ev.intent
    confident_elsewhere = intent is not None and intent.section not in (None, "tac_dung_khong_mong_muon") \
        and intent.section_p >= NAMED_SECTION_YIELDS_TO
    # "có gây rụng tóc không": a question about what the drug causes even when the lexicon (built
    # from indications and contraindications) does not know the effect named.
    return (bool(ev.conditions) or has_phrase(ev.text, ("có gây", "gây ra"))) and not confident_elsewhere


# "Doxycyclin dùng phòng sốt rét được không?", "X có dùng cho viêm thanh khí phế quản không?": whether
# the drug is indicated for a condition.
USED_FOR = LEXICON.phrases("used_for")
DISEASE_HEADS = LEXICON.phrases("disease_heads")
_PATIENT_BEFORE_CONDITION = frozenset(fold(w) for w in LEXICON.phrases("patient_before_condition"))


def _asks_indication(ev: TurnEvidence, frame: QueryFrame) -> bool:
    if not frame.drugs or frame.section_key is not None or named_section(ev.text) is not None \
            or frame.turn_type not in (TurnType.DRUG_ATTRIBUTE, TurnType.DRUG_OVERVIEW):
        return False
    raw = words(ev.text)
    tokens = [fold(w) for w in raw]
    for _start, after, _phrase in phrase_set(USED_FOR).find(ev.text):
        if after < len(tokens) and has_phrase(" ".join(raw[after : after + 2]), DISEASE_HEADS):
            return True  # a disease the lexicon does not list ("viêm thanh khí phế quản")
        for mention in ev.conditions:
            gap = tokens[after : mention.start]
            if 0 <= len(gap) <= 1 and not (_PATIENT_BEFORE_CONDITION & set(gap)) and mention.start >= after:
                return True  # the condition follows the use phrase, not a patient ("dùng cho người hen")
    return False


THERAPEUTIC_EFFECTS = LEXICON.phrases("therapeutic_effects")


# What a formulary does not cover (price, where to buy, stock, recalls, brand choice, insurance), by topic.
NOT_COVERED: dict[str, tuple[str, ...]] = LEXICON.group("not_covered")
COMPARISON_WORDS = LEXICON.phrases("comparison_words")


# A medicine referred to without its name ("thuốc", "viên", "this medicine"): the price asked is a medicine's.
_MEDICINE_WORDS = (*LEXICON.phrases("drug_reference_words"), *LEXICON.phrases("english_medicine_words"))


def uncovered_topic(ev: TurnEvidence) -> str | None:
    """The topic a formulary does not cover that the turn asks about, or None.

    Only about a medicine (named, or referred to): the price of gold is no question for a pharmacist. Two names
    of one drug compared ("Glucophage với Panfor loại nào tốt hơn") is a choice of brand: the book has one
    monograph for both.
    """
    resolution, facts = ev.resolution, ev.facts
    if not (resolution.mentions or resolution.products or has_phrase(ev.text, _MEDICINE_WORDS)):
        return None
    if resolution.unknown or facts.conditions or facts.pregnant or facts.breastfeeding or facts.age is not None:
        # A medicine not in the book is said as such first; a patient described asks whether it suits them
        # ("… tiểu đường typ 1, nghe nói Diamicron rẻ hơn tiêm"): the safety screen must speak.
        return None
    for topic, phrases in NOT_COVERED.items():
        if has_phrase(ev.text, phrases):
            return topic
    names: dict[str, set[str]] = {}
    for mention in ev.resolution.every_mention or ev.resolution.mentions:
        names.setdefault(mention.drug_id, set()).add(fold(mention.surface))
    if any(len(surfaces) >= 2 for surfaces in names.values()) and has_phrase(ev.text, COMPARISON_WORDS):
        return "brand_choice"
    return None


def _not_covered(ev: TurnEvidence, frame: QueryFrame) -> QueryFrame:
    return _update(frame, "not_covered", turn_type=TurnType.OUT_OF_SCOPE, out_of_scope_kind="not_covered",
                   uncovered_topic=uncovered_topic(ev), section_key=None, section_candidates=[])


def _reverse(ev: TurnEvidence, frame: QueryFrame) -> QueryFrame:
    turn_type, relation = _reverse_relation(ev.text)
    return _update(frame, "reverse_lookup", turn_type=turn_type, condition_relation=relation, section_key=None)


AVOID_WITH_WORDS = LEXICON.phrases("avoid_with_words")


def _avoid_with_taken(ev: TurnEvidence, frame: QueryFrame) -> bool:
    """"Đang dùng warfarin thì phải kiêng những thuốc gì?": the drug taken is the one asked about."""
    taken = frame.patient.current_medications
    return bool(taken) and all(d in taken for d in frame.drugs) and not frame.unknown_drugs \
        and has_phrase(ev.text, REVERSE_CUES) and has_phrase(ev.text, AVOID_WITH_WORDS) \
        and frame.turn_type not in (TurnType.CRISIS, TurnType.EMERGENCY, TurnType.OVERDOSE_TAKEN)


def _taking_then_asking(ev: TurnEvidence, frame: QueryFrame) -> bool:
    taken = frame.patient.current_medications or frame.patient.other_medications
    asked = [d for d in frame.drugs if d not in frame.patient.current_medications]
    asked_unknown = [u for u in frame.unknown_drugs if u not in frame.patient.other_medications]
    return bool(taken) and bool(asked or asked_unknown) and frame.turn_type not in (
        TurnType.CRISIS, TurnType.EMERGENCY, TurnType.OVERDOSE_TAKEN) \
        and not (frame.turn_type is not TurnType.INTERACTION and _asks_its_own_effect_or_time(ev.text)) \
        and not asks_its_own_section(ev.text)


# Sections about the drug itself: "Tôi đang uống warfarin. Naproxen có tác dụng phụ gì?" asks naproxen's side
# effects by the section's name; what it does with warfarin is in the safety block already.
OWN_SECTIONS = frozenset({"tac_dung_khong_mong_muon", "huong_dan_xu_tri_adr", "chi_dinh", "dang_thuoc_va_ham_luong",
                          "do_on_dinh_va_bao_quan", "duoc_ly_va_co_che_tac_dung", "duoc_dong_hoc", "loai_thuoc",
                          "ten_chung_quoc_te", "ma_atc", "thong_tin_quy_che"})


def asks_its_own_section(text: str) -> bool:
    """The question (the turn's last sentence) names a section about the drug itself, not what goes with it."""
    question = (turn_sentences(text) or [text])[-1]
    return named_section(question) in OWN_SECTIONS and not has_phrase(question, _TOGETHER_IN_QUESTION)


# "… đang uống Levothyrox. Giờ được kê Cordarone, thuốc này có gây rụng tóc không?": the question asks what the
# new drug does or when to take it; what it does with the medicines taken is in the safety block already.
# (The intent model reading the turn as an interaction — "đang uống warfarin, ibuprofen có gây chảy máu
# không?" — keeps it one.)
OWN_TIME_WORDS = LEXICON.phrases("own_time_words")
_TOGETHER_IN_QUESTION = LEXICON.phrases("together_in_question")
def _asks_its_own_effect_or_time(text: str) -> bool:
    question = (turn_sentences(text) or [text])[-1]
    return has_phrase(question, (*EFFECT_VERBS, *OWN_TIME_WORDS)) and not has_phrase(question, _TOGETHER_IN_QUESTION) \
        and not has_phrase(question, (*THERAPEUTIC_EFFECTS, *_ANY_EFFECT))


# "có làm ảnh hưởng gì không", "có bị gì không": what the two do together, not one named effect of the new drug
_ANY_EFFECT = LEXICON.phrases("any_effect")


def _as_interaction(ev: TurnEvidence, frame: QueryFrame) -> QueryFrame:
    drugs = list(dict.fromkeys([*frame.patient.current_medications, *frame.drugs]))
    return _update(frame, "taking_then_asking", turn_type=TurnType.INTERACTION, drugs=drugs,
                   section_key="tuong_tac_thuoc")


DOSE_CHANGE_WORDS = LEXICON.phrases("dose_change_words")


def _two_drugs_together(ev: TurnEvidence, frame: QueryFrame) -> bool:
    if len(frame.drugs) < 2 or frame.turn_type in (TurnType.INTERACTION, TurnType.CRISIS, TurnType.EMERGENCY,
                                                   TurnType.OVERDOSE_TAKEN):
        return False
    # "Bắt đầu dùng amiodaron thì giảm liều warfarin bao nhiêu?" asks what one does to the other.
    return (has_phrase(ev.text, INTERACTION_WORDS) and named_section(ev.text) in (None, "tuong_tac_thuoc")) \
        or has_phrase(ev.text, DOSE_CHANGE_WORDS) \
        or (named_section(ev.text) == "qua_lieu_va_xu_tri" and _toxicity_of_a_combination(ev, frame))


def _vague_second(ev: TurnEvidence, frame: QueryFrame) -> bool:
    if named_section(ev.text) == "tuong_ky":
        return False  # mixing in one syringe or line with "thuốc khác" asks the compatibility section
    if ev.facts.current_pronoun:
        return False  # "đang uống thuốc đó": the conversation's drug (carry-over, pronoun_is_taken)
    vague = has_phrase(ev.text, VAGUE_SECOND_DRUG) or _names_a_drug_class(ev) or bool(_THAT_PILL_RE.search(fold(ev.text)))
    return len(frame.drugs) == 1 and not frame.unknown_drugs and vague and (
        has_phrase(ev.text, INTERACTION_WORDS) or frame.turn_type is TurnType.INTERACTION)


# "mấy viên trắng trắng kia", "cái thuốc hồng hồng đó": a pill pointed at, not named.
# "viên con nhộng xanh trắng", "viên màu vàng": a pill described by its look, not named.
_THAT_PILL_RE = re.compile(r"\b(?:vien|thuoc)\b(?:\s+\w+){0,3}\s+kia\b|\bcon nhong\b"
                           r"|\bvien(?: nang| nen| sui)? (?:mau|xanh|trang|vang|hong|tim|nau|cam)\b")


# "thuốc huyết áp", "thuốc tiểu đường": a class of medicines, not one the book can be asked about.
DRUG_CLASS_WORDS = LEXICON.phrases("drug_class_words")


def _names_a_drug_class(ev: TurnEvidence) -> bool:
    if has_phrase(ev.text, DRUG_CLASS_WORDS):
        return True
    tokens = [fold(w) for w in words(ev.text)]
    return any(m.start > 0 and tokens[m.start - 1] == "thuoc" for m in ev.conditions)


def _personal_dose(ev: TurnEvidence, frame: QueryFrame) -> bool:
    if frame.section_key != "lieu_luong_va_cach_dung" or frame.turn_type is not TurnType.DRUG_ATTRIBUTE:
        return False
    if frame.wants_section_overview:
        return False
    facts = ev.facts
    return (facts.age is not None or facts.weight_kg is not None or facts.population is not None
            or has_phrase(ev.text, QUANTITY_WORDS)
            # "Liều Zoloft bao nhiêu?" asks an amount for someone; "liều ở người chạy thận bao nhiêu" asks
            # the book's adjustment for a state, which the section answers as written.
            or (has_phrase(ev.text, ("liều",)) and has_phrase(ev.text, ("bao nhiêu", "mấy mg", "nhiêu"))
                and not facts.conditions and facts.renal_clearance_ml_min is None))


# "Metformin uống thế nào?" asks how to take it — not a vague question.
HOW_TO_TAKE_WORDS = LEXICON.phrases("how_to_take_words")


def _vague_about_drug(ev: TurnEvidence, frame: QueryFrame) -> bool:
    return (
        bool(frame.drugs) and frame.turn_type in (TurnType.DRUG_ATTRIBUTE, TurnType.DRUG_OVERVIEW)
        and not ev.residual_words and has_phrase(ev.text, VAGUE_ABOUT_DRUG) and named_section(ev.text) is None
        and not has_phrase(ev.text, HOW_TO_TAKE_WORDS)
    )


NAMED_SECTION_YIELDS_TO = 0.6
"""The intent model's probability above which a named section yields to a section that builds on it."""
# A named section yields only to the section that asks about it ("bị tác dụng phụ thì làm gì" names
# the side effects and asks how to handle them); never across opposites (chỉ định / chống chỉ định).
YIELDING_PAIRS = frozenset({("tac_dung_khong_mong_muon", "huong_dan_xu_tri_adr"),
                            ("lieu_luong_va_cach_dung", "qua_lieu_va_xu_tri"),
                            ("tuong_tac_thuoc", "tuong_ky")})


TAKEN_TOGETHER = LEXICON.phrases("taken_together")


def _toxicity_of_a_combination(ev: TurnEvidence, frame: QueryFrame) -> bool:
    """"Carbamazepin dùng cùng clarithromycin thì bao lâu bị ngộ độc?": the toxicity comes from the
    interaction — the interaction sections answer it, not the overdose section."""
    return len(frame.drugs) >= 2 and has_phrase(ev.text, TAKEN_TOGETHER)


def _interaction_with_nothing(frame: QueryFrame) -> bool:
    """An interaction frame with no second medicine anywhere: only the drug asked about."""
    others = set(frame.patient.current_medications) | set(frame.patient.other_medications)
    return (len(frame.drugs) == 1 and not frame.unknown_drugs and not frame.products
            and others <= set(frame.drugs) and "vague_second_drug" not in frame.cues)


def _section_named(ev: TurnEvidence, frame: QueryFrame) -> bool:
    named = named_section(ev.text)
    if named is None or "overdose_question" in frame.cues:
        return False
    if frame.turn_type is TurnType.INTERACTION and named == "tuong_ky" and len(frame.drugs) <= 1:
        return True  # "trộn chung bơm tiêm với thuốc khác": compatibility, not an interaction
    if frame.turn_type is TurnType.INTERACTION and _interaction_with_nothing(frame) and named != "tuong_tac_thuoc":
        return True  # "Tôi đang uống digoxin. Digoxin có tác dụng phụ gì?": one drug, its side effects
    if frame.turn_type is TurnType.INTERACTION and asks_its_own_section(ev.text):
        return True  # "Tôi đang uống warfarin. Naproxen có tác dụng phụ gì?": naproxen's side effects
    if frame.turn_type not in (TurnType.DRUG_ATTRIBUTE, TurnType.DRUG_OVERVIEW, TurnType.DOSING_CALC):
        return False
    if frame.turn_type is TurnType.DOSING_CALC and named in ("thoi_ky_mang_thai", "thoi_ky_cho_con_bu"):
        return False
    intent = ev.intent
    return not (intent is not None and (named, intent.section) in YIELDING_PAIRS
                and intent.section_p >= NAMED_SECTION_YIELDS_TO and frame.section_key == intent.section)


def _names_other_than_a_dose(ev: TurnEvidence, frame: QueryFrame) -> bool:
    """"Bé 8 tuổi … Salbutamol xịt có tác dụng phụ gì?": an age read as a dose question, but another section
    named and no dose asked."""
    return frame.turn_type is TurnType.DOSING_CALC and named_section(ev.text) != "lieu_luong_va_cach_dung" \
        and not has_phrase(ev.text, PRODUCT_DOSE_WORDS)


MODEL_OVERDOSE_ALONE = 0.75
"""The intent model names an overdose taken without a cue phrase only this sure, with something swallowed and
said to be taken (a count, "vừa uống") — "cho bé uống Nurofen liều sao" asks a dose."""
MODEL_EMERGENCY_WITH_SIGN = 0.6
MODEL_EMERGENCY_ALONE = 0.8
"""An emergency from the model: this sure beside a sign of the lexicon, or this sure alone (signs the
lexicon does not list: a stroke's slurred speech, a collapse without pulse) — alone, only with several
findings described together ("gục xuống, không thở, không bắt được mạch"), never a short reply ("cháu đang đi
mẫu giáo"), and not beside a question whether to take a drug (a diagnosis named as the patient's: "đang bị
đau thắt ngực không ổn định, uống Adalat được không")."""
MODEL_EMERGENCY_FINDINGS = 2
_SWALLOWED_WORDS = LEXICON.phrases("swallowed")


def _overdose_taken(ev: TurnEvidence, f: QueryFrame) -> bool:
    if f.turn_type is TurnType.CRISIS or silenced(OVERDOSE_TAKEN, ev.telling):
        return False
    model_sure = ev.intent is not None and ev.intent.p("overdose_taken") >= MODEL_OVERDOSE_ALONE \
        and has_phrase(ev.text, _SWALLOWED_WORDS) and ev.telling.taken and not ev.telling.amount_asked
    return is_overdose_taken(ev.text) or model_sure


def _emergency(ev: TurnEvidence, f: QueryFrame) -> bool:
    if f.turn_type in (TurnType.CRISIS, TurnType.OVERDOSE_TAKEN) or silenced(EMERGENCY, ev.telling):
        return False
    p = ev.intent.p("emergency") if ev.intent is not None else 0.0
    return is_emergency(ev.text, ev.mentions_emergency_sign) \
        or (p >= MODEL_EMERGENCY_WITH_SIGN and ev.mentions_emergency_sign) \
        or (p >= MODEL_EMERGENCY_ALONE and ev.telling.findings >= MODEL_EMERGENCY_FINDINGS and not ev.telling.planned
            and ev.facts.weight_kg is None)  # "bé 10 tuổi, nặng 30kg, …" answers a dose question with facts


CUE_TABLE: tuple[Cue, ...] = (
    Cue("attack", "instructions to the assistant, prompt requests, code",
        "out_of_scope (attack)", "a prompt attack must never look like a question that can be clarified",
        lambda ev, f: looks_like_instruction_attack(ev.text) or looks_like_code(ev.text),
        lambda ev, f: _update(f, "attack", turn_type=TurnType.OUT_OF_SCOPE, out_of_scope_kind="attack")),
    Cue("self_harm", "muốn chết, tự tử, không muốn sống, uống bao nhiêu viên thì chết …",
        "crisis; the conversation is marked at risk", "never give quantities to someone at risk of self-harm",
        lambda ev, f: is_self_harm(ev.text) and not silenced(CRISIS, ev.telling),
        lambda ev, f: _update(f, "self_harm", turn_type=TurnType.CRISIS,
                              patient=f.patient.model_copy(update={"crisis": True})), ends_the_table=True),
    Cue("animal", "an animal swallowed or was given the medicine (chó nhà tôi gặm vỉ thuốc, cho mèo uống, thú y)",
        "out_of_scope (animal)", "the book is a human formulary: no veterinary doses, and a pet is not a human overdose",
        lambda ev, f: f.turn_type is not TurnType.CRISIS and ev.telling.subject is Subject.ANIMAL,
        lambda ev, f: _update(f, "animal", turn_type=TurnType.OUT_OF_SCOPE, out_of_scope_kind="animal",
                              section_key=None)),
    Cue("overdose_taken", "lỡ uống 20 viên, uống nhầm cả vỉ, đã uống quá liều …",
        "overdose_taken, section Quá liều và xử trí", "115 first, then what the book says to do",
        _overdose_taken,
        lambda ev, f: _update(f, "overdose_taken", turn_type=TurnType.OVERDOSE_TAKEN, section_key="qua_lieu_va_xu_tri"),
        ends_the_table=True),
    Cue("emergency", "đau ngực lan tay, khó thở, co giật, sưng môi họng, nôn ra máu, lơ mơ … happening now",
        "emergency", "emergency signs need urgent care, not a drug",
        _emergency,
        lambda ev, f: _update(f, "emergency", turn_type=TurnType.EMERGENCY, section_key=None), ends_the_table=True),
    Cue("overdose_question", "quá liều, uống quá nhiều, ngộ độc, uống nhầm",
        "section Quá liều và xử trí (never the dosing section)", '"quá liều" contains "liều"',
        lambda ev, f: bool(f.drugs) and f.turn_type in (TurnType.DRUG_ATTRIBUTE, TurnType.DOSING_CALC,
                                                        TurnType.DRUG_OVERVIEW)
        and has_phrase(ev.text_without_names, OVERDOSE_QUESTION)
        and not _toxicity_of_a_combination(ev, f),
        lambda ev, f: _update(f, "overdose_question", turn_type=TurnType.DRUG_ATTRIBUTE,
                              section_key="qua_lieu_va_xu_tri")),
    Cue("about_assistant", "bạn là ai, bạn là chatbot gì, bạn làm được gì",
        "smalltalk", "questions about the assistant are not about a drug",
        lambda ev, f: not f.drugs and not f.unknown_drugs and asks_about_assistant(ev.text),
        lambda ev, f: _update(f, "about_assistant", turn_type=TurnType.SMALLTALK, section_key=None)),
    Cue("greeting", "a greeting, thanks or goodbye of at most 8 words, nothing else",
        "smalltalk", "a greeting needs no lookup",
        lambda ev, f: not f.drugs and not f.unknown_drugs and named_section(ev.text) is None
        and len(words(ev.text)) <= 8 and has_phrase(ev.text, GREETINGS)
        and f.turn_type not in (TurnType.CRISIS, TurnType.EMERGENCY, TurnType.OVERDOSE_TAKEN),
        lambda ev, f: _update(f, "greeting", turn_type=TurnType.SMALLTALK, section_key=None)),
    Cue("not_covered", "giá bao nhiêu, mua ở đâu, hết hàng, thu hồi, hãng nào tốt hơn, bảo hiểm có trả không",
        "out_of_scope (not_covered): no later row applies", "a formulary does not cover price, supply, recalls, "
        "brands or insurance; any section would answer a question not asked (a pharmacist can)",
        lambda ev, f: f.turn_type not in (TurnType.CRISIS, TurnType.EMERGENCY, TurnType.OVERDOSE_TAKEN)
        and uncovered_topic(ev) is not None, _not_covered),
    Cue("avoid_with_taken", "đang dùng X thì kiêng / tránh / không được dùng chung thuốc gì",
        "X's interaction section", "the drug taken is the one asked about, not a condition to look up",
        _avoid_with_taken,
        lambda ev, f: _update(f, "avoid_with_taken", turn_type=TurnType.DRUG_ATTRIBUTE,
                              drugs=list(f.patient.current_medications), section_key="tuong_tac_thuoc",
                              section_candidates=[], attribute=SECTION_TITLES["tuong_tac_thuoc"])),
    Cue("reverse_lookup", "thuốc nào/gì trị X, bị X thì uống gì — with no drug named",
        "condition_to_drug (or condition_relation for 'gây')", "the user asks for drugs, not about one",
        lambda ev, f: _asks_reverse(ev, f) and f.turn_type not in (
            TurnType.CRISIS, TurnType.EMERGENCY, TurnType.OVERDOSE_TAKEN, TurnType.OUT_OF_SCOPE, TurnType.SMALLTALK),
        _reverse),
    Cue("taking_then_asking", "đang dùng X thì uống Y được không; tôi đang uống nó, giờ uống Y",
        "interaction with the taken and the asked drug", "a medicine being taken is the other half of the question",
        _taking_then_asking, _as_interaction),
    Cue("two_drugs_together", "two drugs of the book with với/cùng/chung/kèm/phối hợp …",
        "interaction", "two named drugs side by side ask whether they go together",
        _two_drugs_together,
        lambda ev, f: _update(f, "two_drugs_together", turn_type=TurnType.INTERACTION, section_key="tuong_tac_thuoc")),
    Cue("vague_second_drug", "one drug with 'thuốc kia / thuốc bác sĩ kê' and an interaction word",
        "interaction that asks which other drug", "the other drug cannot be guessed",
        _vague_second,
        lambda ev, f: _update(f, "vague_second_drug", turn_type=TurnType.INTERACTION, section_key="tuong_tac_thuoc",
                              needs_clarify=True, clarify_reason="unresolved_second_drug")),
    Cue("product_dose", "a dose of a combination whose components the book does not all cover ('X/Y 5/80 mg "
        "uống mấy lần')", "dosing (row 20 then names the uncovered component, no dose)",
        "a combination is not dosed as the component the book has, nor read as two drugs to combine",
        lambda ev, f: any(p.uncovered for p in f.products) and has_phrase(ev.text, PRODUCT_DOSE_WORDS)
        and f.turn_type in (TurnType.INTERACTION, TurnType.DRUG_ATTRIBUTE, TurnType.DRUG_OVERVIEW),
        lambda ev, f: _update(f, "product_dose", turn_type=TurnType.DOSING_CALC, section_key="lieu_luong_va_cach_dung",
                              needs_clarify=False, clarify_reason=None)),
    Cue("whole_section", "toàn bộ, đầy đủ, nguyên văn, cả mục", "the whole section, not a calculation",
        "a pharmacist asking for the whole dosing section is not asking a personal dose",
        lambda ev, f: has_phrase(ev.text, WHOLE_SECTION) and f.section_key is not None,
        lambda ev, f: _update(f, "whole_section", wants_section_overview=True, turn_type=TurnType.DRUG_ATTRIBUTE)),
    Cue("section_named", "the section's own name (chống chỉ định, tác dụng phụ, liều, bảo quản …)",
        "that section — unless the model is confident in another one",
        "a named section is exact; the model is for phrasings that do not name it ('bị tác dụng phụ thì làm gì' "
        "names the side effects but asks how to handle them)",
        _section_named,
        lambda ev, f: _update(f, "section_named", section_key=named_section(ev.text), section_candidates=[],
                              turn_type=TurnType.DRUG_ATTRIBUTE if f.turn_type in (
                                  TurnType.DRUG_OVERVIEW, TurnType.INTERACTION) or _names_other_than_a_dose(ev, f)
                              else f.turn_type,
                              attribute=SECTION_TITLES[named_section(ev.text) or "chi_dinh"])),
    Cue("asks_effect", "a drug and 'có làm / có gây …' a condition, no section named",
        "the side-effects section", "'Heparin có làm giảm tiểu cầu không?' asks what the drug may cause",
        _asks_effect,
        lambda ev, f: _update(f, "asks_effect", turn_type=TurnType.DRUG_ATTRIBUTE,
                              section_key="tac_dung_khong_mong_muon", section_candidates=[],
                              attribute=SECTION_TITLES["tac_dung_khong_mong_muon"])),
    Cue("asks_indication", "a drug and 'dùng cho / dùng phòng / trị được' a condition, no section named",
        "the indications section", "'Doxycyclin dùng phòng sốt rét được không?' asks whether it is indicated",
        _asks_indication,
        lambda ev, f: _update(f, "asks_indication", turn_type=TurnType.DRUG_ATTRIBUTE, section_key="chi_dinh",
                              section_candidates=[], attribute=SECTION_TITLES["chi_dinh"])),
    Cue("personal_dose", "a dose question with age, weight, who, or 'mấy viên / bao nhiêu ml'",
        "dosing_calc (the paediatric gates apply)", "a personal dose needs the population, age and weight",
        _personal_dose,
        lambda ev, f: _update(f, "personal_dose", turn_type=TurnType.DOSING_CALC)),
    Cue("asks_a_time", "a time or a share asked ('sau bao nhiêu tháng', 'đợi mấy tiếng', 'bao nhiêu phần trăm'), "
        "no amount", "an attribute of the dosing section, not a calculation",
        "'Uống Zyloric sau bao nhiêu tháng thì tophi tan?' needs no age or weight; asking them is a useless clarify",
        lambda ev, f: f.turn_type is TurnType.DOSING_CALC and f.asks_number in ("thời gian", "%")
        and ev.facts.age is None and ev.facts.weight_kg is None and not has_phrase(ev.text, (*QUANTITY_WORDS, "liều")),
        lambda ev, f: _update(f, "asks_a_time", turn_type=TurnType.DRUG_ATTRIBUTE)),
    Cue("vague_about_drug", "a drug and only 'thì sao / hỏi về / thế nào'",
        "a drug question without an attribute (ask which)", "guessing a section would answer a question not asked",
        _vague_about_drug,
        lambda ev, f: _update(f, "vague_about_drug", turn_type=TurnType.DRUG_ATTRIBUTE, section_key=None,
                              section_candidates=[], attribute=None)),
)


# Once a turn is a crisis, an emergency or an overdose already taken, no later row may turn it back
# into an ordinary drug question ("lỡ uống 8 viên … cùng lúc vì tưởng thuốc bổ" is not an interaction).
SAFETY_TURN_TYPES = (TurnType.CRISIS, TurnType.EMERGENCY, TurnType.OVERDOSE_TAKEN)


def apply_cues(ev: TurnEvidence, frame: QueryFrame) -> QueryFrame:
    for cue in CUE_TABLE:
        if cue.applies(ev, frame):
            frame = cue.effect(ev, frame)
            if cue.ends_the_table and frame.turn_type in SAFETY_TURN_TYPES:
                break
            if cue.id == "not_covered":
                break  # nothing the book says answers it: no later row may make it a drug question
    return frame


def cue_by_id(cue_id: str) -> Cue:
    return next(cue for cue in CUE_TABLE if cue.id == cue_id)
