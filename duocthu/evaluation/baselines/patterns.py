"""Phrase tables of the rule-based understander (the measured baseline; see ``rules.py``).

All phrase lists are data; matching is on folded words (so typing without diacritics works)
and word-boundary anchored.
"""

from __future__ import annotations

from dataclasses import dataclass

from duocthu.understanding.cues import (  # noqa: F401  (shared with the learned understander)
    CAUSES_CUES,
    CAUTION_CUES,
    CONTRAINDICATION_CUES,
    REVERSE_CUES,
)
from duocthu.understanding.patient import (  # noqa: F401
    ADULT_WORDS,
    BREASTFEEDING_WORDS,
    CURRENT_MEDICATION_CUES,
    ELDERLY_WORDS,
    PEDIATRIC_WORDS,
    PREGNANCY_WORDS,
    PRONOUN_DRUG_REFERENCES,
    ROUTE_WORDS,
    STRONG_ADULT_WORDS,
)
from duocthu.understanding.quantities import parse_age, parse_weight
from duocthu.understanding.reverse import AMBIGUOUS_CONDITIONS, REVERSE_FILLER, SYMPTOM_HEADS  # noqa: F401
from duocthu.understanding.scope import (  # noqa: F401  (re-exported for the rules understander)
    has_phrase,
    letter_ratio,
    looks_like_code,
    looks_like_gibberish,
    looks_like_instruction_attack,
)


@dataclass(frozen=True)
class PatientFactsText:
    age_text: str | None
    age_years: float | None
    weight_kg: float | None


def extract_age_and_weight(text: str) -> PatientFactsText:
    age = parse_age(text)
    return PatientFactsText(age.text if age else None, age.years if age else None, parse_weight(text))


GREETINGS = (
    "xin chào", "chào bạn", "chào", "hello", "hi", "hey", "alo", "cảm ơn", "cám ơn", "thank you",
    "thanks", "tạm biệt", "bạn là ai", "bạn làm được gì", "bạn giúp được gì", "chúc ngủ ngon",
)
ASK_ABOUT_CUES = ("hỏi về", "hỏi chút về", "muốn hỏi", "cho hỏi", "hỏi thăm về", "hỏi một chút về", "thắc mắc về")
VAGUE_DRUG_REFERENCES = ("thuốc kia", "thuốc đó", "thuốc khác", "cái thuốc", "viên thuốc", "thuốc màu", "mấy viên thuốc",
                         "thuốc hôm qua", "thuốc bác sĩ kê", "thuốc do", "thuốc kia nữa", "loại thuốc kia")
NON_DRUG_PHARMACY_WORDS = ("ringer", "lactat", "glucose", "dextrose", "natri", "clorid", "kali", "calci", "magnesi",
                           "bicarbonat", "nacl", "hartmann", "sorbitol", "albumin", "oxy", "vitamin", "insulin")
OVERVIEW_CUES = ("là thuốc gì", "là gì", "thông tin về", "giới thiệu", "tổng quan", "cho biết về", "tìm hiểu về", "nói về")
SECTION_OVERVIEW_CUES = ("toàn bộ", "đầy đủ", "tất cả", "nguyên văn", "cả mục")
FOLLOW_UP_CUES = ("còn", "thì sao", "thế còn", "vậy còn", "còn với")
INTERACTION_CUES = ("với", "cùng", "chung", "kèm", "kết hợp", "phối hợp", "và", "cùng lúc", "cùng với")
QUANTITY_CUES = ("bao nhiêu viên", "mấy viên", "mấy ml", "mấy gói", "tính liều", "uống bao nhiêu", "dùng bao nhiêu",
                 "bao nhiêu mg", "mấy mg", "mấy thìa", "bao nhiêu ml")
DOSING_CUES = ("bao nhiêu", "mấy viên", "mấy ml", "mấy lần", "liều", "tính liều", "uống sao", "dùng sao", "mấy gói")
COMORBIDITY_PHRASES = (
    "suy thận", "suy gan", "loét dạ dày", "loét dạ dày tá tràng", "hen", "hen phế quản", "suy tim",
    "tăng huyết áp", "đái tháo đường", "xuất huyết tiêu hóa", "động kinh", "gút", "bệnh gan", "bệnh thận",
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
