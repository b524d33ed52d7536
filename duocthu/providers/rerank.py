"""Rerankers: an ordering aid for the free-form and overview routes, always fail-open."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from duocthu.config import Settings
from duocthu.errors import ProviderConfigError
from duocthu.extras import require_extra
from duocthu.lexical import lexical_query_tokens
from duocthu.providers import lookup
from duocthu.text import folded_words
from duocthu.types import Hit, ScoreKind


@dataclass(frozen=True)
class RerankOutcome:
    hits: tuple[Hit, ...]
    failure: str | None = None  # set when the provider failed and the input order was kept
    elapsed_ms: float = 0.0


class Reranker(Protocol):
    name: str

    def rerank(self, query: str, hits: Sequence[Hit], top_k: int) -> RerankOutcome: ...


class KeepOrderReranker:
    """No reranking: the retrieval order, cut to ``top_k``."""

    name = "none"

    def rerank(self, query: str, hits: Sequence[Hit], top_k: int) -> RerankOutcome:
        return RerankOutcome(tuple(hits[:top_k]))


class LexicalReranker:
    """Offline default: orders by the share of the query's content words a chunk contains.

    Ties keep retrieval (book) order, so it is deterministic and explainable.
    """

    name = "lexical"

    def rerank(self, query: str, hits: Sequence[Hit], top_k: int) -> RerankOutcome:
        tokens = lexical_query_tokens(query)
        if not tokens:
            return RerankOutcome(tuple(hits[:top_k]))
        scored = []
        for position, hit in enumerate(hits):
            overlap = len(tokens & set(folded_words(hit.chunk.text_folded))) / len(tokens)
            scored.append((overlap, -position, hit))
        scored.sort(key=lambda item: (item[0], item[1]), reverse=True)
        return RerankOutcome(tuple(h.rescored(s, ScoreKind.RERANK) for s, _, h in scored[:top_k]))


class CohereReranker:
    """Cohere ``rerank-v3.5``. Any error keeps the input order and records the failure."""

    name = "cohere"

    def __init__(self, client: Any, model: str = "rerank-v3.5"):
        self._client = client
        self._model = model

    @classmethod
    def from_settings(cls, settings: Settings) -> CohereReranker:
        if not settings.cohere_api_key:
            raise ProviderConfigError("RERANK_PROVIDER=cohere needs COHERE_API_KEY")
        cohere = require_extra("cohere", "cohere", "RERANK_PROVIDER=cohere")
        client = cohere.ClientV2(api_key=settings.cohere_api_key, timeout=settings.cohere_timeout_s)
        return cls(client, settings.cohere_rerank_model)

    def rerank(self, query: str, hits: Sequence[Hit], top_k: int) -> RerankOutcome:
        started = time.perf_counter()
        if not hits:
            return RerankOutcome(())
        try:
            response = self._client.rerank(
                model=self._model, query=query, documents=[h.text for h in hits],
                top_n=min(top_k, len(hits)),
            )
            ranked = tuple(
                hits[r.index].rescored(float(r.relevance_score), ScoreKind.RERANK)
                for r in response.results
            )
        except Exception as exc:  # fail-open: rerank is an ordering aid, never a gate
            return RerankOutcome(
                tuple(hits), failure=f"cohere rerank failed: {type(exc).__name__}: {exc}",
                elapsed_ms=(time.perf_counter() - started) * 1000,
            )
        return RerankOutcome(ranked, elapsed_ms=(time.perf_counter() - started) * 1000)


RERANKERS: dict[str, Callable[[Settings], Reranker]] = {
    "none": lambda settings: KeepOrderReranker(),
    "lexical": lambda settings: LexicalReranker(),
    "cohere": CohereReranker.from_settings,
}
"""``RERANK_PROVIDER`` → factory; each imports its SDK only when called."""


def get_reranker(settings: Settings) -> Reranker:
    """The reranker ``RERANK_PROVIDER`` names (default: lexical, or cohere when a key is set)."""
    return lookup(RERANKERS, settings.rerank_provider, "RERANK_PROVIDER")(settings)
