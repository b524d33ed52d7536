"""Reading positioned lines and ruled tables with pypdfium2."""

from __future__ import annotations

from duocthu.book import layout
from duocthu.book.pdftext import TableBox, open_pdf, read_page
from duocthu.book.render import build_book
from duocthu.corpus import load_formulary

from .conftest import FIXTURE_FORMULARY, ROOT

PDF_FIXTURES = ROOT / "tests" / "fixtures" / "pdf"


def test_lines_carry_size_weight_and_indent(tmp_path):
    built = build_book(load_formulary(FIXTURE_FORMULARY), tmp_path / "b.pdf")
    document = open_pdf(built.path)
    try:
        page = read_page(document, built.monographs["thuoc_a"].pages[0] - 1)
    finally:
        document.close()
    title = next(ln for ln in page.lines if ln.text == "Thuốc A")
    heading = next(ln for ln in page.lines if ln.text == "Chỉ định")
    first, second = (ln for ln in page.lines if ln.text in ("Sốt.", "Đau nhẹ đến vừa."))
    assert title.bold and title.size == layout.TITLE_SIZE and heading.bold and heading.size == layout.HEADING_SIZE
    assert not first.bold and first.size == layout.BODY_SIZE
    assert round(first.x0 - layout.MARGIN_LEFT) in range(11, 14) and round(second.x0 - layout.MARGIN_LEFT) in range(5, 8)
    assert all(m.baseline < 60 or m.top > 780 for m in page.margin_lines)


def test_ruled_table_cells(tmp_path):
    built = build_book(load_formulary(FIXTURE_FORMULARY), tmp_path / "b.pdf")
    first, last = built.monographs["thuoc_b"].sections["tuong_tac_thuoc"]
    document = open_pdf(built.path)
    try:
        tables = [t for p in range(first, last + 1) for t in read_page(document, p - 1).tables]
    finally:
        document.close()
    assert len(tables) == 1 and isinstance(tables[0], TableBox)
    source = next(s for s in load_formulary(FIXTURE_FORMULARY)[1].section("tuong_tac_thuoc").segments if hasattr(s, "rows"))
    expected = [[c.strip() for c in row.strip("|").split("|")] for row in source.rows.split("\n") if "---" not in row]
    assert [list(r) for r in tables[0].rows] == expected


def test_a_row_the_page_end_cut_is_a_row_of_its_own(tmp_path):
    """Chromium draws no rule under a row the page end cuts: its cell borders just stop at the foot."""
    from reportlab.pdfgen import canvas

    path = tmp_path / "cut.pdf"
    page = canvas.Canvas(str(path), pagesize=(600, 800), invariant=1)
    page.setLineWidth(0.6)
    for y in (700, 680, 660):  # the header's top, the rules under the header and under the first row
        page.line(50, y, 300, y)
    for x in (50, 150, 300):  # the vertical rules run on to y = 620: the last row is cut there
        page.line(x, 700, x, 620)
    for text, x, y in (("Thuoc", 55, 686), ("Xu tri", 155, 686), ("Amiodaron", 55, 666), ("Giam lieu", 155, 666),
                       ("Clopidogrel", 55, 646), ("Theo doi", 155, 646), ("chay mau", 155, 632)):
        page.drawString(x, y, text)  # Helvetica has no Vietnamese letters
    page.save()
    document = open_pdf(path)
    try:
        (table,) = read_page(document, 0).tables
    finally:
        document.close()
    assert table.rows == (("Thuoc", "Xu tri"), ("Amiodaron", "Giam lieu"), ("Clopidogrel", "Theo doi chay mau"))
    assert table.open_bottom and not table.open_top


def test_two_columns_are_read_left_then_right():
    document = open_pdf(PDF_FIXTURES / "two_column.pdf")
    try:
        page = read_page(document, 0)
    finally:
        document.close()
    xs = [ln.x0 for ln in page.lines]
    middle = page.width / 2
    switch = next(i for i, x in enumerate(xs) if x > middle)
    assert all(x < middle for x in xs[:switch]) and all(x > middle for x in xs[switch:])


def test_scanned_page_has_no_text_but_an_image():
    document = open_pdf(PDF_FIXTURES / "image_only.pdf")
    try:
        page = read_page(document, 2)
    finally:
        document.close()
    assert not page.has_text and page.images == 1 and page.margin_lines[0].text == "103"
