from __future__ import annotations

import numpy as np

from duocthu.embedding_cache import EmbeddingCache, QueryEmbeddingMemo

from .fakes import HashEmbedder


def test_hits_and_misses(tmp_path):
    embedder = HashEmbedder()
    cache = EmbeddingCache(tmp_path, embedder.model_id)
    first = cache.embed_passages(embedder, ["a", "b", "a"])
    assert (cache.hits, cache.misses) == (1, 2)
    cache.save()
    again = EmbeddingCache(tmp_path, embedder.model_id)
    second = again.embed_passages(embedder, ["a", "b", "c"])
    assert (again.hits, again.misses) == (2, 1)
    assert np.allclose(first[:2], second[:2])


def test_other_model_does_not_share_vectors(tmp_path):
    embedder = HashEmbedder()
    cache = EmbeddingCache(tmp_path, embedder.model_id)
    cache.embed_passages(embedder, ["a"])
    cache.save()
    other = EmbeddingCache(tmp_path, "another/model")
    assert other.get("a") is None


def test_corrupted_entry_is_detected_and_re_embedded(tmp_path):
    embedder = HashEmbedder()
    cache = EmbeddingCache(tmp_path, embedder.model_id)
    cache.embed_passages(embedder, ["a", "b"])
    cache.save()
    with np.load(cache.path) as data:
        arrays = {k: data[k] for k in data.files}
    arrays["vectors"][0, 0] += 0.5  # bit rot in one entry
    np.savez(cache.path, **arrays)
    reloaded = EmbeddingCache(tmp_path, embedder.model_id)
    assert reloaded.corrupted_entries == 1 and len(reloaded) == 1
    vectors = reloaded.embed_passages(embedder, ["a", "b"])
    assert reloaded.misses == 1
    assert np.allclose(vectors, embedder.embed_passages(["a", "b"]))


def test_unreadable_cache_file_starts_over(tmp_path):
    embedder = HashEmbedder()
    path = EmbeddingCache(tmp_path, embedder.model_id).path
    path.write_bytes(b"not a zip file")
    assert len(EmbeddingCache(tmp_path, embedder.model_id)) == 0


def test_query_memo_reuses_vectors():
    embedder = HashEmbedder()
    memo = QueryEmbeddingMemo(embedder, capacity=2)
    assert memo("x") is memo("x")
    memo("y"), memo("z")
    assert "x" not in memo._memo
