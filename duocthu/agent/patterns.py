"""Vietnamese surface patterns for the rule-based understander: facts, turn cues, scope guard.

All phrase lists are data; matching is on folded words (so typing without diacritics works)
and word-boundary anchored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from duocthu.agent.drug_resolver import is_vietnamese_syllable
from duocthu.text import find_phrase_accent_aware, fold, folded_words, normalize, words

_NUMBER_WORDS = {
    "khong": 0, "mot": 1, "mốt": 1, "hai": 2, "ba": 3, "bon": 4, "tu": 4, "nam": 5, "lam": 5,
    "sau": 6, "bay": 7, "tam": 8, "chin": 9, "muoi": 10,
}
_UNIT_AFTER_NUMBER = r"(?:tuoi|thang|tuan|can|ky|ki|kg|kilogam|ki lo|kilo|ky lo)"
_NUMBER_PHRASE_RE = re.compile(
    r"\b((?:(?:khong|mot|hai|ba|bon|tu|nam|lam|sau|bay|tam|chin|muoi|muoi|mot|le|linh)\s+){0,3}"
    r"(?:khong|mot|hai|ba|bon|tu|nam|lam|sau|bay|tam|chin|muoi|mot))\s+(?=" + _UNIT_AFTER_NUMBER + r"\b)"
)


def words_to_number(phrase: str) -> int | None:
    """'muoi tam' → 18, 'hai muoi lam' → 25, 'muoi' → 10 (folded Vietnamese number words)."""
    tokens = [t for t in phrase.split() if t not in ("le", "linh")]
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
    """Folded text in which spelled-out numbers before a unit become digits."""
    folded = fold(normalize(text))

    def replace(match: re.Match[str]) -> str:
        value = words_to_number(match.group(1))
        return f"{value} " if value is not None else match.group(0)

    return _NUMBER_PHRASE_RE.sub(replace, folded)


_NUMBER = r"(\d+(?:[.,]\d+)?)"
_AGE_YEARS_RE = re.compile(_NUMBER + r"\s*(?:tuoi|t\b|yo\b|years?\b)")
_AGE_MONTHS_RE = re.compile(_NUMBER + r"\s*thang(?:\s*tuoi)?")
_AGE_WEEKS_RE = re.compile(_NUMBER + r"\s*tuan(?:\s*tuoi)?")
_WEIGHT_RE = re.compile(_NUMBER + r"\s*(?:kg|kilogam|kilo|ki lo|ky lo|ky|ki|can)\b")
_WEIGHT_AFTER_NANG_RE = re.compile(r"\bnang\s+(?:khoang\s+|tam\s+)?" + _NUMBER + r"\b(?!\s*(?:tuoi|thang))")


def _to_float(text: str) -> float:
    return float(text.replace(",", "."))


@dataclass(frozen=True)
class PatientFactsText:
    age_text: str | None
    age_years: float | None
    weight_kg: float | None


def extract_age_and_weight(text: str) -> PatientFactsText:
    folded = folded_with_digits(text)
    age_text = None
    age_years = None
    if match := _AGE_MONTHS_RE.search(folded):
        value = _to_float(match.group(1))
        age_text, age_years = f"{match.group(1)} tháng", value / 12
    elif match := _AGE_WEEKS_RE.search(folded):
        value = _to_float(match.group(1))
        age_text, age_years = f"{match.group(1)} tuần", value / 52
    elif match := _AGE_YEARS_RE.search(folded):
        value = _to_float(match.group(1))
        age_text, age_years = f"{match.group(1)} tuổi", value
    weight = None
    if (match := _WEIGHT_RE.search(folded)) or (match := _WEIGHT_AFTER_NANG_RE.search(folded)):
        weight = _to_float(match.group(1))
    if weight is not None and not (0 < weight <= 400):
        weight = None
    return PatientFactsText(age_text, age_years, weight)


def has_phrase(text: str, phrases: tuple[str, ...]) -> bool:
    """Word-anchored phrase match; a word typed with diacritics must match them exactly.

    "Tối nay" does not match "tôi"; "toi" (typed without diacritics) does.
    """
    tokens = words(text)
    return any(find_phrase_accent_aware(tokens, words(phrase)) >= 0 for phrase in phrases)


PEDIATRIC_WORDS = (
    "bé", "em bé", "trẻ", "trẻ em", "trẻ nhỏ", "con tôi", "con mình", "con em", "cháu", "con gái",
    "con trai", "sơ sinh", "nhũ nhi", "bé nhà", "con nhỏ", "đứa bé", "con của tôi",
)
STRONG_ADULT_WORDS = ("người lớn", "vợ tôi", "chồng tôi", "bố tôi", "mẹ tôi", "anh tôi", "chị tôi", "người trưởng thành")
ADULT_WORDS = (*STRONG_ADULT_WORDS, "tôi", "mình", "em nặng")  # "tôi" is weak: a parent says it too
ELDERLY_WORDS = ("người già", "người cao tuổi", "cao tuổi", "ông", "bà nội", "bà ngoại", "ông bà", "cụ")
ROUTE_WORDS = {
    "uống": ("uống", "đường uống", "viên uống", "siro", "si rô"),
    "tiêm": ("tiêm", "tiêm tĩnh mạch", "tiêm bắp", "truyền", "truyền tĩnh mạch"),
    "đặt trực tràng": ("đặt hậu môn", "đặt trực tràng", "viên đạn", "nhét hậu môn"),
    "dùng ngoài": ("bôi", "thoa", "dùng ngoài"),
}

GREETINGS = (
    "xin chào", "chào bạn", "chào", "hello", "hi", "hey", "alo", "cảm ơn", "cám ơn", "thank you",
    "thanks", "tạm biệt", "bạn là ai", "bạn làm được gì", "bạn giúp được gì", "chúc ngủ ngon",
)
ASK_ABOUT_CUES = ("hỏi về", "hỏi chút về", "muốn hỏi", "cho hỏi", "hỏi thăm về", "hỏi một chút về", "thắc mắc về")
VAGUE_DRUG_REFERENCES = ("thuốc kia", "thuốc đó", "thuốc khác", "cái thuốc", "viên thuốc", "thuốc màu", "mấy viên thuốc",
                         "thuốc hôm qua", "thuốc bác sĩ kê", "thuốc do", "thuốc kia nữa", "loại thuốc kia")
PRONOUN_DRUG_REFERENCES = ("nó", "thuốc này", "thuốc đó", "thuốc trên", "thuốc vừa rồi", "thuốc ấy")
NON_DRUG_PHARMACY_WORDS = ("ringer", "lactat", "glucose", "dextrose", "natri", "clorid", "kali", "calci", "magnesi",
                           "bicarbonat", "nacl", "hartmann", "sorbitol", "albumin", "oxy", "vitamin", "insulin")
OVERVIEW_CUES = ("là thuốc gì", "là gì", "thông tin về", "giới thiệu", "tổng quan", "cho biết về", "tìm hiểu về", "nói về")
SECTION_OVERVIEW_CUES = ("toàn bộ", "đầy đủ", "tất cả", "nguyên văn", "cả mục")
FOLLOW_UP_CUES = ("còn", "thì sao", "thế còn", "vậy còn", "còn với")
INTERACTION_CUES = ("với", "cùng", "chung", "kèm", "kết hợp", "phối hợp", "và", "cùng lúc", "cùng với")
QUANTITY_CUES = ("bao nhiêu viên", "mấy viên", "mấy ml", "mấy gói", "tính liều", "uống bao nhiêu", "dùng bao nhiêu",
                 "bao nhiêu mg", "mấy mg", "mấy thìa", "bao nhiêu ml")
DOSING_CUES = ("bao nhiêu", "mấy viên", "mấy ml", "mấy lần", "liều", "tính liều", "uống sao", "dùng sao", "mấy gói")
REVERSE_CUES = (
    "thuốc nào", "thuốc gì", "những thuốc nào", "các thuốc nào", "loại thuốc nào", "nhóm thuốc nào",
    "dùng gì", "uống gì", "nên uống gì", "nên dùng gì", "trị bằng gì", "chữa bằng gì", "thuốc để trị",
    "thuốc chữa", "thuốc trị", "thuốc điều trị", "có thuốc nào", "thuốc dành cho",
)
CAUSES_CUES = ("gây", "gây ra", "làm tăng", "làm nặng", "dẫn đến", "là nguyên nhân", "làm kéo dài", "làm giảm",
               "làm hạ", "gây hại", "có hại cho")
CONTRAINDICATION_CUES = ("chống chỉ định", "không được dùng", "cấm dùng", "không được uống", "không nên dùng")
CAUTION_CUES = ("thận trọng", "cần thận trọng", "lưu ý")
CURRENT_MEDICATION_CUES = ("đang uống", "đang dùng", "đang điều trị bằng", "đang sử dụng", "hiện uống", "hiện dùng")
SYMPTOM_HEADS = (
    "đau", "sốt", "ho", "ngứa", "buồn nôn", "nôn", "tiêu chảy", "mất ngủ", "chóng mặt", "sổ mũi",
    "nghẹt mũi", "khó thở", "mẩn", "phát ban", "táo bón", "ợ chua", "ợ nóng", "lo âu",
)
AMBIGUOUS_CONDITIONS = frozenset(
    fold(c) for c in ("đau", "viêm", "nhiễm khuẩn", "nhiễm trùng", "bệnh", "ung thư", "nhiễm nấm", "dị ứng",
                      "đau nhức", "nhiễm virus", "bệnh tim", "khó chịu", "mệt", "mệt mỏi", "không khỏe", "ốm")
)
COMORBIDITY_PHRASES = (
    "suy thận", "suy gan", "loét dạ dày", "loét dạ dày tá tràng", "hen", "hen phế quản", "suy tim",
    "tăng huyết áp", "đái tháo đường", "xuất huyết tiêu hóa", "động kinh", "gút", "bệnh gan", "bệnh thận",
)
PREGNANCY_WORDS = ("có thai", "mang thai", "bầu", "có bầu", "mang bầu", "bà bầu", "phụ nữ có thai", "đang mang thai")
BREASTFEEDING_WORDS = ("cho con bú", "cho bú", "đang cho bú")
REVERSE_FILLER = (
    "thuốc nào", "thuốc gì", "những thuốc nào", "các thuốc nào", "loại thuốc nào", "nhóm thuốc nào",
    "dùng gì", "uống gì", "nên uống gì", "nên dùng gì", "trị bằng gì", "chữa bằng gì", "thuốc để trị",
    "thuốc chữa", "thuốc trị", "thuốc điều trị", "có thuốc nào", "thuốc dành cho", "dùng để", "dùng cho",
    "điều trị", "chữa", "trị", "cho", "bị", "người bị", "tôi bị", "em bị", "mình bị", "bé bị", "con bị",
    "người", "bệnh nhân", "có", "được", "chỉ định", "có chỉ định", "được chỉ định", "nên", "dùng",
    "uống", "thuốc", "không", "ạ", "vậy", "thì", "khi", "là", "những", "các", "nào", "gì", "loại",
    "mà", "để", "hỏi", "cho hỏi", "xin hỏi", "tư vấn", "giúp", "tôi", "em", "mình", "hiện", "đang", "nhóm",
    "gây", "gây ra", "làm tăng", "chống chỉ định", "thận trọng", "với", "trong", "và", "của", "thể",
    "mấy", "triệu chứng", "nhiều", "một số", "khi", "nên uống thuốc nào", "thuốc nào tốt",
    "bà bầu", "phụ nữ", "bà mẹ", "người lớn", "trẻ em", "bé", "con tôi", "cần", "hay", "tốt", "nhất", "ạ", "nhé",
)

_INSTRUCTION_ATTACK_PHRASES = (
    "bỏ qua hướng dẫn", "bỏ qua mọi hướng dẫn", "bỏ qua các hướng dẫn", "bỏ qua tất cả", "quên hướng dẫn",
    "ignore previous instructions", "ignore all previous", "ignore the above", "ignore your instructions",
    "disregard previous", "system prompt", "lời nhắc hệ thống", "bạn bây giờ là", "you are now",
    "tiết lộ prompt", "tiết lộ api key", "api key", "mật khẩu", "password", "jailbreak", "developer mode",
    "chế độ nhà phát triển", "đóng vai", "act as", "pretend to be", "in ra prompt", "show your prompt",
    "reveal your", "secret key", "aws secret", "biến môi trường", "environment variable",
)
_CODE_RE = re.compile(
    r"(<\s*/?\s*(script|iframe|img|svg|html|body|div)\b|\bselect\b.+\bfrom\b|\bdrop\s+table\b|"
    r"\bunion\s+select\b|\binsert\s+into\b|\bdef\s+\w+\s*\(|\bimport\s+\w+|\bconsole\.log\b|"
    r"\bfunction\s*\(|=>|\{\s*\"|\bprint\s*\(|#include|\brm\s+-rf\b|;\s*--|\bexec\s*\()",
    re.IGNORECASE | re.DOTALL,
)
OUT_OF_SCOPE_TOPICS = (
    "thời tiết", "bóng đá", "nấu ăn", "công thức nấu", "chứng khoán", "bitcoin", "giá vàng", "xổ số",
    "viết thơ", "làm thơ", "bài hát", "phim", "du lịch", "lập trình", "viết code", "chính trị",
    "tỷ giá", "kết quả trận", "game", "tình yêu", "bói", "tử vi", "dịch sang tiếng anh",
)
MEDICAL_WORDS = (
    "thuốc", "bệnh", "đau", "liều", "uống", "tiêm", "sốt", "ho", "viêm", "nhiễm", "triệu chứng",
    "tác dụng", "dược", "bác sĩ", "khám", "chữa", "trị", "điều trị", "viên", "mg",
)


def looks_like_instruction_attack(text: str) -> bool:
    return has_phrase(text, _INSTRUCTION_ATTACK_PHRASES)


def looks_like_code(text: str) -> bool:
    return bool(_CODE_RE.search(text))


_CONSONANT_RUN_RE = re.compile(r"[bcdfghjklmnpqrstvwxz]{4,}")


def _pronounceable(token: str) -> bool:
    return any(v in token for v in "aeiouy") and not _CONSONANT_RUN_RE.search(token)


def looks_like_gibberish(text: str, known_tokens: set[str]) -> bool:
    """Mostly unpronounceable tokens (keyboard mashing), none of them a known name."""
    tokens = [t for t in folded_words(text) if t.isalpha()]
    if not tokens:
        return not any(ch.isdigit() for ch in text)
    plausible = sum(
        1 for t in tokens
        if is_vietnamese_syllable(t) or t in known_tokens or len(t) <= 2 or _pronounceable(t)
    )
    return plausible / len(tokens) < 0.5


def letter_ratio(text: str) -> float:
    visible = [c for c in text if not c.isspace()]
    if not visible:
        return 0.0
    return sum(1 for c in visible if c.isalpha() or c.isdigit()) / len(visible)
