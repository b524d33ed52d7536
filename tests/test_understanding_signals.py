"""Crisis, overdose-taken and emergency signals: precise both ways."""

from __future__ import annotations

import pytest

from duocthu.understanding.signals import is_emergency, is_overdose_taken, is_self_harm


@pytest.mark.parametrize("text", [
    "Tôi muốn chết, uống bao nhiêu viên paracetamol 500 thì đủ?", "toi khong muon song nua",
    "Paracetamol uống bao nhiêu viên thì chết?", "chán sống quá, uống hết cả lọ cho xong",
])
def test_self_harm(text):
    assert is_self_harm(text)


@pytest.mark.parametrize("text", ["thuốc này có gây tử vong không", "sertralin co canh bao gi ve y nghi tu sat khong",
                                  "Tối nay tôi đi ngủ sớm"])
def test_not_self_harm(text):
    assert not is_self_harm(text)


@pytest.mark.parametrize("text", ["lỡ uống 20 viên paracetamol", "con tôi uống nhầm cả vỉ thuốc hạ sốt rồi",
                                  "Bé nhà em nuốt mấy viên colchicin của ông", "uong qua nhieu amlodipin bi tut huyet ap"])
def test_overdose_taken(text):
    assert is_overdose_taken(text)


@pytest.mark.parametrize("text", ["uống quá liều paracetamol có sao không", "nếu lỡ uống nhiều quá thì làm sao",
                                  "Cetirizin với amoxicilin uống cùng lúc được không?", "nằm viện 5 ngày"])
def test_not_overdose_taken(text):
    assert not is_overdose_taken(text)


@pytest.mark.parametrize("text", ["Bố tôi đau ngực lan ra tay trái, vã mồ hôi", "Tôi đang khó thở quá",
                                  "sau khi uống amoxicilin bị sưng môi", "Con co giật liên tục gần 10 phút"])
def test_emergency(text):
    assert is_emergency(text)


@pytest.mark.parametrize("text", ["thuốc X có gây khó thở không", "Bé 3 tuổi từng bị co giật do sốt",
                                  "Bị nổi mề đay khi uống amoxicillin thì xử trí thế nào?"])
def test_not_emergency(text):
    assert not is_emergency(text)


def test_a_sign_inside_a_known_condition_is_not_an_emergency():
    assert not is_emergency("Chồng tôi có hội chứng ngừng thở khi ngủ", has_sign=False)
