"""Numbers in what people type: ages, weights, pregnancy, kidney function, counts, and asked units.

Parsers work on folded text (so "5 tuoi" and "5 tuổi" meet) with spelled-out numbers turned into
digits first ("mười tám ký" → "18 ký"). Each one looks for its own unit and context: "3 tháng" is
an age after "bé", a gestation after "mang thai", and a duration after "uống".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from duocthu.lexicon import LEXICON
from duocthu.text import fold, normalize

# Number words as typed: with their diacritics, or without any (then "nam" may be "năm" — never "nằm").
_NUMBER_WORD_FORMS = {
    0: ("không", "khong"), 1: LEXICON.phrases("number_word_forms"), 2: ("hai",), 3: ("ba",), 4: ("bốn", "bon", "tư", "tu"),
    5: ("năm", "nam", "lăm", "lam"), 6: ("sáu", "sau"), 7: ("bảy", "bay"), 8: ("tám", "tam"), 9: ("chín", "chin"),
    10: ("mười", "mươi", "muoi"),
}
_NUMBER_WORDS = {fold(form): value for value, forms in _NUMBER_WORD_FORMS.items() for form in forms}
_ANY_NUMBER_WORD = "|".join(sorted({f for forms in _NUMBER_WORD_FORMS.values() for f in forms}, key=len, reverse=True))
_UNITS_AFTER_NUMBER = (
    r"(?:tuổi|tuoi|tháng|thang|tuần|tuan|ngày|ngay|cân|can|ký|ky|kí|ki|kg|kilogam|ki lô|ki lo|kilo|ký lô|ky lo|"
    r"viên|vien|gói|goi|ống|ong|vỉ|vi)"
)
_NUMBER_PHRASE_RE = re.compile(
    r"(?<!\w)((?:(?:" + _ANY_NUMBER_WORD + r"|lẻ|le|linh)\s+){0,3}(?:" + _ANY_NUMBER_WORD + r"))\s+(?="
    + _UNITS_AFTER_NUMBER + r"(?!\w))"
)


def words_to_number(phrase: str) -> int | None:
    """'muoi tam' → 18, 'hai muoi lam' → 25, 'muoi' → 10 (folded Vietnamese number words).

    >>> words_to_number("hai muoi lam"), words_to_number("muoi"), words_to_number("ba")
    (25, 10, 3)
    """
    tokens = [t for t in fold(phrase).split() if t not in ("le", "linh")]
    if not tokens or any(t not in _NUMBER_WORDS for t in tokens):
        return None
    if "muoi" in tokens:
        index = tokens.index("muoi")
        tens_words, units_words = tokens[:index], tokens[index + 1 :]
        tens = _NUMBER_WORDS[tens_words[-1]] if tens_words else 1
        units = _NUMBER_WORDS[units_words[0]] if units_words else 0
        return tens * 10 + units
    if len(tokens) == 1:
        return _NUMBER_WORDS[tokens[0]]
    return None


def folded_with_digits(text: str) -> str:
    """Folded text in which spelled-out numbers before a unit become digits ("mười tám ký" → "18 ky").

    Matching happens before folding, so "nằm viện" stays a hospital stay, not "5 viên".
    """
    lowered = normalize(text).lower()

    def replace(match: re.Match[str]) -> str:
        value = words_to_number(match.group(1))
        return f"{value} " if value is not None else match.group(0)

    return fold(_NUMBER_PHRASE_RE.sub(replace, lowered))


_NUMBER = r"(\d+(?:[.,]\d+)?)"
_HALF = r"(\s*ruoi)?"
_CHILD_WORDS = r"(?:be|tre|chau|con|em be|nhoc|thang be|dua be|tre so sinh|tre nho)"
_AGE_YEARS_MONTHS_RE = re.compile(_NUMBER + r"\s*tuoi\s*(?:va\s*)?" + _NUMBER + r"\s*thang")
_AGE_YEARS_RE = re.compile(_NUMBER + r"\s*(?:tuoi|t\b|yo\b|years? old|years?\b)" + _HALF)
# Between the child and the age, a few characters of anything ("bé 18 tháng"), or any number of words that
# only point at the child ("bé nhà mình mới được 5 tháng").
_CHILD_GAP = r"(?:[^.?!,;]{0,12}?|(?: (?:nha|minh|toi|em|moi|duoc|chi|da|vua|tron|cua|con|chau|be|nay|len))+ )"
_AGE_MONTHS_RE = re.compile(r"(?:" + _NUMBER + r"\s*thang\s*tuoi)|(?:\b" + _CHILD_WORDS + r"\b" + _CHILD_GAP + r"\b"
                            + _NUMBER + r"\s*thang\b(?!\s*(?:nay|truoc|qua|roi|sau)))")
_AGE_WEEKS_RE = re.compile(r"(?:" + _NUMBER + r"\s*tuan\s*tuoi)|(?:\b" + _CHILD_WORDS + r"\b" + _CHILD_GAP + r"\b"
                           + _NUMBER + r"\s*tuan\b(?!\s*(?:nay|truoc|qua|roi|sau)))")
_AGE_DAYS_RE = re.compile(r"(?:" + _NUMBER + r"\s*ngay\s*tuoi)|(?:\b" + _CHILD_WORDS + r"\b" + _CHILD_GAP + r"\b"
                          + _NUMBER + r"\s*ngay\b(?!\s*(?:nay|truoc|qua|roi|sau|\d)))")
_NEWBORN_RE = re.compile(r"\b(?:so sinh|moi sinh|moi de|vua sinh|vua de)\b")
_WEIGHT_RE = re.compile(_NUMBER + r"\s*(?:kg|kilogam|kilo|ki lo|ky lo|ky|ki|can)\b")
_WEIGHT_AFTER_NANG_RE = re.compile(r"\b(?:nang|can nang)\s+(?:khoang\s+|tam\s+|duoc\s+|co\s+)?" + _NUMBER
                                   + r"\b(?!\s*(?:tuoi|thang|tuan|ngay|mg|ml|g\b|vien))")
_GESTATION_MONTHS_RE = re.compile(r"\b(?:thai|bau|mang thai|co thai|mang bau|co bau)\s*(?:duoc\s*|khoang\s*)?"
                                  + _NUMBER + r"\s*thang")
_GESTATION_WEEKS_RE = re.compile(r"\b(?:thai|bau|mang thai|co thai|mang bau|co bau)\s*(?:duoc\s*|khoang\s*)?"
                                 + _NUMBER + r"\s*tuan|\b" + _NUMBER + r"\s*tuan\s*(?:thai|tuoi thai)"
                                 + r"|\btuan thai\s*(?:thu\s*)?" + _NUMBER
                                 # "đang mang thai tuần thứ 22", "bầu ở tuần 30"
                                 + r"|\b(?:thai|bau|mang thai|co thai|mang bau|co bau)\s*(?:o\s*|vao\s*|dang\s*)?"
                                 r"tuan\s*(?:thu\s*)?" + _NUMBER)
_TRIMESTER_WORDS_RE = re.compile(r"\b(?:3|ba) thang (dau|giua|cuoi)\b|\bthang thu\s*(\d)\b|\btam ca nguyet\s*(1|2|3|i|ii|iii)\b")
_CLEARANCE_RE = re.compile(r"\b(?:egfr|mlcg|gfr|do thanh thai(?: creatinin)?|clcr|thanh thai creatinin)\D{0,12}"
                           + _NUMBER)
_COUNT_RE = re.compile(_NUMBER + r"\s*(vien|goi|ong|vi|lo|hop|chai|mieng|nhat)\b")
_PACKS = frozenset(frozenset(LEXICON.phrases("packs")))
_WHOLE_PACK_RE = re.compile(r"\b(?:ca|het|nguyen)\s+(?:vi|lo|hop|chai|tup|goi)\b")


@dataclass(frozen=True)
class Age:
    years: float
    text: str  # as shown back to the user ("5 tuổi", "18 tháng", "20 ngày tuổi", "sơ sinh")


def _to_float(text: str) -> float:
    return float(text.replace(",", "."))


def _first_number(match: re.Match[str]) -> str:
    return next(g for g in match.groups() if g is not None and re.fullmatch(r"\d+(?:[.,]\d+)?", g))


def parse_age(text: str) -> Age | None:
    """The patient's age: years, months, weeks or days, or a newborn.

    >>> parse_age("bé 18 tháng nặng 10kg").text, parse_age("Cháu 5 tuổi rưỡi").years
    ('18 tháng', 5.5)
    >>> parse_age("mang thai 3 tháng") is None, parse_age("uống 3 tháng") is None
    (True, True)
    """
    folded = folded_with_digits(text)
    if match := _AGE_YEARS_MONTHS_RE.search(folded):
        years, months = _to_float(match.group(1)), _to_float(match.group(2))
        return Age(years + months / 12, f"{_show(years)} tuổi {_show(months)} tháng")
    if match := _AGE_DAYS_RE.search(folded):
        value = _to_float(_first_number(match))
        return Age(value / 365, f"{_show(value)} ngày tuổi")
    if match := _AGE_WEEKS_RE.search(folded):
        value = _to_float(_first_number(match))
        return Age(value / 52, f"{_show(value)} tuần tuổi")
    if match := _AGE_MONTHS_RE.search(folded):
        value = _to_float(_first_number(match))
        return Age(value / 12, f"{_show(value)} tháng")
    if match := _AGE_YEARS_RE.search(folded):
        value = _to_float(match.group(1)) + (0.5 if match.group(2) else 0.0)
        return Age(value, f"{_show(value)} tuổi")
    if _NEWBORN_RE.search(folded):
        return Age(7 / 365, "sơ sinh")
    if match := _CHILD_TURNED_RE.search(folded):
        value = _to_float(match.group(1))
        return Age(value, f"{_show(value)} tuổi")
    return None


# "bé nhà em lên 8, được 25 ký": a child's years said with "lên" and no "tuổi".
_CHILD_TURNED_RE = re.compile(r"\b(?:be|con|chau|thang be|con be)\b(?: \w+){0,2}? len (\d{1,2})\b(?!\s*(?:kg|ky|can|lan|vien"
                              r"|mg|ml|do|cm|thang|tuan|ngay|gio|tieng|phut|%))")


def parse_weight(text: str) -> float | None:
    """Body weight in kg ("18 kg", "18 ký", "nặng 18", "mười tám cân").

    >>> parse_weight("bé nặng 18 ký"), parse_weight("cân nặng 60"), parse_weight("uống 500 mg")
    (18.0, 60.0, None)
    """
    folded = folded_with_digits(text)
    match = _WEIGHT_RE.search(folded) or _WEIGHT_AFTER_NANG_RE.search(folded)
    if match is None:
        return None
    weight = _to_float(match.group(1))
    return weight if 0 < weight <= 400 else None


def parse_trimester(text: str) -> int | None:
    """The trimester of a pregnancy the text states, if it states one.

    >>> parse_trimester("đang mang thai 7 tháng"), parse_trimester("bầu 3 tháng đầu"), parse_trimester("thai 30 tuần")
    (3, 1, 3)
    """
    folded = folded_with_digits(text)
    if match := _TRIMESTER_WORDS_RE.search(folded):
        if match.group(1):
            return {"dau": 1, "giua": 2, "cuoi": 3}[match.group(1)]
        if match.group(2):
            return _trimester_of_month(int(match.group(2)))
        return {"1": 1, "i": 1, "2": 2, "ii": 2, "3": 3, "iii": 3}[match.group(3)]
    if match := _GESTATION_WEEKS_RE.search(folded):
        weeks = _to_float(_first_number(match))
        return 1 if weeks < 14 else 2 if weeks < 28 else 3
    if match := _GESTATION_MONTHS_RE.search(folded):
        return _trimester_of_month(int(_to_float(match.group(1))))
    return None


def _trimester_of_month(month: int) -> int | None:
    if not 1 <= month <= 10:
        return None
    return 1 if month <= 3 else 2 if month <= 6 else 3


def parse_renal_clearance(text: str) -> float | None:
    """eGFR or creatinine clearance in ml/phút, when the text gives one.

    >>> parse_renal_clearance("suy thận, eGFR 25"), parse_renal_clearance("độ thanh thải creatinin 40 ml/phút")
    (25.0, 40.0)
    """
    match = _CLEARANCE_RE.search(folded_with_digits(text))
    if match is None:
        return None
    value = _to_float(match.group(1))
    return value if 0 < value <= 200 else None


def count_taken(text: str) -> int | None:
    """A count of tablets/sachets/packs in the text ("20 viên", "cả vỉ" → -1 for a whole pack)."""
    folded = folded_with_digits(text)
    if match := _COUNT_RE.search(folded):
        if match.group(2) in _PACKS:
            return -1  # "2 vỉ", "3 hộp": whole packs
        return int(_to_float(match.group(1)))
    if _WHOLE_PACK_RE.search(folded):
        return -1
    return None


# Numbers asked that are not a dose (doses go through the dosing gates): a percentage, a time, a count.
_ASKED_UNITS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("%", re.compile(r"\bbao nhieu (?:phan tram|%)|\bmay (?:phan tram|%)|\bphan tram\b.*\bbao nhieu")),
    ("thời gian", re.compile(r"\bmay gio\b|\bbao nhieu gio\b|\bbao lau\b|\bmay tieng\b|\bmay ngay\b"
                             r"|\bbao nhieu ngay\b|\bmay tuan\b|\bmay thang\b|\bbao nhieu (?:tuan|thang|tieng|nam)\b")),
    ("lần", re.compile(r"\bmay lan\b|\bbao nhieu lan\b")),
    ("phút", re.compile(r"\bmay phut\b|\bbao nhieu phut\b")),
    # a reduction asked as an amount ("giảm còn bao nhiêu mg", "giảm bao nhiêu đơn vị"): a number the book
    # may state, or only say "giảm liều"
    ("mg", re.compile(r"\bgiam\b(?: \w+){0,3}? (?:bao nhieu|may) mg\b")),
    ("đơn vị", re.compile(r"\bgiam\b(?: \w+){0,3}? (?:bao nhieu|may) (?:don vi|ui|iu)\b")),
)


def asked_unit(text: str) -> str | None:
    """The unit of a number the turn asks for ("bao nhiêu phần trăm" → "%"), or None."""
    folded = fold(normalize(text))
    return next((unit for unit, pattern in _ASKED_UNITS if pattern.search(folded)), None)


def _show(value: float) -> str:
    return f"{value:g}".replace(".", ",")
