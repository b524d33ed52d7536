"""The import report lists what a person must look at, most urgent first."""

from __future__ import annotations

from duocthu.book.report import ImportReport


def test_clean_report():
    report = ImportReport(pages=3, monographs=1, printed_numbers_found=True)
    assert report.clean and report.render().endswith("nothing needs a person's attention")
    assert "printed = file page +0" in report.render()


def test_every_problem_is_listed():
    report = ImportReport(pages=5, needs_ocr=[4], unknown_headings=[(12, "Ghi chú")],
                          empty_sections=[("Thuốc X", "Thận trọng")], front_matter_pages=[1, 2])
    text = report.render()
    assert not report.clean
    assert text.index("NEEDS OCR") < text.index("unknown headings") < text.index("empty sections")
    assert "file page 4" in text and "tr. 12: 'Ghi chú'" in text and "Thuốc X: Thận trọng" in text
    assert "file pages 1–2" in text and "no printed page numbers found" in text


def test_exit_status_tells_warnings_from_failure():
    assert ImportReport(monographs=3).exit_status == 0
    assert ImportReport(monographs=3, near_miss_headings=[(4, "Thời kỳ có thai", "Thời kỳ mang thai", 81.2)]).exit_status == 1
    assert ImportReport(monographs=0).exit_status == 2
    assert ImportReport(monographs=3, invalid_files=["a.md:1: missing section"]).exit_status == 2


def test_where_every_line_went_and_what_was_close():
    report = ImportReport(pages=4, monographs=1, line_counts={"monographs": 90, "front matter": 5, "not placed": 2},
                          not_placed=[(3, "Phụ lục"), (3, "Ghi chú")], back_matter_pages=[4],
                          near_miss_headings=[(2, "Thời kỳ có thai", "Thời kỳ mang thai", 81.2)],
                          continued_after_title=[(3, "Thuốc A", "Thuốc B")],
                          approximate_headings=[(1, "Tương kị", "Tương kỵ", 87.5)], joined_tables=[("Thuốc A", 2, 3)])
    text = report.render()
    assert "lines: 90 monographs, 5 front matter, 2 not placed" in text
    assert "tr. 3: 'Phụ lục'" in text and "back matter after the last monograph" in text
    assert "'Thời kỳ có thai' ~ 'Thời kỳ mang thai' (81)" in text
    assert "tr. 3: Thuốc A → read into Thuốc B" in text
    assert "'Tương kị' → 'Tương kỵ' (88)" in text and "Thuốc A: tr. 2 + tr. 3" in text
    assert text.index("goes on after") < text.index("not placed —") < text.index("near-miss")
