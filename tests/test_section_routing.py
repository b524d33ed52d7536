"""The keyword section resolver: longest phrase wins, word-anchored, never a guess."""

from __future__ import annotations

import pytest

from duocthu.sections import SECTION_ORDER, SECTION_PHRASES, resolve_section, resolve_section_match


@pytest.mark.parametrize(
    "question, expected",
    [
        ("Chống chỉ định của ibuprofen là gì?", "chong_chi_dinh"),
        ("chong chi dinh cua ibuprofen", "chong_chi_dinh"),
        ("Chỉ định của ibuprofen?", "chi_dinh"),
        ("Uống paracetamol quá liều thì sao?", "qua_lieu_va_xu_tri"),
        ("qua lieu paracetamol", "qua_lieu_va_xu_tri"),
        ("Liều paracetamol cho người lớn", "lieu_luong_va_cach_dung"),
        ("Tác dụng phụ của amoxicilin", "tac_dung_khong_mong_muon"),
        ("xử trí tác dụng phụ của morphin", "huong_dan_xu_tri_adr"),
        ("Bà bầu uống paracetamol được không?", "thoi_ky_mang_thai"),
        ("đang cho con bú dùng cetirizin được không", "thoi_ky_cho_con_bu"),
        ("Warfarin dùng chung với aspirin được không", "tuong_tac_thuoc"),
        ("bảo quản insulin thế nào", "do_on_dinh_va_bao_quan"),
        ("cơ chế của metformin", "duoc_ly_va_co_che_tac_dung"),
        ("Thận trọng khi dùng ibuprofen", "than_trong"),
        ("ceftriaxon pha chung với dung dịch ringer được không", "tuong_ky"),
    ],
)
def test_resolves_the_named_section(question, expected):
    assert resolve_section(question) == expected


@pytest.mark.parametrize("question", ["paracetamol", "Cho tôi hỏi về metformin", "liệu pháp insulin", "thuốc này tốt không"])
def test_no_match_is_none_never_a_guess(question):
    assert resolve_section(question) is None


def test_longest_phrase_wins_across_sections():
    match = resolve_section_match("Chống chỉ định và chỉ định của ibuprofen")
    assert match is not None and match.section_key == "chong_chi_dinh" and match.phrase == "chống chỉ định"
    assert resolve_section("quá liều và liều thường dùng") == "qua_lieu_va_xu_tri"


def test_word_boundary_anchored():
    # "lieu" inside another word never matches; "liệu" (with diacritics) is not "liều".
    assert resolve_section("tài liệu về paracetamol") is None
    assert resolve_section("thuoc ADRenalin") is None


def test_every_section_has_phrases_and_a_catalogue_key():
    assert set(SECTION_PHRASES) == set(SECTION_ORDER)
    for key, phrases in SECTION_PHRASES.items():
        assert phrases, key
