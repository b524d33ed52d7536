"""``--update-pages`` rewrites only the page keys; ``section_pages`` is validated and cited."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from duocthu.book.frontmatter import mismatches, rewrite_front_matter, update_pages
from duocthu.book.render import build_book
from duocthu.chunker import chunk_monograph
from duocthu.corpus import load_formulary, parse_monograph
from duocthu.errors import CorpusValidationError

from .conftest import FIXTURE_FORMULARY
from .test_corpus import REQUIRED_BODY, monograph_text

FRONT = "drug_id: thuoc_x\nname: Thuốc X\naliases: []\natc_codes: []\nsource_pages: [5, 7]"
KEYS = ["ten_chung_quoc_te", "ma_atc", "loai_thuoc", "dang_thuoc_va_ham_luong", "duoc_ly_va_co_che_tac_dung",
        "duoc_dong_hoc", "chi_dinh", "chong_chi_dinh", "than_trong", "thoi_ky_mang_thai", "thoi_ky_cho_con_bu",
        "tac_dung_khong_mong_muon", "huong_dan_xu_tri_adr", "lieu_luong_va_cach_dung", "tuong_tac_thuoc",
        "do_on_dinh_va_bao_quan", "qua_lieu_va_xu_tri"]


def _with_pages(pages: dict[str, str]) -> str:
    block = "\n".join(f"  {k}: {pages.get(k, '[5, 5]')}" for k in KEYS if pages.get(k) != "omit")
    return monograph_text(FRONT + "\nsection_pages:\n" + block, REQUIRED_BODY)


def _errors(text: str) -> list[str]:
    with pytest.raises(CorpusValidationError) as info:
        parse_monograph(Path("thuoc_x.md"), text)
    return [e.message for e in info.value.errors]


def test_section_pages_become_each_chunks_pages_and_citation():
    later = {"lieu_luong_va_cach_dung": "[6, 7]", "tuong_tac_thuoc": "[7, 7]", "do_on_dinh_va_bao_quan": "[7, 7]",
             "qua_lieu_va_xu_tri": "[7, 7]"}
    mono = parse_monograph(Path("thuoc_x.md"), _with_pages(later))
    assert mono.pages_of("lieu_luong_va_cach_dung") == (6, 7)
    chunk = next(c for c in chunk_monograph(mono) if c.section_key == "lieu_luong_va_cach_dung")
    assert chunk.pages == (6, 7)
    assert chunk.source_refs == ("Dược thư (bản demo duocthu), Thuốc X, tr. 6–7",)
    first = chunk_monograph(mono)[0]
    assert first.pages == (5,) and first.source_refs == ("Dược thư (bản demo duocthu), Thuốc X, tr. 5",)


def test_without_section_pages_chunks_cite_the_monograph():
    mono = parse_monograph(Path("thuoc_x.md"), monograph_text(FRONT, REQUIRED_BODY))
    assert all(c.pages == (5, 6, 7) for c in chunk_monograph(mono))


@pytest.mark.parametrize("pages, message", [
    ({"chi_dinh": "[9, 9]"}, "lies outside source_pages"),
    ({"chi_dinh": "[6, 5]"}, "must be [first, last]"),
    ({"chi_dinh": "omit"}, "lacks the section 'chi_dinh'"),
    ({"ma_atc": "[7, 7]"}, "go backwards"),
])
def test_section_pages_are_validated(pages, message):
    assert any(message in m for m in _errors(_with_pages(pages)))


def test_section_pages_with_unknown_or_absent_section():
    text = _with_pages({}).replace("section_pages:\n", "section_pages:\n  tuong_ky: [5, 5]\n  bi_an: [5, 5]\n")
    messages = _errors(text)
    assert any("a section this monograph lacks" in m for m in messages)
    assert any("unknown section 'bi_an'" in m for m in messages)
    assert any("must map section keys" in m for m in _errors(monograph_text(FRONT + "\nsection_pages: [1, 2]", REQUIRED_BODY)))


def test_rewrite_keeps_every_other_byte():
    text = "---\ndrug_id: x\nsource_pages: [1, 2]\nsection_pages:\n  a: [1, 1]\n  b: [1, 2]\nname: X\n---\n\n## Body  \nkept as is\n"
    new = rewrite_front_matter(text, ["source_pages: [3, 4]", "section_pages:", "  a: [3, 4]"])
    assert new == "---\ndrug_id: x\nsource_pages: [3, 4]\nsection_pages:\n  a: [3, 4]\nname: X\n---\n\n## Body  \nkept as is\n"
    added = rewrite_front_matter("---\ndrug_id: x\n---\nbody", ["source_pages: [1, 1]"])
    assert added == "---\ndrug_id: x\nsource_pages: [1, 1]\n---\nbody"


def test_update_pages_changes_pages_not_chunk_texts(tmp_path):
    source = tmp_path / "formulary"
    shutil.copytree(FIXTURE_FORMULARY, source)
    before = load_formulary(source)
    built = build_book(before, tmp_path / "book.pdf")
    assert len(mismatches(before, built)) == 2
    changed = update_pages(before, built)
    assert len(changed) == 2
    after = load_formulary(source)
    assert not mismatches(after, built)
    assert update_pages(after, built) == []  # idempotent
    texts = lambda ms: [c.text for m in ms for c in chunk_monograph(m)]  # noqa: E731
    assert texts(before) == texts(after)
    assert after[0].source_pages == built.monographs["thuoc_a"].pages
