"""Reading order on pages made by hand: columns, titles between them, and where a band must not be cut."""

from __future__ import annotations

from duocthu.book.readingorder import column_starts, order_page, read_across

from .book_helpers import column, fragment, raw_page

LEFT, RIGHT = 50.0, 310.0  # two columns 240 pt wide with a 20 pt gutter
FULL = "x" * 96  # a line across the whole page (single column)
HALF = "y" * 44  # a line across one column, ending 17 pt before the next one


def _texts(fragments):
    return [ln.text for ln in order_page(raw_page(fragments), set()).lines]


def _column(prefix, count, x, top, pitch=12.0):
    return column([f"{prefix}{i:02d} {HALF}" for i in range(count)], x, top, pitch)


def test_two_columns_read_left_then_right():
    page = _column("L", 8, LEFT, 100) + _column("R", 8, RIGHT, 100)
    assert [t.split()[0] for t in _texts(page)] == [f"L{i:02d}" for i in range(8)] + [f"R{i:02d}" for i in range(8)]


def test_paragraph_gaps_level_in_both_columns_do_not_cut_the_columns():
    gap = 6.0  # both columns break a paragraph at the same height
    left = _column("L", 4, LEFT, 100) + _column("M", 4, LEFT, 148 + gap)
    right = _column("R", 4, RIGHT, 100) + _column("S", 4, RIGHT, 148 + gap)
    order = [t.split()[0] for t in _texts(left + right)]
    assert order[:8] == ["L00", "L01", "L02", "L03", "M00", "M01", "M02", "M03"]


def test_left_aligned_title_after_an_unbalanced_two_column_end_comes_after_both_columns():
    """The right column of drug A ends early; B's title is set at the left, then B in one column."""
    a_left = _column("AL", 20, LEFT, 100)  # down to 328
    a_right = _column("AR", 6, RIGHT, 100)  # down to 160
    title = [fragment("THUỐC B", LEFT, 370, size=14, bold=True)]
    b_text = column([f"B{i:02d} {FULL}" for i in range(5)], LEFT, 400)
    order = [t.split()[0] for t in _texts(a_left + a_right + title + b_text)]
    assert order.index("AR05") < order.index("THUỐC") < order.index("B00")
    assert order.index("AL19") < order.index("AR00")


def test_left_aligned_title_between_two_column_monographs():
    """A's columns, a hole in A's right column, B's title at the left, then B's own two columns."""
    a = _column("AL", 12, LEFT, 100) + _column("AR", 4, RIGHT, 100)
    title = [fragment("THUỐC B", LEFT, 270, size=14, bold=True)]
    b = _column("BL", 6, LEFT, 300) + _column("BR", 6, RIGHT, 300)
    order = [t.split()[0] for t in _texts(a + title + b)]
    assert order.index("AR03") < order.index("THUỐC") < order.index("BL00") < order.index("BR00")


def test_title_inside_a_continuous_column_flow_stays_in_its_column():
    """Dictionary layout: A ends and B starts in the left column; B goes on at the top of the right one."""
    left = _column("A", 10, LEFT, 100) + [fragment("THUỐC B", LEFT, 240, size=12, bold=True)]
    left += _column("B", 18, LEFT, 262)
    right = _column("C", 30, RIGHT, 100)  # B's text, continued
    order = [t.split()[0] for t in _texts(left + right)]
    assert order.index("A09") < order.index("THUỐC") < order.index("B17") < order.index("C00")


def test_balanced_columns_then_a_title_below_both():
    a = _column("AL", 5, LEFT, 100) + _column("AR", 5, RIGHT, 100)
    title = [fragment("THUỐC B", LEFT, 190, size=14, bold=True)]
    b = column([f"B{i:02d} {FULL}" for i in range(3)], LEFT, 215)
    order = [t.split()[0] for t in _texts(a + title + b)]
    assert order == [*(f"AL{i:02d}" for i in range(5)), *(f"AR{i:02d}" for i in range(5)), "THUỐC", "B00", "B01", "B02"]


def test_a_justified_line_with_wide_word_gaps_stays_one_line():
    wide = fragment("Thuốc B ức chế enzym chuyển làm giảm", LEFT, 100, gap=1.4)  # cut into fragments below
    pieces = [fragment(w, x, 100) for w, x in _split_words(wide)]
    rest = column([FULL] * 3, LEFT, 112)
    lines = order_page(raw_page(pieces + rest), set()).lines
    assert lines[0].text == "Thuốc B ức chế enzym chuyển làm giảm" and len(lines) == 4


def test_lines_carry_their_column():
    page = _column("L", 4, LEFT, 100) + _column("R", 4, RIGHT, 100)
    lines = order_page(raw_page(page), set()).lines
    assert lines[0].column[0] == LEFT and lines[-1].column[0] == RIGHT
    assert lines[0].column[2] < RIGHT


def _end_of_columns_then_title():
    """Top of a page: the left column's last line beside the right column's last heading, one more line
    in the right column, then the next drug's title and one-column text."""
    return [fragment("khỏi tuần hoàn.", LEFT, 100), fragment("18. Thông tin quy chế", RIGHT, 100, bold=True),
            fragment("Thuốc kê đơn.", RIGHT, 115), fragment("THUỐC B", LEFT, 145, size=14, bold=True),
            *column([f"B{i:02d} {FULL}" for i in range(3)], LEFT, 165)]


def test_one_line_beside_a_column_is_one_line_without_the_books_grid():
    """Alone on its page, a single line beside another is no evidence of columns (a wide gap is read across)."""
    assert _texts(_end_of_columns_then_title())[0] == "khỏi tuần hoàn. 18. Thông tin quy chế"


def test_a_single_line_beside_a_column_of_the_books_grid_is_read_as_two_columns():
    raws = [raw_page(_column("L", 8, LEFT, 100) + _column("R", 8, RIGHT, 100), n) for n in (1, 2)]
    raws.append(raw_page(_end_of_columns_then_title(), 3))
    first = [order_page(raw, set()) for raw in raws]
    starts = column_starts(first)
    assert starts == frozenset({RIGHT})
    assert [read_across(page, raw, starts) for page, raw in zip(first, raws, strict=True)] == [False, False, True]
    lines = order_page(raws[2], set(), starts).lines
    assert [ln.text for ln in lines][:4] == ["khỏi tuần hoàn.", "18. Thông tin quy chế", "Thuốc kê đơn.", "THUỐC B"]


def test_a_column_seen_on_one_page_only_is_not_the_books_grid():
    assert column_starts([order_page(raw_page(_column("L", 8, LEFT, 100) + _column("R", 8, RIGHT, 100)), set())]) \
        == frozenset()


def _split_words(fragment_):
    words, start, text = [], None, ""
    for char in fragment_.chars + [None]:
        if char is None or char.text == " ":
            if text:
                words.append((text, start))
            text, start = "", None
            continue
        start = char.left if start is None else start
        text += char.text
    return words
