"""LLM adapters: Bedrock Converse pinned with botocore's Stubber, OpenAI-compatible over
httpx.MockTransport, and the scripted provider. No network, no mocks."""

from __future__ import annotations

import json

import boto3
import httpx
import pytest
from botocore.stub import Stubber

from duocthu.budget import RequestBudget
from duocthu.errors import AnswerGenerationUnavailable, ProviderConfigError, RequestBudgetExhausted
from duocthu.providers.llm import (
    BedrockConverseLlm,
    OpenAICompatibleLlm,
    ScriptedLlm,
    get_json_llm,
    parse_json_object,
)

MODEL_ID = "anthropic.claude-3-5-sonnet-20240620-v1:0"
SYSTEM = "Bạn là trợ lý thông tin thuốc. Trả lời bằng JSON."
USER = "Liều paracetamol cho người lớn?"


# ---------------------------------------------------------------- Bedrock Converse


@pytest.fixture()
def bedrock_client():
    client = boto3.client(
        "bedrock-runtime", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
    )
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


def expected_converse_params(max_tokens: int = 2048, temperature: float = 0.0) -> dict:
    return {
        "modelId": MODEL_ID,
        "system": [{"text": SYSTEM}],
        "messages": [{"role": "user", "content": [{"text": USER}]}],
        "inferenceConfig": {"maxTokens": max_tokens, "temperature": temperature},
    }


def converse_response(text: str) -> dict:
    return {
        "output": {"message": {"role": "assistant", "content": [{"text": text}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 412, "outputTokens": 37, "totalTokens": 449},
        "metrics": {"latencyMs": 873},
    }


def test_bedrock_success_pins_request(bedrock_client):
    client, stubber = bedrock_client
    stubber.add_response(
        "converse",
        converse_response('{"intent": "dose", "drug": "paracetamol"}'),
        expected_converse_params(),
    )
    budget = RequestBudget()
    llm = BedrockConverseLlm(client, MODEL_ID)

    assert llm.complete_json(SYSTEM, USER, budget, "understand") == {
        "intent": "dose",
        "drug": "paracetamol",
    }
    assert budget.calls == ["understand"]


def test_bedrock_passes_max_tokens_and_temperature(bedrock_client):
    client, stubber = bedrock_client
    stubber.add_response(
        "converse", converse_response('{"ok": true}'), expected_converse_params(512, 0.2)
    )

    llm = BedrockConverseLlm(client, MODEL_ID, max_tokens=512, temperature=0.2)
    assert llm.complete_json(SYSTEM, USER, RequestBudget(), "answer") == {"ok": True}


def test_bedrock_fenced_json_with_prose(bedrock_client):
    client, stubber = bedrock_client
    text = (
        'Đây là kết quả:\n```json\n{"answer": "500 mg – 1 g mỗi 4–6 giờ", "cites": [1]}\n```\nHết.'
    )
    stubber.add_response("converse", converse_response(text), expected_converse_params())

    result = BedrockConverseLlm(client, MODEL_ID).complete_json(
        SYSTEM, USER, RequestBudget(), "answer"
    )
    assert result == {"answer": "500 mg – 1 g mỗi 4–6 giờ", "cites": [1]}


def test_bedrock_throttling_fails_closed(bedrock_client):
    client, stubber = bedrock_client
    stubber.add_client_error(
        "converse",
        service_error_code="ThrottlingException",
        service_message="Too many requests, please wait before trying again.",
        http_status_code=429,
        expected_params=expected_converse_params(),
    )

    with pytest.raises(AnswerGenerationUnavailable, match="bedrock-converse.*ThrottlingException"):
        BedrockConverseLlm(client, MODEL_ID).complete_json(SYSTEM, USER, RequestBudget(), "answer")


@pytest.mark.parametrize("text", ['{"answer": "unterminated', "no json here at all", "[1, 2, 3]"])
def test_bedrock_malformed_json_fails_closed(bedrock_client, text):
    client, stubber = bedrock_client
    stubber.add_response("converse", converse_response(text), expected_converse_params())

    with pytest.raises(AnswerGenerationUnavailable, match="bedrock-converse.*JSON object"):
        BedrockConverseLlm(client, MODEL_ID).complete_json(SYSTEM, USER, RequestBudget(), "answer")


def test_bedrock_missing_text_fails_closed(bedrock_client):
    client, stubber = bedrock_client
    response = converse_response("")
    response["output"]["message"]["content"] = []
    stubber.add_response("converse", response, expected_converse_params())

    with pytest.raises(AnswerGenerationUnavailable, match="unexpected response shape"):
        BedrockConverseLlm(client, MODEL_ID).complete_json(SYSTEM, USER, RequestBudget(), "answer")


def test_bedrock_budget_exhausted_before_any_call(bedrock_client):
    # nothing queued: any converse call would raise UnStubbedResponseError
    client, _ = bedrock_client

    with pytest.raises(RequestBudgetExhausted):
        BedrockConverseLlm(client, MODEL_ID).complete_json(
            SYSTEM, USER, RequestBudget(max_llm_calls=0), "answer"
        )


def test_bedrock_from_settings_client_config(settings):
    from dataclasses import replace

    llm = BedrockConverseLlm.from_settings(replace(settings, aws_region="ap-southeast-1"))
    config = llm._client.meta.config
    assert config.read_timeout == 20
    assert config.retries["total_max_attempts"] == 2
    assert config.retries["mode"] == "standard"
    assert llm._client.meta.region_name == "ap-southeast-1"
    assert llm.model_id == settings.bedrock_model_id


# ---------------------------------------------------------------- OpenAI-compatible


def chat_completion(content: str) -> dict:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "qwen2.5:7b-instruct",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 40, "completion_tokens": 9, "total_tokens": 49},
    }


