"""Crisis, overdose and emergency signals: phrase tables matched on whole words, with or without diacritics.

They are the cue table's first rows (``cues.py``): safety overrides that do not wait for the intent
model. Precision matters as much as recall — "thuốc X có gây khó thở không?" asks about a side
effect; "tôi đang khó thở quá" is an emergency — so an emergency sign counts only when the turn
describes someone now, and not when it asks what a drug does.
"""

from __future__ import annotations

import re

from duocthu.lexicon import LEXICON
from duocthu.text import fold, normalize, phrase_set, word_forms
from duocthu.understanding.quantities import count_taken, folded_with_digits
from duocthu.understanding.scope import has_phrase

SELF_HARM_PHRASES = LEXICON.phrases("self_harm_phrases")
# "để dành được 30 viên" is a plan; "nửa viên còn lại để dành được mấy ngày" asks about storage.
_SAVED_UP_RE = re.compile(r"\b(?:de danh|giu lai|cat giu)\b(?: \w+){0,3}? (?:\d{2,}|vai chuc|may chuc|ca) ?(?:vien|vi|hop|lo)\b")
# "thì chết", "để chết" only count with a quantity question or a first-person wish (see is_self_harm).
_WEAK_SELF_HARM = LEXICON.phrases("weak_self_harm")
# A lethal outcome counts only asked with an amount ("bao nhiêu viên thì tim ngừng đập / không cứu được nữa"):
# "tôi bị ngừng thở khi ngủ" is sleep apnoea, "bố tôi ngừng thở" an emergency. A farewell counts the same way.
_LETHAL_OUTCOMES = LEXICON.phrases("lethal_outcomes")
# "nuốt cả lọ thì mấy tiếng là xong", "uống hết 50 viên thì bao lâu mới đi được": how long until the end,
# asked of a lethal amount (a whole pack, or ten tablets and more: ``count_taken``). "uống 2 viên là xong cơn đau" and
# "uống hết vỉ này là xong à" (the course finished) ask no time to an end.
_ENDING_RE = re.compile(r"\b(?:la|thi|moi) (?:xong|di duoc|di luon|di|ra di|yen|het kho)"
                        r"(?: (?:roi|luon|han|nhi|a|ha|vay|khong|chua|nhe|ca))*\s*(?:[?.!,;]|$)")
_HOW_LONG = LEXICON.phrases("how_long")
_QUANTITY_WORDS = LEXICON.phrases("signals.quantity_words")
_DRUG_FACT_QUESTIONS = LEXICON.phrases("drug_fact_questions")
# "ý nghĩ tự sát" as an adverse effect asked about a drug, not said about oneself.
_ADVERSE_EFFECT_FRAMES = LEXICON.phrases("adverse_effect_frames")
_FIRST_PERSON = LEXICON.phrases("first_person")
_BY_ACCIDENT = LEXICON.phrases("by_accident")
# Said of a child or someone else, "uống hết cả lọ" is an accident to treat now (overdose taken), not intent.
_AMBIGUOUS_SELF_HARM = ("uống hết cả lọ", "uống cả lọ cho")
_SOMEONE_ELSE = LEXICON.phrases("someone_else")

OVERDOSE_TAKEN_PHRASES = LEXICON.phrases("overdose_taken_phrases")
_ATE_PILLS_RE = re.compile(r"\bvua an\b(?: \w+){0,3}? (?:thuoc|vien|vi|siro|goi)\b")
_TOO_MUCH = LEXICON.phrases("too_much")
_FEELING_RE = re.compile(r"\b(?:dang bi|bi|thay|gio bi)\s+(?!sao\b|gi\b|lam sao\b|the nao\b|nhu the nao\b|ngo doc\b)\w+")
_TAKEN_MARKERS = LEXICON.phrases("taken_markers")
# "uống một lúc 8 viên", "uống liền 10 viên": taken at once (a question "… được không" is excluded above).
_AT_ONCE = LEXICON.phrases("at_once")
_WHAT_NOW = LEXICON.phrases("what_now")
# "Con tôi 12 tuổi uống 10 viên thuốc ngủ của mẹ": someone told as having swallowed a count, not asking about one.
_TOLD_TAKEN_RE = re.compile(r"\b(?:toi|minh|em|con|be|chau|ong|ba|bo|me|chong|vo|anh|chi|no)(?: \w+){0,3}? "
                            r"(?:uong|nuot|an|nhai) (?:het |luon |mot luc )?\d+ (?:vien|goi|ong|vi|lo|chai)\b")
_ASKING_ABOUT_A_COUNT = LEXICON.phrases("asking_about_a_count")
_HYPOTHETICAL_MARKERS = LEXICON.phrases("hypothetical_markers")

EMERGENCY_SIGNS = LEXICON.phrases("emergency_signs")
_NOW_MARKERS = LEXICON.phrases("now_markers")

