"""Ages, weights, pregnancy, kidney function and asked units from what people type."""

from __future__ import annotations

import pytest

from duocthu.understanding.quantities import (
    asked_unit,
    count_taken,
    folded_with_digits,
    parse_age,
    parse_renal_clearance,
    parse_trimester,
    parse_weight,
)


@pytest.mark.parametrize("text, years, shown", [
    ("Bé 6 tuổi nặng 20 kg", 6.0, "6 tuổi"),
    ("bé 18 tháng", 1.5, "18 tháng"),
    ("con 2 tuổi 3 tháng", 2.25, "2 tuổi 3 tháng"),
    ("Cháu 5 tuổi rưỡi", 5.5, "5,5 tuổi"),
    ("bé mười tám tháng", 1.5, "18 tháng"),
    ("em bé 20 ngày tuổi", 20 / 365, "20 ngày tuổi"),
    ("bé 5t", 5.0, "5 tuổi"),
])
def test_ages(text, years, shown):
    age = parse_age(text)
    assert age is not None and age.years == pytest.approx(years) and age.text == shown


@pytest.mark.parametrize("text", ["mang thai 3 tháng", "uống 3 tháng", "uống 5 ngày rồi", "nằm viện 2 tuần"])
def test_durations_and_gestations_are_not_ages(text):
    assert parse_age(text) is None


def test_newborn():
    assert parse_age("trẻ sơ sinh").text == "sơ sinh"


@pytest.mark.parametrize("text, kg", [("bé nặng 18 ký", 18), ("cân nặng 60", 60), ("45kg", 45),
                                      ("hai mươi lăm ký", 25), ("uống 500 mg", None)])
def test_weights(text, kg):
    assert parse_weight(text) == kg


@pytest.mark.parametrize("text, trimester", [("đang mang thai 7 tháng", 3), ("bầu 3 tháng đầu", 1),
                                             ("thai 30 tuần", 3), ("thai 10 tuần", 1), ("không có thai", None)])
def test_trimesters(text, trimester):
    assert parse_trimester(text) == trimester


def test_kidney_function():
    assert parse_renal_clearance("suy thận, eGFR 25") == 25
    assert parse_renal_clearance("độ thanh thải creatinin 40 ml/phút") == 40


def test_spelled_numbers_respect_diacritics():
    assert folded_with_digits("nằm viện") == "nam vien"  # never "5 viên"
    assert count_taken("lỡ uống 20 viên") == 20 and count_taken("uống cả vỉ") == -1


def test_asked_units():
    assert asked_unit("giảm liều warfarin bao nhiêu phần trăm") == "%"
    assert asked_unit("pha xong để được bao lâu") == "thời gian"
    assert asked_unit("liều bao nhiêu mg") is None  # a dose goes through the dosing gates


def test_how_many_weeks_or_months_asks_a_time():
    from duocthu.understanding.quantities import asked_unit

    assert asked_unit("mở lọ rồi dùng được bao nhiêu tuần") == "thời gian"
    assert asked_unit("để được bao nhiêu tháng") == "thời gian"


def test_a_child_s_years_said_with_len_and_no_tuoi():
    from duocthu.understanding.quantities import parse_age

    assert parse_age("con gái mình lên 6, nặng 19 ký").years == 6
    assert parse_age("bé lên 39 độ từ tối qua") is None


def test_a_child_s_age_after_words_that_only_point_at_the_child():
    assert parse_age("con nhà tôi mới được 4 tháng, nặng 6 ký").text == "4 tháng"
    assert parse_age("bé uống thuốc được 5 ngày rồi") is None


def test_a_pregnancy_week_said_as_tuan_thu():
    assert parse_trimester("chị ấy mang thai tuần thứ 30") == 3
    assert parse_trimester("bầu ở tuần 10") == 1


def test_a_reduction_asked_as_an_amount():
    assert asked_unit("suy thận thì giảm còn bao nhiêu mg") == "mg"
    assert asked_unit("giảm bao nhiêu đơn vị insulin") == "đơn vị"
    assert asked_unit("uống bao nhiêu mg một ngày") is None
