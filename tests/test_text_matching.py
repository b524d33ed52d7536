"""Accent-aware word matching: accents count where the user typed them, wherever the tone mark sits."""

from __future__ import annotations

from duocthu.text import find_phrase_in_book_words, token_matches, words


def test_a_tone_mark_on_either_vowel_is_the_same_word():
    assert token_matches("hoà", "hòa") and token_matches("thuỷ", "thủy")
    assert not token_matches("lâu", "lậu") and token_matches("lau", "lậu")


def test_a_user_who_types_accents_meant_the_unaccented_word():
    book = words("Bệnh thận do đái tháo đường")
    assert find_phrase_in_book_words(book, words("bệnh than")) == -1
    assert find_phrase_in_book_words(book, words("benh than")) == 0
    assert find_phrase_in_book_words(book, words("bệnh thận")) == 0


def test_a_question_typed_with_accents_means_its_unaccented_words_as_typed():
    from duocthu.text import typed_with_accents
    assert typed_with_accents("Đang bị ho thì uống thuốc gì?") and not typed_with_accents("dang bi ho thi uong gi")
    book = words("Hỗ trợ điều trị")
    assert find_phrase_in_book_words(book, words("ho"), typed_with_accents=True) == -1
    assert find_phrase_in_book_words(book, words("ho")) == 0


def test_a_turn_splits_at_any_full_stop_not_only_before_a_capital():
    from duocthu.text import turn_sentences

    assert turn_sentences("mẹ tôi đang uống warfarin. warfarin là thuốc gì?") == ["mẹ tôi đang uống warfarin",
                                                                              " warfarin là thuốc gì"]