_HISTORY_MARKERS = LEXICON.phrases("history_markers")
# "từng mảng", "từng cơn": "từng" meaning "each", not "ever".
_EACH_RE = re.compile(r"\btung (?:mang|con|dot|chut|vien|lan|nguoi|ngay|cai|dam|vet|bo phan)\b")
_NOW_STRONG = LEXICON.phrases("now_strong")


# "50 viên có đủ không?": asking whether a large number of tablets is *enough* asks for a lethal amount.
_ENOUGH_WORDS = LEXICON.phrases("enough_words")
_SUPPLY_ENOUGH = LEXICON.phrases("supply_enough")
_SUPPLY_TIME = LEXICON.phrases("telling.supply_time")
LETHAL_ENOUGH_COUNT = 10


def is_self_harm(text: str) -> bool:
    """Intent to harm or kill oneself, stated or asked as "how many tablets to die"."""
    strong = tuple(p for p in SELF_HARM_PHRASES if p not in _WEAK_SELF_HARM)
    if has_phrase(text, _ADVERSE_EFFECT_FRAMES) and has_phrase(text, _DRUG_FACT_QUESTIONS) \
            and not has_phrase(text, _FIRST_PERSON):
        return False  # "sertralin có cảnh báo gì về ý nghĩ tự sát không"
    if has_phrase(text, tuple(p for p in strong if p not in _AMBIGUOUS_SELF_HARM)):
        return True
    if has_phrase(text, _AMBIGUOUS_SELF_HARM):
        return not has_phrase(text, (*_SOMEONE_ELSE, *_BY_ACCIDENT))
    count = count_taken(text)
    if count is not None and (count == -1 or count >= LETHAL_ENOUGH_COUNT) and has_phrase(text, _ENOUGH_WORDS) \
            and not (has_phrase(text, _SUPPLY_ENOUGH) and has_phrase(text, _SUPPLY_TIME)):
        return True  # "20 viên thì đủ dùng mấy ngày" asks how long a course lasts
    if _SAVED_UP_RE.search(folded_with_digits(text)):
        return True
    if has_phrase(text, ("cho xong",)) and not has_phrase(text, ("cả vỉ", "cả lọ", "hết vỉ", "hết lọ", "bao nhiêu viên")) \
            and not (count is not None and (count == -1 or count >= LETHAL_ENOUGH_COUNT)):
        return False  # "uống cho xong đợt kháng sinh" — but "40 viên … uống hết một lần cho xong" is a plan
    many = count is not None and (count == -1 or count >= LETHAL_ENOUGH_COUNT)
    if _ENDING_RE.search(fold(normalize(text))) and has_phrase(text, _HOW_LONG) and many \
            and not has_phrase(text, (*_SOMEONE_ELSE_TOOK, *_BY_ACCIDENT)):
        return True
    if has_phrase(text, _LETHAL_OUTCOMES) and has_phrase(text, _QUANTITY_WORDS) \
            and not has_phrase(text, _DRUG_FACT_QUESTIONS) and not has_phrase(text, _SOMEONE_ELSE_TOOK):
        return True
    return has_phrase(text, _WEAK_SELF_HARM) and (
        has_phrase(text, _QUANTITY_WORDS) or has_phrase(text, ("tôi", "mình", "tao", "em", "muốn", "định")) or many
    ) and not has_phrase(text, _DRUG_FACT_QUESTIONS) and not has_phrase(text, _SOMEONE_ELSE_TOOK)


# "Bé uống cả vỉ rồi, làm sao cho xong?": said of someone who took it, "cho xong" is not intent.
_SOMEONE_ELSE_TOOK = LEXICON.phrases("someone_else_took")


def asks_a_quantity(text: str) -> bool:
    """Any amount asked for — tablets, units, mg, a dose — whatever the question is about."""
    return has_phrase(text, (*_QUANTITY_WORDS, "liều", "mấy lần", "mấy đơn vị", "bao nhiêu mg", "bao nhiêu ml"))


# A child who got hold of the medicine and swallowed some ("lấy được chai siro uống gần hết").
_GOT_HOLD = LEXICON.phrases("got_hold")
_SWALLOWED = LEXICON.phrases("swallowed")
# A dose repeated by someone who forgot taking it, told with when: "quên, uống digoxin 3 lần trong sáng nay",
# "tối qua uống warfarin hai lần, mỗi lần 2 viên", "tự tiêm insulin hai lần liều buổi tối".
_REPEATED_RE = re.compile(r"\b(?:uong|tiem|dung)\b(?: \w+){0,3}? (?:[2-9]|hai|ba|bon|nam) lan\b(?P<within> (?:trong|lien)\b)?")
_WHEN_TAKEN = LEXICON.phrases("when_taken")
_FORGOT = LEXICON.phrases("forgot")
_COUNT_BEFORE_RE = re.compile(r"(?:\d+|hai|ba|bon|nam|may) $")


def _says_forgot(text: str) -> bool:
    """"quên", "lẫn" … — but an unaccented "lan" after a count is "lần" ("xit 3 lan roi"), not "lẫn"."""
    if has_phrase(text, tuple(f for f in _FORGOT if f != "lẫn")):
        return True
    lowered = normalize(text).lower()
    return any(m.group(0) == "lẫn" or not _COUNT_BEFORE_RE.search(fold(lowered[: m.start()]))
               for m in re.finditer(r"\blẫn\b|\blan\b", lowered))


