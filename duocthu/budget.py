"""RequestBudget: wall-clock and LLM-call limits of one turn.

``require()`` is called immediately before every provider call. It is checked *between*
calls and cannot cancel a call in flight; that gap is bounded by the adapters' own timeouts
(Bedrock: read_timeout=20 s, total_max_attempts=2), so the worst case is ~40 s + one call.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from duocthu.errors import RequestBudgetExhausted

MAX_WALL_CLOCK_MS = 40_000
MAX_LLM_CALLS_PER_TURN = 8


@dataclass
class RequestBudget:
    max_wall_clock_ms: int = MAX_WALL_CLOCK_MS
    max_llm_calls: int = MAX_LLM_CALLS_PER_TURN
    started: float = field(default_factory=time.perf_counter)
    llm_calls: int = 0
    calls: list[str] = field(default_factory=list)

    @property
    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self.started) * 1000

    def require(self, label: str) -> None:
        """Reserve one LLM call, or raise :class:`RequestBudgetExhausted` (fail closed)."""
        if self.elapsed_ms >= self.max_wall_clock_ms:
            raise RequestBudgetExhausted(
                f"request budget exhausted before {label}: {self.elapsed_ms:.0f} ms ≥ {self.max_wall_clock_ms} ms"
            )
        if self.llm_calls >= self.max_llm_calls:
            raise RequestBudgetExhausted(
                f"request budget exhausted before {label}: {self.llm_calls} LLM calls ≥ {self.max_llm_calls}"
            )
        self.llm_calls += 1
        self.calls.append(label)

    def snapshot(self) -> dict[str, float | int]:
        return {"elapsed_ms": round(self.elapsed_ms, 1), "llm_calls": self.llm_calls}
