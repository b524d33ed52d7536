"""Population limits parsed from the book's sentences at index time."""

from __future__ import annotations

import pytest

from duocthu.limits import NEWBORN_YEARS, parse_limits


def limits(sentence):
    return [(l.kind, l.max_age_years, l.trimesters, l.conditional) for l in parse_limits(sentence)]


@pytest.mark.parametrize("sentence, expected", [
    ("Trẻ em dưới 12 tuổi.", [("age", 12.0, (), False)]),
    ("Trẻ em dưới 16 tuổi (nguy cơ hội chứng Reye), trừ khi có chỉ định đặc biệt.", [("age", 16.0, (), False)]),
    ("Ba tháng cuối thai kỳ.", [("pregnancy", None, (3,), False)]),
    ("Phụ nữ mang thai, nhất là 3 tháng giữa và 3 tháng cuối thai kỳ.", [("pregnancy", None, (), False)]),
    ("Phụ nữ cho con bú.", [("breastfeeding", None, (), False)]),
    ("Trẻ sinh non đến tuổi điều chỉnh 41 tuần.", [("age", NEWBORN_YEARS, (), False)]),
])
def test_plain_limits(sentence, expected):
    assert limits(sentence) == expected


def test_a_limit_for_a_use_or_form_is_conditional():
    assert limits("Trẻ em dưới 12 tuổi; trẻ dưới 18 tuổi dùng để giảm đau sau cắt amidan hoặc nạo VA.") == [
        ("age", 12.0, (), False), ("age", 18.0, (), True)]
    assert all(c for *_, c in limits("Chế phẩm có alcol benzylic: không dùng cho trẻ sơ sinh và trẻ đẻ non."))


def test_clearances_and_gestations_are_not_ages():
    assert limits("Suy thận nặng (độ thanh thải creatinin dưới 30 ml/phút).") == []


def test_unless_a_doctor_orders_it_is_an_exception_not_a_circumstance():
    from duocthu.limits import names_no_circumstance

    assert names_no_circumstance("Không dùng cho trẻ dưới 6 tháng tuổi nếu không có chỉ định của bác sĩ.")
    assert not names_no_circumstance("Không dùng cho trẻ dưới 6 tháng tuổi nếu bị mất nước.")
