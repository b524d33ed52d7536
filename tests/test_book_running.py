"""Running heads and feet are found by their repetition across pages, never by a fixed margin."""

from __future__ import annotations

from duocthu.book.running import margin_fragments, page_number_text

from .book_helpers import column, fragment, raw_page


def _page(number, head=None, foot=None, first_line="Chỉ định", body_top=80.0):
    fragments = []
    if head is not None:
        fragments += [fragment(head, 50, 40, size=8), fragment(str(number + 100), 520, 40, size=8)]
    fragments += column([first_line, *(f"dòng {number} {i} của trang" for i in range(30))], 50, body_top)
    if foot is not None:
        fragments.append(fragment(foot, 150, 780, size=7))
    return raw_page(fragments, number)


def test_heads_and_feet_repeat_across_pages():
    pages = [_page(n, head="Paracetamol" if n < 4 else "Warfarin", foot="bản demo, không dùng cho lâm sàng")
             for n in range(1, 7)]
    margins = margin_fragments(pages)
    for page in pages:
        texts = {page.fragments[i].text for i in margins[page.number]}
        assert texts == {page.fragments[0].text, str(page.number + 100), "bản demo, không dùng cho lâm sàng"}


def test_a_heading_at_the_same_place_on_every_page_stays_in_the_text():
    """Every monograph starts on a new page with "Tên chung quốc tế" at the same height: not a running head."""
    pages = [_page(n, head=None, first_line="TÊN CHUNG QUỐC TẾ", body_top=60) for n in range(1, 7)]
    assert margin_fragments(pages) == {}


def test_a_lone_page_number_is_a_running_line_even_on_one_page():
    page = raw_page([fragment("— 12 —", 280, 790, size=8), *column(["Thận trọng", "Người suy gan."], 50, 80)])
    assert margin_fragments([page]) == {1: {0}}


def test_page_number_texts():
    assert all(page_number_text(t) for t in ("245", "— 12 —", "Trang 7", "tr. 3", "- 4 -"))
    assert not any(page_number_text(t) for t in ("2. Mã ATC", "Paracetamol 160", "500 mg"))
