"""LLM providers behind one protocol: a JSON-in, JSON-out call.

The agent and the answerer only see :class:`JsonLlm`. Adapters: AWS Bedrock Converse (boto3),
any OpenAI-compatible HTTP server on the user's machine (vLLM, Ollama, LM Studio), and a
scripted provider for tests. Every adapter raises :class:`AnswerGenerationUnavailable` on any
failure (throttling, timeout, malformed JSON) so callers fail closed.
"""

from __future__ import annotations

from typing import Any, Protocol

from duocthu.budget import RequestBudget


class JsonLlm(Protocol):
    name: str

    def complete_json(self, system: str, user: str, budget: RequestBudget, label: str) -> dict[str, Any]:
        """Return the model's JSON object; call ``budget.require(label)`` first."""
        ...
