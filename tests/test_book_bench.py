"""The book stage of the benchmark suite runs at smoke size and writes its section of the report."""

from __future__ import annotations

import json

import pytest

from bench.run import main

pytestmark = pytest.mark.slow  # ~20 s: two book builds and imports, four embedding options


def test_book_stage_smoke(tmp_path):
    out, raw = tmp_path / "benchmarks.md", tmp_path / "results.json"
    rc = main(["--profile", "smoke", "--inline", "--only", "book", "--out", str(out), "--json", str(raw),
               "--workdir", str(tmp_path / "workspace")])
    results = json.loads(raw.read_text(encoding="utf-8"))
    assert rc == 0, results["stages"]["book"].get("error")
    book = results["stages"]["book"]["result"]
    assert book["demo"]["round_trip"]["sentence_recall"] >= 0.99 and book["embedding"]["vectors_identical"]
    assert book["cold_index"]["chunks"] > 0 and book["demo"]["import_pages_per_s"] > 0
    assert "## The book: build, import-pdf, cold index" in out.read_text(encoding="utf-8")
