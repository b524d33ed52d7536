"""A formulary indexed once in a private ``:memory:`` Qdrant, and an agent per set of overrides over it.

``duocthu eval`` and notebook 08 run through this: the index is built from the embedding cache
(cold: every chunk embedded once), then each run gets a fresh runtime — its own conversation
store, its settings, its evidence policy — from :func:`duocthu.runtime.build_runtime`, the same
builder the CLI and the app use. Query vectors are kept in a cache of their own under the home
folder (git-ignored), so the second run of a file embeds nothing.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from qdrant_client import QdrantClient

from duocthu.config import PROJECT_ROOT, Settings
from duocthu.conversations import InMemoryConversationStore
from duocthu.embedding_cache import EmbeddingCache
from duocthu.errors import DuocthuError
from duocthu.evaluation.overrides import RuntimeOverrides
from duocthu.indexing import IndexReport, ProgressFactory
from duocthu.providers.embedding import Embedder, get_embedder
from duocthu.runtime import Runtime, build_runtime, index_formulary

COMMITTED_CACHE = PROJECT_ROOT / "data" / "embedding-cache"
PROJECT_FORMULARIES = (PROJECT_ROOT / "data" / "formulary", PROJECT_ROOT / "data" / "examples")
QUERY_CACHE_SUFFIX = "#eval-query"


def default_embedding_cache(formulary_dir: Path, chosen: Path | None, home: Path) -> Path:
    """Where a formulary's passage vectors are cached.

    ``chosen`` (an explicit cache folder) wins. The project's own formularies (``data/formulary``
    and the copies under ``data/examples``) use the committed cache, which holds their vectors;
    any other formulary ``<home>/embedding-cache`` (git-ignored), so a private book's vectors
    never land in a committed file.
    """
    if chosen is not None and chosen.resolve() != COMMITTED_CACHE.resolve():
        return chosen
    source = formulary_dir.resolve()
    if any(source == root.resolve() or root.resolve() in source.parents for root in PROJECT_FORMULARIES):
        return COMMITTED_CACHE
    return home / "embedding-cache"


class CachedQueryEmbedder:
    """An embedder whose query vectors persist in an :class:`EmbeddingCache` (passages are passed through).

    Queries are embedded one at a time, as the live agent embeds them, so a cached vector is the
    vector the agent would have computed.
    """

    def __init__(self, embedder: Embedder, cache_dir: Path):
        self.inner = embedder
        self.model_id = embedder.model_id
        self.dim = embedder.dim
        self.cache = EmbeddingCache(cache_dir, f"{embedder.model_id}{QUERY_CACHE_SUFFIX}")

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        rows = []
        for text in texts:
            vector = self.cache.get(text)
            if vector is None:
                vector = self.inner.embed_queries([text])[0]
                self.cache.put(text, vector)
            rows.append(vector)
        return np.stack(rows) if rows else np.zeros((0, self.dim), dtype=np.float32)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed_passages(texts)

    def save(self) -> None:
        self.cache.save()


class PrivateIndex:
    """``settings.formulary_dir`` indexed in ``:memory:``; :meth:`runtime` builds an agent over it."""

    def __init__(self, settings: Settings, progress: ProgressFactory | None = None, cache_home: Path | None = None):
        """Index now. ``cache_home`` holds the caches that are not committed (default: ``settings.home``);
        the runtime itself gets a temporary home (its traces are not kept)."""
        cache_home = cache_home or settings.home
        self._home = Path(tempfile.mkdtemp(prefix="duocthu-eval-"))
        cache_dir = default_embedding_cache(settings.formulary_dir, settings.embedding_cache_dir, cache_home)
        self.settings = replace(settings, home=self._home, embedding_cache_dir=cache_dir)
        embedder = get_embedder(self.settings)
        self.client = QdrantClient(":memory:")
        self.report: IndexReport = index_formulary(self.settings, self.client, embedder, progress=progress)
        self.embedder = CachedQueryEmbedder(embedder, cache_home / "embedding-cache")

    def runtime(self, overrides: RuntimeOverrides | None = None) -> Runtime:
        """A fresh agent (own conversations, the overrides' settings and policy) over this index."""
        overrides = overrides or RuntimeOverrides()
        fixed = overrides.index_keys()
        if fixed:
            raise DuocthuError(f"{', '.join(fixed)} change(s) the index itself: set it before indexing "
                               f"(one `duocthu eval` per value), not as an override of a built index")
        return build_runtime(
            overrides.apply_to(self.settings), client=self.client, embedder=self.embedder,
            conversations=InMemoryConversationStore(), policy=overrides.policy_for(self.embedder.model_id),
        )

    def close(self) -> None:
        """Save the query vectors, drop the index and the temporary home."""
        self.embedder.save()
        self.client.close()
        shutil.rmtree(self._home, ignore_errors=True)

    def __enter__(self) -> PrivateIndex:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
