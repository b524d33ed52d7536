"""The style lint: one row of the rule table per case; the shipped formulary passes clean."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest
from qdrant_client import QdrantClient

from duocthu.corpus_lint import lint_files, lint_text
from duocthu.embedding_cache import EmbeddingCache
from duocthu.indexing import build_index

from .conftest import DEMO_FORMULARY, FIXTURE_FORMULARY
from .fakes import HashEmbedder


@pytest.mark.parametrize("line, found, preferred", [
    ("Liều tối đa 1 000 mg/ngày.", "1 000", "1000"),
    ("Liều tối đa 1.000 mg/ngày.", "1.000", "1000"),
    ("Gây block nhĩ thất.", "block", "blốc"),
    ("Nồng độ 2 mg/l trong huyết tương.", "/l", "/lít"),
    ("Liều 100 mg/m2 da.", "m2", "m²"),
    ("Tiêm vaccin sống giảm độc lực.", "vaccin", "vắc xin"),
    ("Tiêm vắc-xin sống.", "vắc-xin", "vắc xin"),
    ("So với placebo.", "placebo", "giả dược"),
])
def test_each_rule_flags_its_form(line, found, preferred):
    warnings = lint_text(Path("x.md"), f"---\nname: X\n---\n{line}\n")
    assert [(w.line, w.found, w.preferred) for w in warnings] == [(4, found, preferred)]
    assert str(warnings[0]).startswith("x.md:4: ")


@pytest.mark.parametrize("line", [
    "Liều 1000 mg/ngày, 0,5 mg/kg, 2,5 mmol/lít, 1,73 m², vắc xin, giả dược, blốc nhĩ thất.",
    "Uống 2 lần, mỗi lần 500 mg.", "Thuốc chẹn beta (beta-blocker).",
])
def test_preferred_forms_pass(line):
    assert lint_text(Path("x.md"), line) == []


def test_front_matter_is_not_linted():
    assert lint_text(Path("x.md"), "---\naliases: [Vaccin X]\n---\nVăn bản.\n") == []


def test_shipped_formulary_is_clean():
    warnings = lint_files(sorted(DEMO_FORMULARY.glob("*.md")))
    assert not warnings, "\n".join(map(str, warnings[:20]))


def test_index_reports_warnings_with_file_and_line(tmp_path, caplog):
    source = tmp_path / "f"
    shutil.copytree(FIXTURE_FORMULARY, source)
    path = source / "thuoc_a.md"
    path.write_text(path.read_text(encoding="utf-8").replace("Sốt.", "Sốt; so với placebo."), encoding="utf-8")
    client = QdrantClient(":memory:")
    try:
        with caplog.at_level(logging.WARNING, logger="duocthu.indexing"):
            report = build_index(client, "a", source, HashEmbedder(), EmbeddingCache(tmp_path / "c", "hash"))
    finally:
        client.close()
    assert report.lint_warnings == 1 and "1 style warnings" in report.summary()
    assert any("thuoc_a.md:" in r.getMessage() and "'placebo' → 'giả dược'" in r.getMessage() for r in caplog.records)
