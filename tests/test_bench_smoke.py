"""The benchmark suite runs end to end at tiny sizes and writes its report (never to docs/)."""

from __future__ import annotations

import json

import pytest

from bench.run import DEFAULT_OUT, main
from bench.workspace import COMMITTED_CACHE

pytestmark = pytest.mark.slow  # ~20-40 s: index builds, a 2k-chunk synthetic index, two CLI processes


def _fingerprint(path):
    return sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in path.iterdir()) if path.exists() else []


def test_bench_smoke_writes_its_report(tmp_path):
    out, raw = tmp_path / "benchmarks.md", tmp_path / "results.json"
    docs_before = DEFAULT_OUT.stat().st_mtime_ns if DEFAULT_OUT.exists() else None
    cache_before = _fingerprint(COMMITTED_CACHE)

    rc = main(["--profile", "smoke", "--inline", "--out", str(out), "--json", str(raw),
               "--workdir", str(tmp_path / "workspace")])

    results = json.loads(raw.read_text(encoding="utf-8"))
    failed = {k: v.get("error") for k, v in results["stages"].items() if not v["ok"]}
    assert rc == 0 and not failed, failed
    assert set(results["stages"]) == {"index_build", "commands", "app_memory", "demo", "quality", "synthetic_2000"}
    assert results["stages"]["synthetic_2000"]["result"]["chunks"] >= 2000
    assert results["stages"]["demo"]["result"]["turns"]["all"]["turn"]["n"] > 0
    report = out.read_text(encoding="utf-8")
    for heading in ("## Targets", "## Machine and run", "## Latency per route", "## Section route",
                    "## Scale: synthetic formularies", "## Index build", "## Peak memory", "## Quality beside speed",
                    "## Batch evaluation"):
        assert heading in report
    assert "qdrant-client" in report and "python -m bench" in report
    # the suite never writes the committed report or the committed embedding cache
    assert (DEFAULT_OUT.stat().st_mtime_ns if DEFAULT_OUT.exists() else None) == docs_before
    assert _fingerprint(COMMITTED_CACHE) == cache_before
