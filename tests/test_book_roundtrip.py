"""The comparison behind the round-trip test names every difference."""

from __future__ import annotations

import shutil

from duocthu.book.roundtrip import compare
from duocthu.corpus import load_formulary

from .conftest import FIXTURE_FORMULARY


def test_identical_formularies_compare_clean():
    monographs = load_formulary(FIXTURE_FORMULARY)
    report = compare(monographs, monographs)
    assert report.sentence_recall == 1.0 and report.tables == report.tables_found == 1
    assert "0 page differences" in report.summary()


def test_differences_are_named(tmp_path):
    changed = tmp_path / "f"
    shutil.copytree(FIXTURE_FORMULARY, changed)
    path = changed / "thuoc_b.md"
    text = path.read_text(encoding="utf-8").replace("<!-- table quarantined:", "<!-- table:")
    text = text.replace("source_pages: [20, 22]", "source_pages: [21, 22]")
    path.write_text(text, encoding="utf-8")
    a = changed / "thuoc_a.md"
    a.write_text(a.read_text(encoding="utf-8").replace("Đau đầu.\n", ""), encoding="utf-8")
    report = compare(load_formulary(FIXTURE_FORMULARY), load_formulary(changed))
    assert report.lost_sentences == ["thuoc_a: Đau đầu."]
    assert report.table_problems and "not quarantined" in report.table_problems[0]
    assert report.page_differences[0].startswith("thuoc_b:")
    assert compare(load_formulary(FIXTURE_FORMULARY), []).missing_monographs == ["Thuốc A", "Thuốc B"]
