"""Content-addressed embedding cache: (model id, text hash) → vector.

Unchanged chunks are never re-embedded. The cache for the shipped corpus is committed under
``data/embedding-cache/`` so CI and a first ``make demo`` do not re-embed. Every entry carries
a checksum of its vector; a corrupted entry is detected on load, dropped and re-embedded.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from duocthu.providers.embedding import Embedder

log = logging.getLogger(__name__)


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _vector_checksum(vector: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(vector, dtype=np.float32).tobytes()).hexdigest()[:16]


class EmbeddingCache:
    """Passage vectors for one model, persisted as a single ``.npz`` file."""

    def __init__(self, directory: Path, model_id: str):
        self.model_id = model_id
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", model_id)
        self.path = directory / f"{slug}.npz"
        self._vectors: dict[str, np.ndarray] = {}
        self.corrupted_entries = 0
        self.hits = 0
        self.misses = 0
        self._dirty = False
        self._load()

    def _load(self) -> None:
        if not self.path.exists():
            return
        try:
            with np.load(self.path, allow_pickle=False) as data:
                keys, vectors, checksums = data["keys"], data["vectors"], data["checksums"]
                model = str(data["model_id"]) if "model_id" in data else self.model_id
        except Exception as exc:  # a truncated or foreign file: start over, never crash
            log.warning("embedding cache %s is unreadable (%s); it will be rebuilt", self.path, exc)
            return
        if model != self.model_id:
            log.warning("embedding cache %s belongs to %s, not %s; ignored", self.path, model, self.model_id)
            return
        for key, vector, checksum in zip(keys, vectors, checksums, strict=True):
            if _vector_checksum(vector) != str(checksum) or not np.all(np.isfinite(vector)):
                self.corrupted_entries += 1
                continue
            self._vectors[str(key)] = np.asarray(vector, dtype=np.float32)
        if self.corrupted_entries:
            log.warning("embedding cache: %d corrupted entries will be re-embedded", self.corrupted_entries)
            self._dirty = True

    def __len__(self) -> int:
        return len(self._vectors)

    def get(self, text: str) -> np.ndarray | None:
        return self._vectors.get(text_key(text))

    def put(self, text: str, vector: np.ndarray) -> None:
        self._vectors[text_key(text)] = np.asarray(vector, dtype=np.float32)
        self._dirty = True

    def retain_only(self, texts: Sequence[str]) -> None:
        """Drop entries for texts no longer in the corpus (used by ``--refresh-cache``)."""
        keep = {text_key(t) for t in texts}
        before = len(self._vectors)
        self._vectors = {k: v for k, v in self._vectors.items() if k in keep}
        self._dirty = self._dirty or len(self._vectors) != before

    def save(self) -> None:
        """Write atomically: a crash mid-write leaves the previous cache file intact."""
        if not self._dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        keys = sorted(self._vectors)
        vectors = (
            np.stack([self._vectors[k] for k in keys]) if keys else np.zeros((0, 0), dtype=np.float32)
        )
        checksums = np.array([_vector_checksum(v) for v in vectors], dtype="<U16")
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, suffix=".npz.tmp")
        os.close(fd)
        try:
            with open(tmp, "wb") as handle:
                np.savez(handle, keys=np.array(keys, dtype="<U64"), vectors=vectors,
                         checksums=checksums, model_id=np.array(self.model_id))
            os.chmod(tmp, 0o644)  # mkstemp creates 0600; the cache is a shared, committed file
            os.replace(tmp, self.path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        self._dirty = False

    def embed_passages(
        self,
        embedder: Embedder,
        texts: Sequence[str],
        batch_size: int = 16,
        on_progress: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        """Vectors for ``texts``, embedding only the misses, in order."""
        return self._embed(embedder.embed_passages, embedder.dim, texts, batch_size, on_progress)

    def embed_queries(self, embedder: Embedder, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """Query vectors (``query:`` prefix) for ``texts`` — keep them in a cache of their own."""
        return self._embed(embedder.embed_queries, embedder.dim, texts, batch_size, None)

    def _embed(
        self,
        encode: Callable[[Sequence[str]], np.ndarray],
        dim: int,
        texts: Sequence[str],
        batch_size: int,
        on_progress: Callable[[int], None] | None,
    ) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if text_key(t) not in self._vectors]
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        if on_progress:
            on_progress(len(texts) - len(missing))
        for start in range(0, len(missing), batch_size):
            batch = missing[start : start + batch_size]
            for text, vector in zip(batch, encode(batch), strict=True):
                self.put(text, vector)
            if on_progress:
                on_progress(len(batch))
        if not texts:
            return np.zeros((0, dim), dtype=np.float32)
        return np.stack([self._vectors[text_key(t)] for t in texts])


class QueryEmbeddingMemo:
    """A small in-process LRU of query vectors: evaluation sweeps repeat the same questions."""

    def __init__(self, embedder: Embedder, capacity: int = 4096):
        self.embedder = embedder
        self.capacity = capacity
        self._memo: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, text: str) -> np.ndarray:
        with self._lock:
            vector = self._memo.get(text)
            if vector is not None:
                self._memo.move_to_end(text)
                return vector
        vector = self.embedder.embed_queries([text])[0]
        with self._lock:
            self._memo[text] = vector
            if len(self._memo) > self.capacity:
                self._memo.popitem(last=False)
        return vector