def test_openai_success_posts_json_mode_request():
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=chat_completion('{"intent": "dose"}'))

    llm = OpenAICompatibleLlm(
        "http://llm.local/v1/",
        "qwen2.5:7b-instruct",
        api_key="sk-test",
        transport=httpx.MockTransport(handler),
    )
    budget = RequestBudget()
    assert llm.complete_json(SYSTEM, USER, budget, "understand") == {"intent": "dose"}

    (request,) = seen
    assert request.method == "POST"
    assert str(request.url) == "http://llm.local/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert json.loads(request.content) == {
        "model": "qwen2.5:7b-instruct",
        "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}],
        "temperature": 0,
        "response_format": {"type": "json_object"},
    }
    assert budget.calls == ["understand"]


def test_openai_without_key_sends_no_authorization():
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=chat_completion('{"ok": 1}'))

    llm = OpenAICompatibleLlm("http://llm.local/v1", "m", transport=httpx.MockTransport(handler))
    llm.complete_json(SYSTEM, USER, RequestBudget(), "x")
    assert "authorization" not in seen[0].headers


def test_openai_http_500_fails_closed():
    transport = httpx.MockTransport(lambda request: httpx.Response(500, text="internal error"))
    llm = OpenAICompatibleLlm("http://llm.local/v1", "m", transport=transport)

    with pytest.raises(AnswerGenerationUnavailable, match="openai-compatible.*HTTP 500"):
        llm.complete_json(SYSTEM, USER, RequestBudget(), "answer")


def test_openai_timeout_fails_closed():
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    llm = OpenAICompatibleLlm("http://llm.local/v1", "m", transport=httpx.MockTransport(handler))
    with pytest.raises(AnswerGenerationUnavailable, match="openai-compatible.*ReadTimeout"):
        llm.complete_json(SYSTEM, USER, RequestBudget(), "answer")


