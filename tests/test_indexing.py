from __future__ import annotations

import shutil

import pytest
from qdrant_client import QdrantClient

from duocthu.embedding_cache import EmbeddingCache
from duocthu.errors import CorpusValidationError
from duocthu.indexing import build_index, current_target
from duocthu.qdrant_store import QdrantStore

from .conftest import FIXTURE_FORMULARY
from .fakes import HashEmbedder

ALIAS = "duocthu_chunks"


@pytest.fixture()
def client():
    c = QdrantClient(":memory:")
    yield c
    c.close()


def _build(client, tmp_path, source=FIXTURE_FORMULARY, embedder=None, **kwargs):
    embedder = embedder or HashEmbedder()
    cache = EmbeddingCache(tmp_path / "cache", embedder.model_id)
    return build_index(client, ALIAS, source, embedder, cache, **kwargs)


def test_build_publishes_an_alias_and_is_idempotent(client, tmp_path):
    first = _build(client, tmp_path)
    assert not first.skipped and first.drugs == 2 and first.chunks > 30
    store = QdrantStore(client, ALIAS)
    assert store.count() == first.chunks
    second = _build(client, tmp_path)
    assert second.skipped and second.collection == first.collection
    rebuilt = _build(client, tmp_path, rebuild=True)
    assert rebuilt.collection != first.collection and store.count() == first.chunks
    assert rebuilt.embedded == 0 and rebuilt.cache_hits == first.chunks  # all from the cache
    assert [c.name for c in client.get_collections().collections] == [rebuilt.collection]


def test_failure_mid_build_keeps_the_old_index_serving(client, tmp_path, monkeypatch):
    first = _build(client, tmp_path)
    changed = tmp_path / "formulary"
    shutil.copytree(FIXTURE_FORMULARY, changed)
    path = changed / "thuoc_a.md"
    path.write_text(path.read_text(encoding="utf-8").replace("Sốt.", "Sốt cao."), encoding="utf-8")

    original_upsert = client.upsert
    calls = {"n": 0}

    def dying_upsert(*args, **kwargs):
        calls["n"] += 1
        raise ConnectionError("killed mid-build")

    monkeypatch.setattr(client, "upsert", dying_upsert)
    with pytest.raises(ConnectionError):
        _build(client, tmp_path, source=changed)
    monkeypatch.setattr(client, "upsert", original_upsert)
    assert current_target(client, ALIAS) == first.collection
    assert QdrantStore(client, ALIAS).count() == first.chunks
    assert [c.name for c in client.get_collections().collections] == [first.collection]


def test_embedding_failure_publishes_nothing(client, tmp_path):
    with pytest.raises(RuntimeError, match="died mid-build"):
        _build(client, tmp_path, embedder=HashEmbedder(fail_after=5))
    assert current_target(client, ALIAS) is None
    assert client.get_collections().collections == []


def test_orphan_of_a_killed_build_is_removed_by_the_next(client, tmp_path):
    first = _build(client, tmp_path)
    client.create_collection(f"{ALIAS}__deadbeef0000__1", vectors_config={})
    _build(client, tmp_path, rebuild=True)
    names = [c.name for c in client.get_collections().collections]
    assert len(names) == 1 and names[0] != first.collection


def test_invalid_corpus_publishes_nothing(client, tmp_path):
    first = _build(client, tmp_path)
    broken = tmp_path / "broken"
    shutil.copytree(FIXTURE_FORMULARY, broken)
    (broken / "thuoc_c.md").write_text("---\ndrug_id: thuoc_c\n---\n## Bí ẩn\nabc\n", encoding="utf-8")
    with pytest.raises(CorpusValidationError) as info:
        _build(client, tmp_path, source=broken)
    assert any(e.path.name == "thuoc_c.md" for e in info.value.errors)
    assert current_target(client, ALIAS) == first.collection


def test_incremental_rebuild_embeds_only_the_changed_drug(client, tmp_path):
    embedder = HashEmbedder()
    _build(client, tmp_path, embedder=embedder)
    changed = tmp_path / "formulary"
    shutil.copytree(FIXTURE_FORMULARY, changed)
    path = changed / "thuoc_b.md"
    path.write_text(path.read_text(encoding="utf-8").replace("Ho khan, tăng kali máu", "Ho khan kéo dài, tăng kali máu"),
                    encoding="utf-8")
    report = _build(client, tmp_path, source=changed, embedder=embedder)
    assert report.embedded == 1


def test_persistent_local_storage_reopens_with_the_alias(tmp_path):
    path = tmp_path / "qdrant"
    client = QdrantClient(path=str(path))
    report = _build(client, tmp_path)
    client.close()
    reopened = QdrantClient(path=str(path))
    try:
        assert current_target(reopened, ALIAS) == report.collection
        assert QdrantStore(reopened, ALIAS).count() == report.chunks
    finally:
        reopened.close()
