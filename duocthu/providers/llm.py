"""LLM providers behind one protocol: a JSON-in, JSON-out call.

The agent and the answerer only see :class:`JsonLlm`. Adapters: AWS Bedrock Converse (boto3),
any OpenAI-compatible HTTP server on the user's machine (vLLM, Ollama, LM Studio), and a
scripted provider for tests. Every adapter raises :class:`AnswerGenerationUnavailable` on any
failure (throttling, timeout, malformed JSON) so callers fail closed.

Each adapter calls ``budget.require(label)`` before it talks to the model, so an exhausted
budget raises :class:`~duocthu.errors.RequestBudgetExhausted` without any provider call.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, Protocol

import httpx

from duocthu.budget import RequestBudget
from duocthu.config import Settings
from duocthu.errors import AnswerGenerationUnavailable
from duocthu.providers import lookup

ScriptedResponse = dict[str, Any] | BaseException
DefaultResponder = Callable[[str, str, str], dict[str, Any]]


class JsonLlm(Protocol):
    name: str

    def complete_json(
        self, system: str, user: str, budget: RequestBudget, label: str
    ) -> dict[str, Any]:
        """Return the model's JSON object; call ``budget.require(label)`` first."""
        ...


def parse_json_object(text: str, provider: str) -> dict[str, Any]:
    """The first JSON object in ``text``, tolerating a fenced block or leading prose.

    Example:
        >>> parse_json_object('Here you go:\\n```json\\n{"a": 1}\\n```', "demo")
        {'a': 1}
    """
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)  # pragma: no cover - raw_decode at "{" yields a dict
    raise AnswerGenerationUnavailable(
        f"{provider}: the model did not return a JSON object (got {text[:120]!r})"
    )


class BedrockConverseLlm:
    """AWS Bedrock ``converse`` through a boto3 ``bedrock-runtime`` client."""

    name = "bedrock-converse"

    def __init__(
        self, client: Any, model_id: str, max_tokens: int = 2048, temperature: float = 0.0
    ):
        self._client = client
        self.model_id = model_id
        self.max_tokens = max_tokens
        self.temperature = temperature

    @classmethod
    def from_settings(cls, settings: Settings) -> BedrockConverseLlm:
        from duocthu.providers.aws import bedrock_runtime_client

        return cls(bedrock_runtime_client(settings, "ANSWER_PROVIDER=bedrock-converse"), settings.bedrock_model_id)

    def complete_json(
        self, system: str, user: str, budget: RequestBudget, label: str
    ) -> dict[str, Any]:
        budget.require(label)
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            response = self._client.converse(
                modelId=self.model_id,
                system=[{"text": system}],
                messages=[{"role": "user", "content": [{"text": user}]}],
                inferenceConfig={"maxTokens": self.max_tokens, "temperature": self.temperature},
            )
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "ClientError")
            raise AnswerGenerationUnavailable(
                f"{self.name} ({self.model_id}) failed: {code}: {exc}"
            ) from exc
        except BotoCoreError as exc:
            raise AnswerGenerationUnavailable(
                f"{self.name} ({self.model_id}) failed: {type(exc).__name__}: {exc}"
            ) from exc
        except Exception as exc:  # fail closed on anything the SDK lets through
            raise AnswerGenerationUnavailable(
                f"{self.name} ({self.model_id}) failed: {type(exc).__name__}: {exc}"
            ) from exc
        try:
            text = response["output"]["message"]["content"][0]["text"]
        except (KeyError, IndexError, TypeError) as exc:
            raise AnswerGenerationUnavailable(
                f"{self.name} ({self.model_id}): unexpected response shape, missing {exc}"
            ) from exc
        if not isinstance(text, str):
            raise AnswerGenerationUnavailable(
                f"{self.name} ({self.model_id}): response text is not a string"
            )
        return parse_json_object(text, self.name)


