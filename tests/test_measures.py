"""Numbers compared with a named measure: the book's thresholds and the user's stated values."""

from __future__ import annotations

import pytest

from duocthu.measures import read_thresholds
from duocthu.types import Threshold


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Suy thận nặng với độ thanh thải creatinin < 10 ml/phút.", Threshold("creatinine_clearance", "<", 10.0, "ml/phút")),
        ("Suy thận nặng (độ thanh thải creatinin dưới 30 ml/phút).", Threshold("creatinine_clearance", "<", 30.0, "ml/phút")),
        ("Tăng kali máu (kali huyết thanh > 5,0 mmol/lít).", Threshold("potassium", ">", 5.0, "mmol/l")),
        ("Phối hợp với methotrexat liều từ 15 mg/tuần trở lên", Threshold("dose_per_week", ">=", 15.0, "mg/tuần")),
        ("Ba tháng cuối thai kỳ khi dùng liều trên 100 mg/ngày.", Threshold("dose_per_day", ">", 100.0, "mg/ngày")),
        ("suy thận (mức lọc cầu thận < 60 ml/phút/1,73 m²)", Threshold("egfr", "<", 60.0, "ml/phút/1,73 m²")),
        ("Suy tim sung huyết (NYHA II–IV)", Threshold("nyha", ">=", 2.0, "")),
        ("huyết áp tâm thu dưới 90 mmHg", Threshold("systolic_bp", "<", 90.0, "mmhg")),
        ("terfenadin khi dùng fluconazol từ 400 mg/ngày", Threshold("dose_per_day", ">=", 400.0, "mg/ngày")),
        ("suy gan Child-Pugh B hoặc C", Threshold("child_pugh", ">=", 2.0, "")),
        ("clcr duoi 10 ml/phut", Threshold("creatinine_clearance", "<", 10.0, "ml/phút")),
        ("INR ≥ 2,0", Threshold("inr", ">=", 2.0, "")),
    ],
)
def test_book_thresholds(text: str, expected: Threshold) -> None:
    assert read_thresholds(text) == [expected]


@pytest.mark.parametrize(
    "text",
    ["Trẻ em dưới 16 tuổi", "Liều duy trì 10–80 mg/ngày", "trẻ cân nặng dưới 35 kg", "Đích INR: 2,0–3,0"],
)
def test_ages_weights_and_ranges_are_not_thresholds(text: str) -> None:
    assert read_thresholds(text) == []


def test_bare_values_only_on_request() -> None:
    assert read_thresholds("kali máu 5,9 mmol/L") == []
    assert read_thresholds("kali máu 5,9 mmol/L", require_comparator=False) == [Threshold("potassium", "=", 5.9, "mmol/l")]
    assert read_thresholds("mức lọc cầu thận 1.000", require_comparator=False)[0].value == 1000.0
