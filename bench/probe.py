"""Run the agent and time what each turn spent in retrieval, without touching product code.

The probe wraps the retrieval service's public entry points (and the understander, for turns
that clarify before retrieving) on one runtime instance, so a single ``agent.handle`` call yields
both the full-turn time and the route time — the calls the agent itself made, in place.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.measure import Summary
from bench.questions import ROUTES, actual_route


@dataclass
class RouteProbe:
    retrieval_ms: float = 0.0
    understanding_ms: float = 0.0

    def reset(self) -> None:
        self.retrieval_ms = 0.0
        self.understanding_ms = 0.0


def _wrap(owner: Any, name: str, add: Callable[[float], None]) -> None:
    original = getattr(owner, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            add((time.perf_counter() - started) * 1000)

    setattr(owner, name, timed)


def install(runtime: Any) -> RouteProbe:
    """Instrument one runtime's retrieval service and understander (instance attributes only)."""
    probe = RouteProbe()

    def add_retrieval(ms: float) -> None:
        probe.retrieval_ms += ms

    def add_understanding(ms: float) -> None:
        probe.understanding_ms += ms

    for name in ("retrieve_framed", "retrieve_by_indication"):
        _wrap(runtime.retrieval, name, add_retrieval)
    _wrap(runtime.agent.understander, "understand", add_understanding)
    return probe


@dataclass
class TurnSamples:
    turn_ms: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    route_ms: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    landed: dict[str, dict[str, int]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(int)))
    other_reasons: dict[str, int] = field(default_factory=lambda: defaultdict(int))  # "outcome/reason" of "other"

    def summaries(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for route in (*ROUTES, "other"):
            if self.turn_ms.get(route):
                out[route] = {
                    "turn": Summary.of(self.turn_ms[route]).as_dict(),
                    "route": Summary.of(self.route_ms[route]).as_dict(),
                }
        every = [ms for route in self.turn_ms for ms in self.turn_ms[route]]
        if every:
            out["all"] = {"turn": Summary.of(every).as_dict()}
        return out


def run_turns(
    runtime: Any, probe: RouteProbe, questions: Mapping[str, Sequence[str]], repeats: int,
    budget_s_per_route: float | None = None, min_samples: int = 3,
) -> TurnSamples:
    """Each question as a fresh conversation, ``repeats`` times; filed under the route it took.

    The route time of a clarify turn is its understanding + routing time (it retrieves nothing);
    of every other route, the time spent in the retrieval service.
    """
    samples = TurnSamples()
    counter = 0
    for intended, texts in questions.items():
        for text in texts[:1]:  # warm-up, not recorded
            runtime.agent.handle(text, f"warmup-{intended}")
        started = time.perf_counter()
        taken = 0
        for _ in range(repeats):
            for text in texts:
                counter += 1
                probe.reset()
                t0 = time.perf_counter()
                reply = runtime.agent.handle(text, f"bench-{counter}")
                turn_ms = (time.perf_counter() - t0) * 1000
                route = actual_route(reply)
                samples.turn_ms[route].append(turn_ms)
                samples.route_ms[route].append(
                    probe.understanding_ms if route == "clarify" else probe.retrieval_ms
                )
                samples.landed[intended][route] += 1
                if route == "other":
                    samples.other_reasons[f"{reply.outcome}/{reply.reason}"] += 1
                taken += 1
                if budget_s_per_route and time.perf_counter() - started > budget_s_per_route and taken >= min_samples:
                    break
            else:
                continue
            break
    return samples
