"""Evaluation sets: loading, deterministic samples, metrics JSON."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from duocthu.config import PROJECT_ROOT

EVAL_DIR = PROJECT_ROOT / "data" / "eval"


# -- data --------------------------------------------------------------------------------------------
def load_jsonl(path: Path | str) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: {exc.msg}") from exc
    return rows


EVAL_SETS = ("section_routing", "pooling", "indications", "agent", "safety", "answers", "signals")
SPLITS = ("dev", "test")


def eval_set_path(name: str, split: str = "dev", directory: Path | None = None) -> Path:
    """``data/eval/<name>/<split>.jsonl``: every set has a *dev* part (tune on it) and a *test* part.

    The test part is committed before the change it measures and never edited afterwards;
    ``indications`` also has ``consistency`` (labels made by the keyword rule itself).
    """
    return (directory or EVAL_DIR) / name / f"{split}.jsonl"


def load_eval_set(name: str, directory: Path | None = None, split: str = "dev") -> list[dict[str, Any]]:
    path = eval_set_path(name, split, directory)
    if not path.exists():
        raise FileNotFoundError(f"no evaluation file {path} (sets: {', '.join(EVAL_SETS)}; splits: dev, test)")
    return load_jsonl(path)


def sample(rows: list[dict[str, Any]], n: int | None, seed: int = 7) -> list[dict[str, Any]]:
    """A deterministic, stratification-free sample (for CI's small runs)."""
    if n is None or n >= len(rows):
        return rows
    return random.Random(seed).sample(rows, n)


def stratified_sample(
    rows: Sequence[dict[str, Any]], n: int | None, key: str | Callable[[dict[str, Any]], Any], seed: int = 7
) -> list[dict[str, Any]]:
    """``n`` rows taken round-robin across the values of ``row[key]`` (or ``key(row)``), in file order.

    Every stratum (section, kind …) is represented as long as ``n`` allows, so a small CI run
    still measures each group. Deterministic for a given ``seed``.

    >>> rows = [{"k": "a", "i": i} for i in range(5)] + [{"k": "b", "i": 9}]
    >>> sorted(r["k"] for r in stratified_sample(rows, 2, "k"))
    ['a', 'b']
    """
    if n is None or n >= len(rows):
        return list(rows)
    rng = random.Random(seed)
    groups: dict[Any, list[int]] = {}
    for index, row in enumerate(rows):
        stratum = key(row) if callable(key) else row.get(key)
        groups.setdefault(str(stratum), []).append(index)
    for indices in groups.values():
        rng.shuffle(indices)
    chosen: list[int] = []
    while len(chosen) < n:
        for stratum in sorted(groups):
            if groups[stratum] and len(chosen) < n:
                chosen.append(groups[stratum].pop())
    return [rows[i] for i in sorted(chosen)]


def write_metrics(path: Path | str, metrics: Mapping[str, Any]) -> Path:
    """Write a notebook's metrics as strict JSON: numpy/pandas scalars converted, NaN and NA → null."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(_plain(metrics), ensure_ascii=False, indent=2, allow_nan=False)
    target.write_text(text + "\n", encoding="utf-8")
    return target


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(_plain(v) for v in value)
    if isinstance(value, Path):
        return str(value)
    if value is None or isinstance(value, (str, bool)):
        return value
    if hasattr(value, "tolist") and getattr(value, "ndim", 0) > 0:  # arrays, series
        return _plain(value.tolist())
    if hasattr(value, "item"):  # numpy / pandas scalars
        value = value.item()
    try:
        if pd.isna(value):
            return None
    except (TypeError, ValueError):
        pass
    if isinstance(value, float) and math.isinf(value):
        return None
    if isinstance(value, (int, float)):
        return value
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


