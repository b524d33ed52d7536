"""Metric functions: hit@k, MRR, precision/recall, leak and false-positive rates, confusion tables."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd


# -- metrics ---------------------------------------------------------------------------------------
def hit_at_k(ranked: Sequence[Any], relevant: Any | Iterable[Any], k: int = 1) -> float:
    """1.0 if any relevant item is among the first ``k`` ranked items."""
    wanted = _as_set(relevant)
    return float(any(item in wanted for item in list(ranked)[:k]))


def reciprocal_rank(ranked: Sequence[Any], relevant: Any | Iterable[Any]) -> float:
    wanted = _as_set(relevant)
    for position, item in enumerate(ranked, start=1):
        if item in wanted:
            return 1.0 / position
    return 0.0


def mean_reciprocal_rank(rankings: Iterable[tuple[Sequence[Any], Any]]) -> float:
    values = [reciprocal_rank(ranked, relevant) for ranked, relevant in rankings]
    return sum(values) / len(values) if values else 0.0


def precision_recall(predicted: Iterable[Any], expected: Iterable[Any]) -> tuple[float, float]:
    """Precision and recall of a set; an empty prediction has precision 1.0 (nothing wrong)."""
    p, e = set(predicted), set(expected)
    precision = len(p & e) / len(p) if p else 1.0
    recall = len(p & e) / len(e) if e else 1.0
    return precision, recall


def leak_rate(pooled: Iterable[Iterable[Any]], allowed: Iterable[Iterable[Any]]) -> float:
    """Share of items where pooling added anything outside what was allowed."""
    pairs = list(zip(pooled, allowed, strict=True))
    if not pairs:
        return 0.0
    return sum(1 for got, ok in pairs if set(got) - set(ok)) / len(pairs)


def false_positive_rate(predictions: Iterable[Iterable[Any]]) -> float:
    """Share of items (that should return nothing) for which something was returned."""
    items = [list(p) for p in predictions]
    return sum(1 for p in items if p) / len(items) if items else 0.0


def accuracy(pairs: Iterable[tuple[Any, Any]]) -> float:
    items = list(pairs)
    return sum(1 for expected, got in items if expected == got) / len(items) if items else 0.0


NO_PREDICTION = "(none)"


def confusion_table(expected: Sequence[Any], predicted: Sequence[Any]) -> pd.DataFrame:
    """Counts of (expected, predicted) pairs; a missing prediction (``None``) is its own column."""
    def labels(values: Sequence[Any]) -> list[Any]:
        return [NO_PREDICTION if v is None or (isinstance(v, float) and math.isnan(v)) else v for v in values]

    return pd.crosstab(
        pd.Series(labels(expected), name="expected", dtype=object),
        pd.Series(labels(predicted), name="predicted", dtype=object),
    )


def _as_set(value: Any) -> set[Any]:
    if isinstance(value, (set, frozenset, list, tuple)):
        return set(value)
    return {value}


