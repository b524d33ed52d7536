"""The understander protocol: turn text, recent history and the conversation's frame → a QueryFrame."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from duocthu.budget import RequestBudget
from duocthu.understanding.frame import QueryFrame


class QueryUnderstander(Protocol):
    name: str

    def understand(
        self, turn: str, history: Sequence[str], budget: RequestBudget, prior_frame: QueryFrame | None
    ) -> QueryFrame:
        """What this turn asks, with the conversation's drug and patient facts carried over."""
        ...
