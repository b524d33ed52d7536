"""cProfile of a few turns: where the time of the slowest route goes (kept in the report)."""

from __future__ import annotations

import cProfile
import pstats
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from duocthu.config import PROJECT_ROOT


def _where(filename: str, line: int, name: str) -> str:
    path = Path(filename)
    try:
        shown = str(path.relative_to(PROJECT_ROOT))
    except ValueError:
        parts = path.parts
        shown = "/".join(parts[parts.index("site-packages") + 1 :]) if "site-packages" in parts else filename
    return f"{shown}:{line}({name})"


def profile_turns(runtime: Any, texts: Sequence[str], turns: int, top: int = 12) -> dict[str, Any]:
    """Profile ``turns`` turns cycling through ``texts``; the heaviest functions per turn."""
    if not texts or turns <= 0:
        return {}
    runtime.agent.handle(texts[0], "profile-warmup")
    profiler = cProfile.Profile()
    profiler.enable()
    for i in range(turns):
        runtime.agent.handle(texts[i % len(texts)], f"profile-{i}")
    profiler.disable()
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    rows = []
    for (filename, line, name), (_cc, calls, own, cum, _callers) in stats.items():
        rows.append({"function": _where(filename, line, name), "calls_per_turn": round(calls / turns, 1),
                     "own_ms_per_turn": round(own * 1000 / turns, 2), "cum_ms_per_turn": round(cum * 1000 / turns, 2),
                     "ours": "/duocthu/" in filename})
    ours = sorted((r for r in rows if r["ours"] and not r["function"].endswith("(handle)")),
                  key=lambda r: -r["cum_ms_per_turn"])[:top]
    own = sorted(rows, key=lambda r: -r["own_ms_per_turn"])[: top // 2]
    return {"turns": turns, "by_cumulative": ours, "by_own_time": own}