class OpenAICompatibleLlm:
    """``POST {base_url}/chat/completions`` on any OpenAI-compatible server, in JSON mode."""

    name = "openai-compatible"

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout_s: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ):
        self.base_url = base_url.rstrip("/")
        self.model = model
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(timeout=timeout_s, transport=transport, headers=headers)

    @classmethod
    def from_settings(cls, settings: Settings) -> OpenAICompatibleLlm:
        return cls(settings.openai_base_url, settings.openai_model, settings.openai_api_key)

    def complete_json(
        self, system: str, user: str, budget: RequestBudget, label: str
    ) -> dict[str, Any]:
        budget.require(label)
        body = {
            "model": self.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "temperature": 0,
            "response_format": {"type": "json_object"},
        }
        url = f"{self.base_url}/chat/completions"
        try:
            response = self._http.post(url, json=body)
            response.raise_for_status()
            payload = response.json()
        except httpx.HTTPStatusError as exc:
            raise AnswerGenerationUnavailable(
                f"{self.name} ({self.model}) failed: HTTP {exc.response.status_code} from {url}"
            ) from exc
        except httpx.HTTPError as exc:
            raise AnswerGenerationUnavailable(
                f"{self.name} ({self.model}) failed: {type(exc).__name__}: {exc}"
            ) from exc
        except ValueError as exc:
            raise AnswerGenerationUnavailable(
                f"{self.name} ({self.model}): response body is not JSON"
            ) from exc
        try:
            content = payload["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise AnswerGenerationUnavailable(
                f"{self.name} ({self.model}): unexpected response shape, missing {exc}"
            ) from exc
        if not isinstance(content, str):
            raise AnswerGenerationUnavailable(
                f"{self.name} ({self.model}): message content is not a string"
            )
        return parse_json_object(content, self.name)

    def close(self) -> None:
        self._http.close()


class ScriptedLlm:
    """A scripted provider for tests and ``ANSWER_PROVIDER=stub``.

    Example:
        >>> llm = ScriptedLlm([{"intent": "dose"}])
        >>> llm.complete_json("sys", "user", RequestBudget(), "understand")
        {'intent': 'dose'}
        >>> llm.history
        [('understand', 'sys', 'user')]
    """

    name = "stub"

    def __init__(
        self,
        responses: Iterable[ScriptedResponse] | None = None,
        default: DefaultResponder | None = None,
    ):
        self._queue: deque[ScriptedResponse] = deque(responses or ())
        self._default = default
        self.history: list[tuple[str, str, str]] = []

    def enqueue(self, response: ScriptedResponse) -> ScriptedLlm:
        """Add one response (a dict to return or an exception to raise); returns ``self``."""
        self._queue.append(response)
        return self

    @property
    def pending(self) -> int:
        return len(self._queue)

    def complete_json(
        self, system: str, user: str, budget: RequestBudget, label: str
    ) -> dict[str, Any]:
        budget.require(label)
        self.history.append((label, system, user))
        if self._queue:
            response = self._queue.popleft()
        elif self._default is not None:
            response = self._default(label, system, user)
        else:
            raise AnswerGenerationUnavailable(f"{self.name}: script exhausted at {label}")
        if isinstance(response, AnswerGenerationUnavailable):
            raise response
        if isinstance(response, BaseException):
            raise AnswerGenerationUnavailable(
                f"{self.name} failed at {label}: {type(response).__name__}: {response}"
            ) from response
        return response


JSON_LLMS: dict[str, Callable[[Settings], JsonLlm | None]] = {
    "disabled": lambda settings: None,  # retrieval only: quotes, no generated text
    "rules": lambda settings: None,  # the offline rule-based answerer, no LLM
    "bedrock-converse": BedrockConverseLlm.from_settings,
    "openai-compatible": OpenAICompatibleLlm.from_settings,
    "stub": lambda settings: ScriptedLlm(),
}
"""``ANSWER_PROVIDER`` → factory; each imports its SDK only when called."""


def get_json_llm(settings: Settings) -> JsonLlm | None:
    """The LLM ``ANSWER_PROVIDER`` names, or ``None`` for the LLM-free ``disabled``/``rules``."""
    return lookup(JSON_LLMS, settings.answer_provider, "ANSWER_PROVIDER")(settings)
