"""The condition lexicon: the synonym table plus the corpus's condition phrases, matched on whole words."""

from __future__ import annotations

import pytest

from duocthu.understanding.conditions import (
    Condition,
    ConditionLexicon,
    build_lexicon,
    corpus_condition_phrases,
)
from tests.understanding_helpers import demo_entities


def labels(text):
    return [m.condition.label for m in demo_entities().lexicon.find(text)]


@pytest.mark.parametrize("text, label", [
    ("người bị suyễn", "hen phế quản"), ("tiền sử hen", "hen phế quản"), ("bị tiểu đường", "đái tháo đường"),
    ("đau bao tử do loét", "loét dạ dày tá tràng"), ("suy than nang", "suy thận nặng"), ("bị gout", "bệnh gút"),
    ("bệnh nhân nhược cơ", "nhược cơ"), ("hay nổi mề đay", "mày đay"),
    ("nhiễm trùng đường tiểu", "nhiễm khuẩn đường tiết niệu"),
])
def test_people_s_words_find_the_condition(text, label):
    assert label in labels(text)


def test_longest_phrase_wins_and_accents_matter():
    assert labels("suy thận nặng") == ["suy thận nặng"]
    assert labels("hen phế quản") == ["hen phế quản"]
    assert "hen phế quản" not in labels("hẹn gặp bác sĩ")  # typed with other diacritics


def test_corpus_phrases_are_conditions_not_filler():
    phrases = corpus_condition_phrases(["Người có tiền sử loét dạ dày tá tràng tiến triển; dùng để hạ sốt."])
    assert phrases == ["loét dạ dày tá tràng tiến triển"]


def test_corpus_phrases_know_their_sections():
    lexicon = build_lexicon([("chi_dinh", "Viêm tai giữa cấp."), ("chong_chi_dinh", "Rối loạn chuyển hóa ure.")],
                            synonyms=[])
    kinds = {c.label: c.patient_condition for c in lexicon.conditions}
    assert kinds == {"viêm tai giữa cấp": False, "rối loạn chuyển hóa ure": True}


def test_severe_forms_are_narrower():
    lexicon = ConditionLexicon([Condition("suy thận", ("suy thận",)),
                                Condition("suy thận nặng", ("suy thận nặng", "chạy thận"), broader="suy thận")])
    assert lexicon.phrases_for("suy thận") == ("suy thận", "suy thận nặng", "chạy thận")
    assert [c.label for c in lexicon.narrower_of(lexicon.get("suy thận"))] == ["suy thận nặng"]
