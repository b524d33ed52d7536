"""``import-pdf``: the round trip through the demo book, and hostile PDFs made by fixtures/pdf/make_fixtures.py."""

from __future__ import annotations

import pytest

from duocthu.book.importer import display_name, drug_id_for
from duocthu.book.pdfimport import REPORT_NAME, import_pdf, silent_progress
from duocthu.book.pdftext import PdfReadError
from duocthu.book.roundtrip import compare
from duocthu.chunker import chunk_monograph
from duocthu.corpus import load_formulary
from duocthu.errors import DuocthuError

from .conftest import FIXTURE_FORMULARY, ROOT

PDF_FIXTURES = ROOT / "tests" / "fixtures" / "pdf"


def _import(pdf, out, **kwargs):
    return import_pdf(pdf, out, progress=silent_progress, **kwargs)


@pytest.fixture(scope="module")
def round_trip(demo_book, tmp_path_factory):
    original, built = demo_book
    result = _import(built.path, tmp_path_factory.mktemp("round-trip") / "imported")
    return original, load_formulary(result.out), result, built


@pytest.mark.slow  # imports the whole typeset demo book (~20 s with the build)
def test_round_trip_recovers_every_monograph_section_sentence_table_and_page(round_trip):
    original, imported, result, built = round_trip
    report = compare(original, imported)
    assert not report.missing_monographs and not report.extra_monographs, report.summary()
    assert not report.missing_sections, report.summary()
    assert report.sentence_recall >= 0.99, report.summary()
    assert report.tables == report.tables_found == 9, report.summary()
    assert not report.page_differences, report.summary()
    assert result.report.pages == built.page_count and result.report.front_matter_pages == [1]
    assert result.report.clean, result.report.render()


@pytest.mark.slow  # imports the whole typeset demo book (~20 s with the build)
def test_round_trip_chunks_match_but_every_table_is_quarantined(round_trip):
    original, imported, _, _ = round_trip
    ours = {c.doc_id: c for m in original for c in chunk_monograph(m)}
    theirs = {c.doc_id: c for m in imported for c in chunk_monograph(m)}
    assert set(ours) == set(theirs)
    blocks = [d for d, c in theirs.items() if c.chunk_kind == "block"]
    assert blocks and all(theirs[d].requires_visual_check for d in blocks)
    same_text = sum(ours[d].text == theirs[d].text for d in ours)
    assert same_text / len(ours) >= 0.99
    assert all(ours[d].pages == theirs[d].pages and ours[d].source_refs == theirs[d].source_refs for d in ours)


@pytest.mark.slow  # imports the whole typeset demo book (~20 s with the build)
def test_imported_table_records_page_and_box(round_trip):
    _, imported, _, built = round_trip
    warfarin = next(m for m in imported if m.drug_id == "warfarin")
    table = next(s for s in warfarin.section("tuong_tac_thuoc").segments if hasattr(s, "quarantined"))
    assert table.quarantined and table.source_note.startswith("nguồn: tr. ")
    page = int(table.source_note.split("tr. ")[1].split(",")[0])
    first, last = built.monographs["warfarin"].sections["tuong_tac_thuoc"]
    assert first <= page <= last and "khung" in table.source_note


def test_two_column_pages_read_column_by_column(tmp_path):
    result = _import(PDF_FIXTURES / "two_column.pdf", tmp_path / "out")
    report = compare(load_formulary(FIXTURE_FORMULARY), load_formulary(result.out))
    assert report.monographs == 2 and not report.missing_sections and report.sentence_recall == 1.0, report.summary()


def test_heading_split_across_lines_and_unknown_heading_reported(tmp_path):
    result = _import(PDF_FIXTURES / "split_heading.pdf", tmp_path / "out")
    report = compare(load_formulary(FIXTURE_FORMULARY), load_formulary(result.out))
    assert not report.missing_sections and report.sentence_recall == 1.0, report.summary()
    assert [text for _, text in result.report.unknown_headings] == ["Lưu ý riêng của nhà sản xuất"] * 2
    assert "unknown headings" in (result.out / REPORT_NAME).read_text(encoding="utf-8")


def test_image_only_page_needs_ocr_and_printed_numbers_are_used(tmp_path):
    result = _import(PDF_FIXTURES / "image_only.pdf", tmp_path / "out")
    assert result.report.needs_ocr == [3] and not result.report.clean
    assert "NEEDS OCR" in result.report.render() and result.report.page_offset == 100
    imported = load_formulary(result.out)
    assert [m.source_pages[0] for m in imported] == [101, 104]


@pytest.mark.parametrize("name, message", [("encrypted.pdf", "encrypted"), ("broken.pdf", "not a readable PDF")])
def test_broken_or_encrypted_pdf_writes_nothing(tmp_path, name, message):
    with pytest.raises(PdfReadError, match=message):
        _import(PDF_FIXTURES / name, tmp_path / "out")
    assert list(tmp_path.iterdir()) == []


def test_refuses_a_non_empty_folder_unless_forced(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.md").write_text("x", encoding="utf-8")
    with pytest.raises(DuocthuError, match="not empty"):
        _import(PDF_FIXTURES / "two_column.pdf", out)
    result = _import(PDF_FIXTURES / "two_column.pdf", out, force=True)
    assert sorted(p.name for p in result.out.iterdir()) == [REPORT_NAME, "thuoc_a.md", "thuoc_b.md"]
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # no staging folder left


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(PdfReadError, match="no such file"):
        _import(tmp_path / "nope.pdf", tmp_path / "out")


def test_names_and_ids():
    assert drug_id_for("Amoxicilin và acid clavulanic") == "amoxicilin_acid_clavulanic"
    assert drug_id_for("Isosorbid dinitrat") == "isosorbid_dinitrat"
    assert display_name("PARACETAMOL") == "Paracetamol" and display_name("Acid valproic") == "Acid valproic"


def test_fixtures_are_up_to_date(tmp_path):
    """The committed PDFs are what make_fixtures.py makes (it is deterministic, encryption aside)."""
    import runpy

    runpy.run_path(str(PDF_FIXTURES / "make_fixtures.py"))["main"](tmp_path)
    for name in ("two_column.pdf", "split_heading.pdf", "image_only.pdf", "broken.pdf"):
        assert (tmp_path / name).read_bytes() == (PDF_FIXTURES / name).read_bytes(), name
