"""Paragraphs and hard lines from gaps, indents and line ends; hyphens at line ends joined again."""

from __future__ import annotations

from duocthu.book.paragraphs import CONTINUE, LINE, PARAGRAPH, Vocabulary, join_lines, line_start

from .book_helpers import line

BODY, PITCH = 10.0, 12.0
FULL_END = 550.0  # the column's right edge (book_helpers.line's default column)


def test_indent_gap_and_short_line_starts():
    full = line("một dòng đầy đến lề phải", 50, 100, x1=FULL_END)
    assert line_start(None, full, BODY, PITCH) == PARAGRAPH
    assert line_start(full, line("Đoạn mới thụt vào", 62, 112), BODY, PITCH) == PARAGRAPH
    assert line_start(full, line("Dòng danh sách", 56, 112), BODY, PITCH) == LINE
    assert line_start(full, line("Đoạn mới sau khoảng trống", 50, 118), BODY, PITCH) == PARAGRAPH
    assert line_start(full, line("tiếp tục câu", 50, 112), BODY, PITCH) == CONTINUE


def test_a_word_that_would_have_fitted_above_means_a_hard_break():
    short = line("Sốt.", 50, 100)
    assert line_start(short, line("Đau đầu.", 50, 112), BODY, PITCH) == LINE
    almost = line("gần hết dòng", 50, 100, x1=FULL_END - 20)
    assert line_start(almost, line("Paracetamol dài", 50, 112), BODY, PITCH) == CONTINUE  # would not fit


def test_justified_text_breaks_after_any_short_line():
    almost = line("gần hết dòng", 50, 100, x1=FULL_END - 20)
    assert line_start(almost, line("Paracetamol dài", 50, 112), BODY, PITCH, justified=True) == LINE


def test_ragged_text_measures_against_the_frame_seen_on_other_pages():
    narrow = line("dòng ngắn", 50, 100, column_box=(50.0, 0.0, 400.0, 800.0), x1=380)
    following = line("Tiếp", 50, 112, column_box=(50.0, 0.0, 400.0, 800.0))
    assert line_start(narrow, following, BODY, PITCH) == CONTINUE
    assert line_start(narrow, following, BODY, PITCH, right_edge=420.0) == LINE


def test_ragged_list_item_after_a_sentence_end_where_no_word_would_have_fitted():
    # a line ending a sentence near the edge: a first word of 6 characters would not have fitted after it
    above = line("tăng men gan thoáng qua khi dùng kéo dài.", 50, 100, x1=FULL_END - 20)
    labelled = line("Người suy thận: giảm nửa liều.", 50, 112)
    unlabelled = line("Buồn ngủ nhẹ ở một số người bệnh lớn tuổi.", 50, 112)
    in_list = ["Sốt.", "Thường gặp: tăng men gan thoáng qua khi dùng kéo dài."]
    assert line_start(above, labelled, BODY, PITCH, paragraph=in_list) == LINE  # a run-in label
    assert line_start(above, unlabelled, BODY, PITCH, paragraph=in_list) == LINE  # the item above was one sentence
    several = ["Sốt.", "Uống sau ăn. Chia hai lần, tăng men gan thoáng qua khi dùng kéo dài."]
    assert line_start(above, unlabelled, BODY, PITCH, paragraph=several) == CONTINUE  # an item of sentences goes on
    assert line_start(above, labelled, BODY, PITCH, paragraph=several) == LINE


def test_no_list_item_outside_a_list_in_justified_text_or_mid_sentence():
    above = line("tăng men gan thoáng qua khi dùng kéo dài.", 50, 100, x1=FULL_END - 20)
    labelled = line("Người suy thận: giảm nửa liều.", 50, 112)
    prose = ["Thường gặp: tăng men gan thoáng qua khi dùng kéo dài."]  # no hard line above: prose
    assert line_start(above, labelled, BODY, PITCH, paragraph=prose) == CONTINUE
    in_list = ["Sốt.", *prose]
    full = line("tăng men gan thoáng qua khi dùng kéo dài.", 50, 100, x1=FULL_END)
    assert line_start(full, labelled, BODY, PITCH, justified=True, paragraph=in_list) == CONTINUE
    assert line_start(above, line("giảm nửa liều ở trẻ nhỏ.", 50, 112), BODY, PITCH, paragraph=in_list) == CONTINUE
    comma = line("tăng men gan thoáng qua khi dùng kéo dài,", 50, 100, x1=FULL_END - 20)
    assert line_start(comma, labelled, BODY, PITCH, paragraph=in_list) == CONTINUE


def test_hyphen_at_a_line_end():
    vocabulary = Vocabulary([line("para-aminophenol và cyclooxygenase", 50, 100)])
    assert join_lines("dẫn chất para-", "aminophenol,", "hard", vocabulary) == "dẫn chất para-aminophenol,"
    assert join_lines("enzym cyclo-", "oxygenase", "hard", vocabulary) == "enzym cyclooxygenase"
    unknown = Vocabulary([])
    assert join_lines("hội chứng Stevens-", "Johnson", "hard", unknown) == "hội chứng Stevens-Johnson"
    assert join_lines("COX-", "2", "hard", unknown) == "COX-2"
    assert join_lines("endocanna-", "binoid", "hard", unknown) == "endocannabinoid"
    assert join_lines("N-", "acetyl", "hard", unknown) == "N-acetyl"
    assert join_lines("cân bằng acid-", "base", "soft", unknown) == "cân bằng acidbase"  # Chromium drew U+2010


def test_dash_and_space_at_a_line_end():
    assert join_lines("trong 2–", "3 ngày", "", Vocabulary([])) == "trong 2–3 ngày"
    assert join_lines("phối hợp –", "cần theo dõi", "", Vocabulary([])) == "phối hợp – cần theo dõi"
    assert join_lines("liều", "thấp", "", Vocabulary([])) == "liều thấp"
