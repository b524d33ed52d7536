"""The performance targets, each read from one figure of a run (printed as met/missed, never asserted)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Target:
    name: str
    limit: float
    unit: str
    read: Callable[[dict[str, Any]], float | None]  # the figure from the results, None if not measured
    where: str  # which figure, in words


def _stage(results: dict[str, Any], key: str) -> dict[str, Any] | None:
    record = results["stages"].get(key)
    return record["result"] if record and record.get("ok") else None


def _demo_all(q: str) -> Callable[[dict[str, Any]], float | None]:
    def read(results: dict[str, Any]) -> float | None:
        demo = _stage(results, "demo")
        return demo["turns"]["all"]["turn"][q] if demo else None
    return read


def _section_at_30k(results: dict[str, Any]) -> float | None:
    tier = section_tier(results)
    return tier["turns"]["section"]["route"]["p50"] if tier and "section" in tier.get("turns", {}) else None


def section_tier(results: dict[str, Any]) -> dict[str, Any] | None:
    """The synthetic tier closest to 30k chunks (the target's size)."""
    tiers = [(abs(r["chunks"] - 30_000), r) for k, v in results["stages"].items()
             if k.startswith("synthetic_") and v.get("ok") and (r := v["result"])]
    return min(tiers, key=lambda t: t[0])[1] if tiers else None


def _index_from_cache(results: dict[str, Any]) -> float | None:
    commands = _stage(results, "commands")
    return commands["index"]["process_wall_s"] if commands else None


def _batch(results: dict[str, Any]) -> float | None:
    commands = _stage(results, "commands")
    return commands["batch"]["process_wall_s"] if commands else None


def _understanding(figure: str) -> Callable[[dict[str, Any]], float | None]:
    def read(results: dict[str, Any]) -> float | None:
        demo = _stage(results, "demo")
        return demo["understanding"][figure]["p50"] if demo and "understanding" in demo else None
    return read


TARGETS: tuple[Target, ...] = (
    Target("offline turn p50, demo size", 30, "ms", _demo_all("p50"), "every turn of the demo latency run"),
    Target("offline turn p95, demo size", 100, "ms", _demo_all("p95"), "every turn of the demo latency run"),
    Target("section route p50 at ~30k chunks (embedded default, exact lookup)", 20, "ms", _section_at_30k,
           "time in the retrieval service of section turns, synthetic tier nearest 30k chunks"),
    Target("index build from the cache, demo size", 10, "s", _index_from_cache,
           "`duocthu index` into an empty home, whole process wall time"),
    Target("batch evaluation of 1,000 turns", 60, "s", _batch,
           "`duocthu batch` of the batch file, whole process wall time"),
    Target("query understanding p50 per turn (issue 12)", 15, "ms", _understanding("understanding_fresh_embedding"),
           "the served understander on distinct questions, query embedding computed fresh"),
    Target("safety screen p50 per turn (issue 11)", 5, "ms", _understanding("screen_with_patient_facts"),
           "`RagAgent.screen` on turns that carry patient facts"),
)


def evaluate(results: dict[str, Any]) -> list[tuple[Target, float | None, str]]:
    rows = []
    for target in TARGETS:
        value = target.read(results)
        verdict = "not measured" if value is None else ("met" if value <= target.limit else "MISSED")
        rows.append((target, value, verdict))
    return rows
