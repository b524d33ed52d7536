"""The typeset demo book: deterministic, alphabetical, and the committed pages are its pages."""

from __future__ import annotations

import hashlib

import pypdfium2 as pdfium
import pytest

from duocthu.book import layout
from duocthu.book.frontmatter import mismatches
from duocthu.book.pdftext import open_pdf, read_pages
from duocthu.book.render import book_order, build_book
from duocthu.corpus import load_formulary

from .conftest import FIXTURE_FORMULARY


def _page_text(path, number):
    document = pdfium.PdfDocument(str(path))
    try:
        return " ".join(document[number - 1].get_textpage().get_text_range().split())
    finally:
        document.close()


@pytest.mark.slow  # reads the whole demo book, typeset once per session (~7 s)
def test_committed_pages_match_the_built_book(demo_book):
    monographs, built = demo_book
    stale = mismatches(monographs, built)
    assert not stale, (
        f"{len(stale)} monographs carry pages that are not those of the built book "
        f"(first: {stale[0].path.name}). A content edit moves pages: run "
        "`duocthu book build --update-pages` and commit the front matter it rewrites."
    )


def test_build_is_deterministic(tmp_path):
    monographs = load_formulary(FIXTURE_FORMULARY)
    first = build_book(monographs, tmp_path / "a.pdf")
    second = build_book(monographs, tmp_path / "b.pdf")
    digest = [hashlib.sha256(p.read_bytes()).hexdigest() for p in (first.path, second.path)]
    assert digest[0] == digest[1]
    assert first.monographs["thuoc_a"].sections == second.monographs["thuoc_a"].sections


@pytest.mark.slow  # reads the whole demo book, typeset once per session (~7 s)
def test_cover_says_demo_and_not_for_clinical_use(demo_book):
    _, built = demo_book
    cover = _page_text(built.path, 1)
    assert "KHÔNG PHẢI DƯỢC THƯ QUỐC GIA VIỆT NAM" in cover and "KHÔNG DÙNG CHO LÂM SÀNG" in cover
    assert "not for clinical use" in cover


@pytest.mark.slow  # reads the whole demo book, typeset once per session (~7 s)
def test_monographs_are_alphabetical_and_pages_increase(demo_book):
    monographs, built = demo_book
    ordered = book_order(monographs)
    firsts = [built.monographs[m.drug_id].pages[0] for m in ordered]
    assert firsts == sorted(firsts) and firsts[0] == 2
    assert built.page_count >= max(p.pages[1] for p in built.monographs.values())
    for pages in built.monographs.values():
        assert set(pages.sections) and all(pages.pages[0] <= a <= b <= pages.pages[1] for a, b in pages.sections.values())


@pytest.mark.slow  # reads the whole demo book, typeset once per session (~7 s)
def test_running_head_names_the_drug_and_the_page(demo_book):
    monographs, built = demo_book
    para = built.monographs["paracetamol"]
    document = open_pdf(built.path)
    try:
        # running lines are known by their repetition: read the page with its neighbours
        pages = read_pages(document, range(para.pages[1] - 2, para.pages[1] + 1))
        margins = [line.text for line in pages[1].margin_lines]
    finally:
        document.close()
    page = str(para.pages[1])
    # The number sits on the outer edge: left of the running head on an even page, right on an odd one.
    head = [page, "Paracetamol"] if para.pages[1] % 2 == 0 else ["Paracetamol", page]
    assert margins == [*head, layout.FOOTER_TEXT]


@pytest.mark.slow  # reads the whole demo book, typeset once per session (~7 s)
def test_quarantined_table_is_visibly_marked(demo_book):
    monographs, built = demo_book
    first, last = built.monographs["warfarin"].sections["tuong_tac_thuoc"]
    text = "".join(_page_text(built.path, p) for p in range(first, last + 1))
    assert layout.QUARANTINE_LABEL in text and "Bảng: Các thuốc làm tăng tác dụng chống đông của warfarin" in text
    first, last = built.monographs["insulin"].sections["duoc_dong_hoc"]
    text = "".join(_page_text(built.path, p) for p in range(first, last + 1))
    assert "Bảng: Thời gian tác dụng" in text and layout.QUARANTINE_LABEL not in text  # a checked table


def test_vietnamese_text_survives_the_font(tmp_path):
    built = build_book(load_formulary(FIXTURE_FORMULARY), tmp_path / "b.pdf")
    text = _page_text(built.path, built.monographs["thuoc_a"].pages[0])
    assert "Tên chung quốc tế" in text and "Thuốc giảm đau, hạ sốt thử nghiệm." in text