# "quên uống" is a missed dose; "quên, uống …" (the comma) is not.
_MISSED_RE = re.compile(r"\bquen (?:mat |khong |chua )?(?:uong|dung|lieu)\b")


def is_overdose_taken(text: str) -> bool:
    """Too much has already been taken — not "what if I took too much?"."""
    if has_phrase(text, _HYPOTHETICAL_MARKERS) and not has_phrase(text, ("rồi", "vừa", "đã", "lúc nãy", "hồi nãy")):
        return False
    if has_phrase(text, OVERDOSE_TAKEN_PHRASES):
        return True
    if _ATE_PILLS_RE.search(folded_with_digits(text)):
        return True  # "bé vừa ăn mấy viên thuốc của bà" — not "vừa ăn tôm xong bị sưng môi … xin tên thuốc"
    if has_phrase(text, _GOT_HOLD) and has_phrase(text, _SWALLOWED) and has_phrase(text, _SOMEONE_ELSE):
        return True
    folded = folded_with_digits(text)
    repeated = _REPEATED_RE.search(folded)
    if repeated and _says_forgot(text) and not _MISSED_RE.search(fold(text)) \
            and (repeated.group("within") or has_phrase(text, _WHEN_TAKEN)):
        return True
    if has_phrase(text, _TOO_MUCH) and _FEELING_RE.search(fold(text)):
        return True  # "uống quá nhiều amlodipin bị tụt huyết áp": taken, and feeling it
    count = count_taken(text)
    if count is None or not (count == -1 or count >= 5):
        return False
    if has_phrase(text, _TAKEN_MARKERS):
        return True
    if has_phrase(text, _WHAT_NOW):
        return True  # "uống 15 viên tramadol để giảm đau, giờ phải làm sao"
    if _TOLD_TAKEN_RE.search(folded) and "?" not in text and not has_phrase(text, _ASKING_ABOUT_A_COUNT):
        return True
    # "uống một lúc 8 viên"; "uống 6 viên trong vòng 2 tiếng, giờ buồn nôn": taken, and feeling it now
    return has_phrase(text, ("trong vòng", "giờ thấy", "giờ bị", "giờ buồn nôn", "giờ chóng mặt", "giờ mệt",
                             *_AT_ONCE)) \
        and not has_phrase(text, ("được không", "có được", "có nên", "nên không", "có đủ"))


# "phenytoin chống co giật", "thuốc cắt cơn co giật": a sign named as what a drug is for is not happening.
_PURPOSE_BEFORE_SIGN = (("chong",), ("tri",), ("phong",), ("cat", "con"), ("dieu", "tri"), ("du", "phong"))


# Blood brought up or passed, told with words between ("nôn ra cả bát máu bầm", "ho ra ít máu tươi").
_BLOOD_OUT = (("non", "ra"), ("oi", "ra"), ("ho", "ra"), ("khac", "ra"), ("di", "ngoai", "ra"), ("tieu", "ra"))
_BLOOD_GAP = 3


def emergency_sign_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, sign) word spans of the emergency signs described, not those named as a drug's purpose."""
    _raw, folded, _accented = word_forms(text)
    spans = [
        (start, end, sign) for start, end, sign in phrase_set(EMERGENCY_SIGNS).find(text)
        if not any(folded[max(0, start - len(p)):start] == p for p in _PURPOSE_BEFORE_SIGN)
    ]
    covered = {i for start, end, _sign in spans for i in range(start, end)}
    for start in range(len(folded)):
        for verb in _BLOOD_OUT:
            end = start + len(verb)
            if tuple(folded[start:end]) != verb:
                continue
            blood = next((i for i in range(end, min(len(folded), end + _BLOOD_GAP + 1)) if folded[i] == "mau"), None)
            if blood is not None and blood not in covered:
                spans.append((start, blood + 1, " ".join(folded[start : blood + 1])))
    return sorted(spans)


def is_emergency(text: str, has_sign: bool | None = None) -> bool:
    """Emergency signs described as happening now to someone.

    ``has_sign`` lets the caller say whether a sign is present outside the patient's known
    conditions (a sign inside "hội chứng ngừng thở khi ngủ" is a condition, not an emergency).
    """
    signs = {sign for _start, _end, sign in emergency_sign_spans(text)}
    if not (signs if has_sign is None else has_sign) or has_phrase(text, _DRUG_FACT_QUESTIONS):
        return False
    history = has_phrase(_EACH_RE.sub(" ", fold(text)), _HISTORY_MARKERS)
    if len(signs) >= 2 and not history:
        return True  # several signs described together (chest pain spreading to the jaw, sweating …) are now
    if history and not has_phrase(text, _NOW_STRONG):
        return False  # a condition the patient has had ("từng bị co giật"), not an emergency now
    return has_phrase(text, _NOW_MARKERS)
