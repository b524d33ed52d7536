"""Scripted fakes (no mocks): deterministic stand-ins that behave like the real components."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np


class HashEmbedder:
    """Deterministic unit vectors from text hashes: fast, stable, no model."""

    model_id = "test/hash-embedder"
    dim = 16

    def __init__(self, fail_after: int | None = None):
        self.calls = 0
        self.embedded = 0
        self.fail_after = fail_after

    def _vector(self, text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
        vector = np.random.default_rng(seed).normal(size=self.dim).astype(np.float32)
        return vector / np.linalg.norm(vector)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self._vector("q:" + t) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        if self.fail_after is not None and self.embedded + len(texts) > self.fail_after:
            raise RuntimeError("embedding service died mid-build")
        self.embedded += len(texts)
        return np.stack([self._vector("p:" + t) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)
