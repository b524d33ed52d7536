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
