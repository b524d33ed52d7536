"""Lexical scoring: the spec's distinct-token count, and a real BM25 as Qdrant sparse vectors.

The count scorer is deliberately *not* BM25 — no term frequency, no IDF, no length
normalisation — because that is what the measured pooling threshold (5.0) was tuned on. BM25
is offered beside it as a measured option (notebook 02), never as a silent replacement.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache

from duocthu.text import content_words, folded_words

BM25_K1 = 1.2
BM25_B = 0.75


@lru_cache(maxsize=65536)
def token_id(token: str) -> int:
    """Stable 31-bit id of a folded token (sparse-vector index)."""
    return int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=4).digest(), "big") & 0x7FFFFFFF


def lexical_query_tokens(query: str, exclude: Iterable[str] = ()) -> frozenset[str]:
    """Distinct content tokens of a query, minus words that every candidate shares.

    ``exclude`` holds the tokens of the resolved drug's names and of the phrase that named the
    section: they match every chunk of the drug, so counting them only lifts the floor.
    """
    excluded = {w for text in exclude for w in folded_words(text)}
    return frozenset(w for w in content_words(query) if w not in excluded)


def distinct_match_count(query_tokens: frozenset[str], text_folded: str) -> int:
    """The spec's lexical score: how many distinct query tokens occur in the text."""
    if not query_tokens:
        return 0
    return len(query_tokens & set(folded_words(text_folded)))


def bm25_document_vector(text: str, avg_doc_len: float) -> tuple[list[int], list[float]]:
    """Term-frequency part of BM25 for one document; Qdrant's IDF modifier supplies the IDF."""
    tokens = folded_words(text)
    if not tokens:
        return [], []
    counts = Counter(tokens)
    length_norm = BM25_K1 * (1 - BM25_B + BM25_B * len(tokens) / max(avg_doc_len, 1.0))
    merged: dict[int, float] = {}
    for token, tf in counts.items():
        weight = tf * (BM25_K1 + 1) / (tf + length_norm)
        index = token_id(token)
        merged[index] = merged.get(index, 0.0) + weight
    indices = sorted(merged)
    return indices, [merged[i] for i in indices]


def bm25_query_vector(query: str) -> tuple[list[int], list[float]]:
    ids = sorted({token_id(t) for t in content_words(query)})
    return ids, [1.0] * len(ids)


def average_length(texts: Sequence[str]) -> float:
    return sum(len(folded_words(t)) for t in texts) / max(len(texts), 1)
