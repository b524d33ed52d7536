"""The section catalogue of a Dược thư monograph and the keyword section resolver.

The resolver answers one question — which section does this question name? — and it never
guesses: the longest phrase across all sections wins (so "chống chỉ định" is tested before
"chỉ định" and "quá liều" before "liều"), matching is word-boundary anchored and diacritic-
insensitive for words typed without diacritics, and ``None`` means "no section named".
Adding a phrasing means adding an entry to :data:`SECTION_PHRASES`, never editing code.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from duocthu.text import find_phrase_accent_aware, fold, words


@dataclass(frozen=True)
class Section:
    key: str
    title: str
    heading_variants: tuple[str, ...] = ()


SECTIONS: tuple[Section, ...] = (
    Section("ten_chung_quoc_te", "Tên chung quốc tế", ("Tên quốc tế",)),
    Section("ma_atc", "Mã ATC"),
    Section("loai_thuoc", "Loại thuốc"),
    Section("dang_thuoc_va_ham_luong", "Dạng thuốc và hàm lượng", ("Dạng thuốc và nồng độ, hàm lượng",)),
    Section("duoc_ly_va_co_che_tac_dung", "Dược lý và cơ chế tác dụng", ("Dược lực học",)),
    Section("duoc_dong_hoc", "Dược động học"),
    Section("chi_dinh", "Chỉ định"),
    Section("chong_chi_dinh", "Chống chỉ định"),
    Section("than_trong", "Thận trọng"),
    Section("thoi_ky_mang_thai", "Thời kỳ mang thai"),
    Section("thoi_ky_cho_con_bu", "Thời kỳ cho con bú"),
    Section("tac_dung_khong_mong_muon", "Tác dụng không mong muốn (ADR)", ("Tác dụng không mong muốn",)),
    Section("huong_dan_xu_tri_adr", "Hướng dẫn cách xử trí ADR", ("Hướng dẫn xử trí ADR",)),
    Section("lieu_luong_va_cach_dung", "Liều lượng và cách dùng", ("Cách dùng và liều lượng",)),
    Section("tuong_tac_thuoc", "Tương tác thuốc"),
    Section("tuong_ky", "Tương kỵ"),
    Section("do_on_dinh_va_bao_quan", "Độ ổn định và bảo quản", ("Bảo quản",)),
    Section("qua_lieu_va_xu_tri", "Quá liều và xử trí", ("Quá liều và cách xử trí",)),
    Section("thong_tin_quy_che", "Thông tin quy chế"),
)

SECTION_ORDER: tuple[str, ...] = tuple(s.key for s in SECTIONS)
SECTION_TITLES: dict[str, str] = {s.key: s.title for s in SECTIONS}
INTRO_SECTIONS: frozenset[str] = frozenset(
    {"ten_chung_quoc_te", "loai_thuoc", "chi_dinh", "duoc_ly_va_co_che_tac_dung"}
)
OPTIONAL_SECTIONS: frozenset[str] = frozenset({"tuong_ky", "thong_tin_quy_che"})
REQUIRED_SECTIONS: tuple[str, ...] = tuple(k for k in SECTION_ORDER if k not in OPTIONAL_SECTIONS)

SECTION_PHRASES: dict[str, tuple[str, ...]] = {
    "ten_chung_quoc_te": (
        "tên chung quốc tế", "tên quốc tế", "tên gốc", "tên hoạt chất", "tên khác",
        "tên inn", "inn",
    ),
    "ma_atc": ("mã atc", "atc", "mã phân loại atc"),
    "loai_thuoc": (
        "loại thuốc", "nhóm thuốc", "thuộc nhóm", "thuộc loại", "nhóm dược lý", "thuốc nhóm nào",
        "thuộc nhóm nào",
    ),
    "dang_thuoc_va_ham_luong": (
        "dạng thuốc", "hàm lượng", "dạng bào chế", "bào chế", "có những dạng", "dạng nào",
        "viên mấy mg", "viên bao nhiêu mg", "loại viên", "dạng viên", "có dạng tiêm không",
        "có dạng", "dạng siro", "siro", "dạng tiêm", "dạng uống", "thuốc tiêm", "có loại",
    ),
    "duoc_ly_va_co_che_tac_dung": (
        "dược lý", "cơ chế", "cơ chế tác dụng", "tác dụng dược lý", "dược lực học",
        "hoạt động như thế nào", "hoạt động thế nào", "tác động như thế nào", "cơ chế hoạt động",
    ),
    "duoc_dong_hoc": (
        "dược động học", "hấp thu", "chuyển hóa", "thải trừ", "nửa đời", "bán thải",
        "thời gian bán thải", "sinh khả dụng", "phân bố", "đào thải",
    ),
    "chi_dinh": (
        "chỉ định", "dùng để làm gì", "để làm gì", "dùng để chữa", "dùng để trị", "trị bệnh gì",
        "chữa bệnh gì", "công dụng", "dùng khi nào", "chữa gì", "trị gì", "có tác dụng gì",
        "tác dụng gì", "dùng trong trường hợp nào",
    ),
    "chong_chi_dinh": (
        "chống chỉ định", "không được dùng", "không nên dùng", "cấm dùng", "không được uống",
        "không dùng cho ai", "ai không nên dùng", "ai không được dùng", "những ai không nên",
        "trường hợp nào không được dùng", "chống chỉ đinh",
    ),
    "than_trong": (
        "thận trọng", "lưu ý", "cẩn thận", "cảnh báo", "cần chú ý", "chú ý gì", "chú ý khi",
        "thận trọng gì", "lái xe", "vận hành máy", "người cao tuổi",
    ),
    "thoi_ky_mang_thai": (
        "thời kỳ mang thai", "mang thai", "có thai", "bà bầu", "phụ nữ có thai", "thai kỳ",
        "đang bầu", "mang bầu", "có bầu", "thai nhi", "người mang thai", "đang mang thai",
        "bầu bí", "bầu",
    ),
    "thoi_ky_cho_con_bu": (
        "thời kỳ cho con bú", "cho con bú", "cho bú", "nuôi con bằng sữa mẹ", "sữa mẹ",
        "đang cho bé bú", "con bú", "bà mẹ cho con bú",
    ),
    "tac_dung_khong_mong_muon": (
        "tác dụng không mong muốn", "tác dụng phụ", "adr", "phản ứng phụ", "tác hại",
        "phản ứng có hại", "tác dụng ngoại ý", "phản ứng bất lợi", "side effect",
        "có gây", "gây buồn ngủ", "buồn ngủ",
    ),
    "huong_dan_xu_tri_adr": (
        "hướng dẫn cách xử trí adr", "xử trí adr", "xử trí tác dụng phụ", "xử lý tác dụng phụ",
        "khi gặp tác dụng phụ", "bị tác dụng phụ thì làm gì", "xử trí tác dụng không mong muốn",
        "bị tác dụng phụ", "gặp tác dụng phụ",
        "cách xử trí adr", "xử lý adr",
    ),
    "lieu_luong_va_cach_dung": (
        "liều lượng", "liều dùng", "liều", "cách dùng", "uống bao nhiêu", "dùng bao nhiêu",
        "uống mấy viên", "mấy viên", "cách uống", "bao nhiêu mg", "uống như thế nào",
        "dùng như thế nào", "liều tối đa", "mấy lần một ngày", "uống mấy lần", "dose",
        "uống thế nào", "dùng thế nào", "bao nhiêu viên", "mấy ml", "tính liều", "cách sử dụng", "sử dụng thế nào", "uống như nào", "uống sao",
    ),
    "tuong_tac_thuoc": (
        "tương tác thuốc", "tương tác", "dùng chung", "uống chung", "dùng cùng", "uống cùng",
        "phối hợp", "kết hợp", "dùng với", "uống với", "dùng kèm", "uống kèm", "kỵ với", "kị với",
    ),
    "tuong_ky": (
        "tương kỵ", "tương kị", "pha chung", "trộn chung", "pha cùng", "trộn lẫn",
        "pha với dung dịch", "pha trong cùng",
    ),
    "do_on_dinh_va_bao_quan": (
        "độ ổn định và bảo quản", "bảo quản", "độ ổn định", "hạn dùng", "nhiệt độ bảo quản",
        "cất giữ", "cất ở đâu", "để tủ lạnh", "tủ lạnh", "để được bao lâu", "bao lâu sau khi pha", "pha xong",
        "sau khi mở", "đã mở nắp", "mở nắp", "đã mở", "khi đã mở", "giữ được bao lâu", "để được mấy ngày",
        "giữ được mấy ngày",
    ),
    "qua_lieu_va_xu_tri": (
        "quá liều và xử trí", "quá liều", "ngộ độc", "uống quá nhiều", "dùng quá nhiều",
        "uống nhầm", "quá tay", "nhiễm độc",
    ),
    "thong_tin_quy_che": (
        "thông tin quy chế", "quy chế", "kê đơn", "thuốc gây nghiện", "hướng thần", "cần đơn",
        "phải có đơn", "thuốc kê đơn", "mua không cần đơn", "quản lý đặc biệt",
    ),
}


# Generic phrasings consulted only when no phrase above matches anywhere in the question:
# "xử trí thế nào" alone means handling an adverse reaction, but "quá liều … xử trí thế nào"
# is about overdose. Still data: add a phrasing here, never edit the matching code.
WEAK_SECTION_PHRASES: dict[str, tuple[str, ...]] = {
    "huong_dan_xu_tri_adr": ("xử trí thế nào", "xử trí ra sao", "xử lý thế nào", "xử lý ra sao", "phải làm gì",
                             "thì làm gì", "cần làm gì"),
}


@dataclass(frozen=True)
class SectionMatch:
    section_key: str
    phrase: str
    position: int


def _longest_first(table: dict[str, tuple[str, ...]]) -> tuple[tuple[tuple[str, ...], str, str], ...]:
    entries = [(tuple(words(phrase)), phrase, key) for key, phrases in table.items() for phrase in phrases]
    # Longest first, in words then in characters; ties keep catalogue order.
    entries.sort(key=lambda e: (-len(e[0]), -len(e[1])))
    return tuple(entries)


@lru_cache(maxsize=1)
def _phrases_longest_first() -> tuple[tuple[tuple[str, ...], str, str], ...]:
    return _longest_first(SECTION_PHRASES)


@lru_cache(maxsize=1)
def _weak_phrases_longest_first() -> tuple[tuple[tuple[str, ...], str, str], ...]:
    return _longest_first(WEAK_SECTION_PHRASES)


def resolve_section_match(question: str) -> SectionMatch | None:
    """The section a question names, with the phrase that named it, or ``None``."""
    query = words(question)
    for tier in (_phrases_longest_first(), _weak_phrases_longest_first()):
        for phrase_words, phrase, key in tier:
            position = find_phrase_accent_aware(query, phrase_words)
            if position >= 0:
                return SectionMatch(key, phrase, position)
    return None


def resolve_section(question: str) -> str | None:
    """Section key the question names, or ``None`` — the resolver never guesses.

    >>> resolve_section("Chống chỉ định của ibuprofen?")
    'chong_chi_dinh'
    >>> resolve_section("ibuprofen qua lieu")
    'qua_lieu_va_xu_tri'
    >>> resolve_section("ibuprofen") is None
    True
    """
    match = resolve_section_match(question)
    return match.section_key if match else None


@lru_cache(maxsize=1)
def _heading_lookup() -> dict[str, str]:
    lookup: dict[str, str] = {}
    for section in SECTIONS:
        for heading in (section.title, *section.heading_variants):
            lookup[_clean_heading(heading)] = section.key
    return lookup


def _clean_heading(heading: str) -> str:
    return " ".join("".join(c if c.isalnum() else " " for c in fold(heading)).split())


def section_for_heading(heading: str) -> str | None:
    """Catalogue key of a monograph heading (case, diacritics and punctuation ignored)."""
    return _heading_lookup().get(_clean_heading(heading))
