"""Headings by evidence: numbering set aside, a fuzzy catalogue match with a threshold and a margin, style cues."""

from __future__ import annotations

import pytest

from duocthu.book.headings import (
    HEADING_SCORE,
    NEAR_MISS_SCORE,
    BodyStyle,
    caption_text,
    cues,
    match_heading,
    strip_numbering,
    styled,
)

from .book_helpers import line


@pytest.mark.parametrize("printed, bare", [
    ("7. Chỉ định", "Chỉ định"), ("VII. CHỈ ĐỊNH", "CHỈ ĐỊNH"), ("a) Mã ATC", "Mã ATC"), ("(3) Thận trọng", "Thận trọng"),
    ("2.1. Dược động học", "Dược động học"), ("§ 4. Tương kỵ", "Tương kỵ"), ("Chỉ định", "Chỉ định"),
    ("CHỈ ĐỊNH", "CHỈ ĐỊNH"), ("Liều lượng và cách dùng", "Liều lượng và cách dùng"),
])
def test_numbering_is_set_aside(printed, bare):
    assert strip_numbering(printed) == bare


@pytest.mark.parametrize("printed, key", [
    ("14. LIỀU LƯỢNG VÀ CÁCH DÙNG", "lieu_luong_va_cach_dung"), ("Dược lực học", "duoc_ly_va_co_che_tac_dung"),
    ("Tác dụng không mong muốn (ADR):", "tac_dung_khong_mong_muon"), ("Dạng thuốc, hàm lượng", "dang_thuoc_va_ham_luong"),
    ("Bảo quản và độ ổn định", "do_on_dinh_va_bao_quan"), ("Tương kị", "tuong_ky"), ("Chống chỉ định", "chong_chi_dinh"),
    ("Tương tác của thuốc", "tuong_tac_thuoc"), ("Quá liều và cách xử lý", "qua_lieu_va_xu_tri"),
])
def test_headings_worded_as_other_books_word_them(printed, key):
    match = match_heading(printed)
    assert match.key == key and match.score >= HEADING_SCORE


@pytest.mark.parametrize("printed, best", [
    ("Thời kỳ có thai", "Thời kỳ mang thai"), ("Cách xử trí ADR", "Hướng dẫn cách xử trí ADR"),
    ("Tương tác với thuốc khác", "Tương tác thuốc"),
])
def test_near_misses_are_not_taken_but_named(printed, best):
    match = match_heading(printed)
    assert match.key is None and NEAR_MISS_SCORE <= match.score < HEADING_SCORE and match.title == best


def test_unrelated_styled_lines_score_far_below():
    for text in ("PARACETAMOL", "Lưu ý riêng của nhà sản xuất", "Amoxicilin và acid clavulanic"):
        assert match_heading(text).score < NEAR_MISS_SCORE


def test_captions():
    assert caption_text("Bảng 1. Tương tác của warfarin") == "Tương tác của warfarin"
    assert caption_text("Bảng 2 – Liều theo độ thanh thải") == "Liều theo độ thanh thải"
    assert caption_text("Bảng: Liều") == "Liều" and caption_text("Bảng trên chỉ là hướng dẫn") is None


def test_style_cues_are_measured_against_the_body():
    body = BodyStyle(10.0, False, False)
    assert cues(line("Chỉ định", 50, 100, bold=True), body, False) == {"bold"}
    assert cues(line("7. Chỉ định", 50, 100), body, True) == {"numbered", "space above"}
    assert styled(cues(line("7. Chỉ định", 50, 100), body, True))
    assert not styled(cues(line("Sốt.", 50, 100), body, True))
    assert "bold" not in cues(line("Chỉ định", 50, 100, bold=True), BodyStyle(10.0, True, False), False)
