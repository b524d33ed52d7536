"""The page image for VERIFY_PDF: rendered with pypdfium2, the table's box outlined, cached."""

from __future__ import annotations

import pytest
from PIL import Image

from duocthu.book.pages import file_page, page_png, table_region
from duocthu.book.pdftext import PdfReadError
from duocthu.book.render import build_book
from duocthu.corpus import load_formulary
from duocthu.errors import DuocthuError

from .conftest import DEMO_FORMULARY, FIXTURE_FORMULARY, ROOT


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    monographs = [m for m in load_formulary(DEMO_FORMULARY) if m.drug_id in ("warfarin", "paracetamol")]
    return build_book(monographs, tmp_path_factory.mktemp("book") / "book.pdf")


def test_page_png_renders_and_caches(book, tmp_path):
    page = book.monographs["paracetamol"].pages[0]
    path = page_png(book.path, page, cache_dir=tmp_path)
    with Image.open(path) as image:
        assert image.size == (893, 1263)  # A4 at 1.5 px/pt
    mtime = path.stat().st_mtime_ns
    assert page_png(book.path, page, cache_dir=tmp_path) == path and path.stat().st_mtime_ns == mtime
    assert page_png(book.path, page, cache_dir=tmp_path, scale=1.0) != path


def test_table_box_is_found_and_outlined(book, tmp_path):
    pages = book.monographs["warfarin"].sections["tuong_tac_thuoc"]
    found = table_region(book.path, tuple(range(pages[0], pages[1] + 1)),
                         "Các thuốc làm tăng tác dụng chống đông của warfarin")
    assert found is not None
    page, (x0, top, x1, bottom) = found
    assert 50 < x0 < x1 < 545 and 60 < top < bottom < 790
    with Image.open(page_png(book.path, page, (x0, top, x1, bottom), cache_dir=tmp_path)) as image:
        red = image.getpixel((round((x0 + x1) / 2 * 1.5), round((top - 3) * 1.5)))
    assert red[0] > 150 and red[1] < 90 and red[2] < 90


def test_no_table_on_the_page(book):
    first = book.monographs["paracetamol"].pages[0]
    assert table_region(book.path, (first,), "x") is None and table_region(book.path, ()) is None


def test_missing_book_and_page_out_of_range(book, tmp_path):
    with pytest.raises(PdfReadError, match="duocthu book build"):
        page_png(tmp_path / "none.pdf", 1, cache_dir=tmp_path)
    with pytest.raises(DuocthuError, match="not in"):
        page_png(book.path, 999, cache_dir=tmp_path)


def test_printed_page_numbers_map_to_the_file(tmp_path):
    scanned = ROOT / "tests" / "fixtures" / "pdf" / "image_only.pdf"
    assert file_page(scanned, 101) == 1 and file_page(scanned, 104) == 4
    build = build_book(load_formulary(FIXTURE_FORMULARY), tmp_path / "b.pdf")
    assert file_page(build.path, 2) == 2
