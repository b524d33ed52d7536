"""The importer's structure on pages made by hand: titles, headings, tables joined, lines accounted for, flags."""

from __future__ import annotations

from duocthu.book.importer import printed_number, structure
from duocthu.book.pagetypes import PageText, TableBox
from duocthu.book.report import ImportReport

from .book_helpers import line

LEFT_COLUMN = (50.0, 80.0, 290.0, 700.0)
RIGHT_COLUMN = (310.0, 80.0, 550.0, 300.0)


def _monograph(name, top, x=50.0, column_box=(50.0, 0.0, 550.0, 800.0), last="Hết câu.", page=1):
    """Lines of a small monograph from baseline ``top``: a title, two sections, some text."""
    lines = [line(name, x, top, size=15, bold=True, column_box=column_box, page=page),
             line("Tên chung quốc tế", x, top + 20, bold=True, column_box=column_box, page=page),
             line(f"{name} (tên khác).", x, top + 32, column_box=column_box, page=page),
             line("Chỉ định", x, top + 50, bold=True, column_box=column_box, page=page),
             line("Sốt.", x, top + 62, column_box=column_box, page=page),
             line(last, x, top + 74, column_box=column_box, page=page)]
    return lines


def _page(items, number=1):
    return PageText(number, 600.0, 800.0, tuple(items), (), 0, 100)


def _run(pages):
    report = ImportReport()
    return structure(pages, report, 0), report


def test_titles_sections_and_lines_accounted_for():
    monographs, report = _run([_page(_monograph("Thuốc A", 100) + _monograph("Thuốc B", 300))])
    assert [m.name for m in monographs] == ["Thuốc A", "Thuốc B"]
    assert [s.key for s in monographs[0].sections] == ["ten_chung_quoc_te", "chi_dinh"]
    assert monographs[0].sections[1].parts == [["Sốt.", "Hết câu."]]
    assert report.line_counts == {"running heads and feet": 0, "monographs": 12}


def test_a_prominent_line_no_heading_follows_ends_the_monograph():
    index = [line("Bảng tra cứu", 50, 500, size=15, bold=True, page=3), line("Thuốc A, 1", 50, 520, page=3)]
    middle = [line("Phụ lục", 50, 200, size=15, bold=True, page=2), line("Ghi chú giữa sách", 50, 220, page=2)]
    _, report = _run([_page(_monograph("Thuốc A", 100)), _page(middle, 2),
                      _page(_monograph("Thuốc B", 100, page=3) + index, 3)])
    assert report.not_placed == [(2, "Phụ lục"), (2, "Ghi chú giữa sách")]
    assert report.back_matter_pages == [3] and report.line_counts["back matter"] == 2
    assert report.exit_status == 1 and "not placed" in report.render()


def test_text_above_a_new_title_read_after_it_is_flagged():
    """The reader got it wrong: A's right-column tail, above B's title, comes after B's first section."""
    a_left = _monograph("Thuốc A", 100, column_box=LEFT_COLUMN, last="và tiếp tục ở cột")
    b = _monograph("Thuốc B", 400, column_box=LEFT_COLUMN)
    tail = [line("bên phải của thuốc A.", 310, 100, column_box=RIGHT_COLUMN)]
    _, report = _run([_page(a_left + b + tail)])
    assert report.continued_after_title == [(1, "Thuốc A", "Thuốc B")]
    assert not report.clean and "goes on after the next drug's title" in report.render()


def test_a_column_of_the_new_drug_read_after_its_title_is_not_flagged():
    """Dictionary layout: B's text goes on at the top of the right column, above B's title."""
    a = _monograph("Thuốc A", 100, column_box=LEFT_COLUMN)
    b = _monograph("Thuốc B", 400, column_box=LEFT_COLUMN, last="Đau răng và")
    going_on = [line("đau đầu nhẹ.", 310, 100, column_box=RIGHT_COLUMN)]
    _, report = _run([_page(a + b + going_on)])
    assert report.continued_after_title == []


def test_a_table_split_over_two_pages_is_joined_and_its_header_dropped():
    rows = (("Thuốc", "Xử trí"), ("Amiodaron", "Giảm liều"))
    first = TableBox(1, (50, 600, 550, 760), rows, (50.0, 200.0, 550.0))
    second = TableBox(2, (50, 80, 550, 120), (("Thuốc", "Xử trí"), ("Fluconazol", "Theo dõi INR")), (50.0, 200.0, 550.0))
    page_one = _monograph("Thuốc A", 100) + [line("Bảng 1. Tương tác", 50, 590), first]
    monographs, report = _run([_page(page_one), _page([second], 2)])
    table = monographs[0].sections[-1].parts[-1]
    assert table.caption == "Tương tác" and table.rows == (*rows, ("Fluconazol", "Theo dõi INR"))
    assert table.continued == [(2, (50, 80, 550, 120))] and report.tables == 1
    assert report.joined_tables == [("Thuốc A", 1, 2)]


def test_a_row_cut_by_the_page_end_is_one_row_again():
    """The last row of page 1 has no rule under it (open): its cells go on in the first row after the header."""
    header = ("Thuốc", "Cơ chế")
    first = TableBox(1, (50, 600, 550, 760), (header, ("Amiodaron", "Ức chế CYP2C9"), ("Ciprofloxacin,", "Ức chế")),
                     (50.0, 200.0, 550.0), open_bottom=True)
    second = TableBox(2, (50, 80, 550, 140), (header, ("clarithromycin", "chuyển hóa"), ("Fluconazol", "Ức chế")),
                      (50.0, 200.0, 550.0))
    page_one = _monograph("Thuốc A", 100) + [line("Bảng 1. Tương tác", 50, 590), first]
    monographs, _ = _run([_page(page_one), _page([second], 2)])
    table = monographs[0].sections[-1].parts[-1]
    assert table.rows == (header, ("Amiodaron", "Ức chế CYP2C9"), ("Ciprofloxacin, clarithromycin", "Ức chế chuyển hóa"),
                          ("Fluconazol", "Ức chế"))
    assert not table.open_end


def test_no_monograph_means_failed():
    _, report = _run([_page([line("Lời nói đầu", 50, 100), line("Sách này …", 50, 112)])])
    assert report.monographs == 0 and report.exit_status == 2 and report.front_matter_pages == [1]


def test_without_a_title_the_headings_and_near_misses_found_are_the_hint():
    """A book whose titles are not recognised: what matched the catalogue is listed, not only "nothing found"."""
    lines = [line("Chỉ định", 50, 100, bold=True), line("Sốt và đau nhẹ đến vừa ở người lớn và trẻ em.", 50, 112),
             line("Thời kỳ có thai", 50, 130, bold=True), line("Không dùng trong ba tháng đầu của thai kỳ.", 50, 142)]
    _, report = _run([_page(lines)])
    assert report.headings_outside == [(1, "Chỉ định")]
    assert [(t, best) for _, t, best, _ in report.near_miss_headings] == [("Thời kỳ có thai", "Thời kỳ mang thai")]
    assert report.exit_status == 2


def test_printed_page_numbers_in_running_lines():
    assert [printed_number(t) for t in ("245", "— 12 —", "DƯỢC THƯ MẪU · 249", "Dược thư mẫu — trang 7",
                                        "Trang 3", "1001", "12 | Paracetamol", "Paracetamol")] == \
        [245, 12, 249, 7, 3, 1001, 12, None]