def test_openai_non_json_content_fails_closed():
    transport = httpx.MockTransport(
        lambda request: httpx.Response(200, json=chat_completion("Xin lỗi, tôi không biết."))
    )
    llm = OpenAICompatibleLlm("http://llm.local/v1", "m", transport=transport)

    with pytest.raises(AnswerGenerationUnavailable, match="openai-compatible.*JSON object"):
        llm.complete_json(SYSTEM, USER, RequestBudget(), "answer")


def test_openai_non_json_body_fails_closed():
    transport = httpx.MockTransport(lambda request: httpx.Response(200, text="<html>proxy</html>"))
    llm = OpenAICompatibleLlm("http://llm.local/v1", "m", transport=transport)

    with pytest.raises(AnswerGenerationUnavailable, match="not JSON"):
        llm.complete_json(SYSTEM, USER, RequestBudget(), "answer")


def test_openai_budget_exhausted_before_any_request():
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=chat_completion("{}"))

    llm = OpenAICompatibleLlm("http://llm.local/v1", "m", transport=httpx.MockTransport(handler))
    with pytest.raises(RequestBudgetExhausted):
        llm.complete_json(SYSTEM, USER, RequestBudget(max_llm_calls=0), "answer")
    assert seen == []


# ---------------------------------------------------------------- ScriptedLlm


def test_scripted_queue_order_and_history():
    llm = ScriptedLlm([{"n": 1}]).enqueue({"n": 2})
    budget = RequestBudget()

    assert llm.complete_json("s1", "u1", budget, "understand") == {"n": 1}
    assert llm.complete_json("s2", "u2", budget, "answer") == {"n": 2}
    assert llm.history == [("understand", "s1", "u1"), ("answer", "s2", "u2")]
    assert budget.calls == ["understand", "answer"]
    assert llm.pending == 0


def test_scripted_exceptions_are_raised_or_wrapped():
    own = AnswerGenerationUnavailable("bedrock throttled")
    llm = ScriptedLlm([own, RuntimeError("boom")])

    with pytest.raises(AnswerGenerationUnavailable) as first:
        llm.complete_json("s", "u", RequestBudget(), "a")
    assert first.value is own
    with pytest.raises(AnswerGenerationUnavailable, match="RuntimeError: boom") as second:
        llm.complete_json("s", "u", RequestBudget(), "b")
    assert isinstance(second.value.__cause__, RuntimeError)


def test_scripted_exhausted_and_default():
    with pytest.raises(AnswerGenerationUnavailable, match="script exhausted"):
        ScriptedLlm().complete_json("s", "u", RequestBudget(), "a")

    llm = ScriptedLlm(
        [{"first": True}], default=lambda label, system, user: {"label": label, "user": user}
    )
    assert llm.complete_json("s", "u0", RequestBudget(), "a") == {"first": True}
    assert llm.complete_json("s", "u1", RequestBudget(), "b") == {"label": "b", "user": "u1"}


def test_scripted_budget_checked_first():
    llm = ScriptedLlm([{"n": 1}])
    with pytest.raises(RequestBudgetExhausted):
        llm.complete_json("s", "u", RequestBudget(max_llm_calls=0), "a")
    assert llm.history == []
    assert llm.pending == 1


# ---------------------------------------------------------------- parsing and selection


def test_parse_json_object_skips_non_object_braces():
    assert parse_json_object('note {not json} then {"a": {"b": 2}} trailing', "p") == {
        "a": {"b": 2}
    }


@pytest.mark.parametrize(
    ("provider", "expected"),
    [
        ("disabled", type(None)),
        ("rules", type(None)),
        ("bedrock-converse", BedrockConverseLlm),
        ("openai-compatible", OpenAICompatibleLlm),
        ("stub", ScriptedLlm),
    ],
)
def test_get_json_llm(settings, provider, expected):
    from dataclasses import replace

    assert isinstance(get_json_llm(replace(settings, answer_provider=provider)), expected)


def test_get_json_llm_unknown(settings):
    from dataclasses import replace

    with pytest.raises(ProviderConfigError, match="ANSWER_PROVIDER"):
        get_json_llm(replace(settings, answer_provider="gpt-17"))
