"""Evaluation: metric functions and runners shared by the notebooks, the tests and the benchmarks.

Runners return pandas DataFrames with one row per item (and per method), so a notebook can
group, plot and write metrics, and a test can assert on the same numbers.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from duocthu.config import PROJECT_ROOT
from duocthu.qdrant_store import QdrantStore
from duocthu.retrieval.packing import pack_evidence
from duocthu.retrieval.policy import EvidencePolicy
from duocthu.retrieval.service import RetrievalService, rank_indication_drugs
from duocthu.sections import SECTION_ORDER, resolve_section
from duocthu.text import count_tokens
from duocthu.types import Hit

EVAL_DIR = PROJECT_ROOT / "data" / "eval"


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


def confusion_table(expected: Sequence[Any], predicted: Sequence[Any]) -> pd.DataFrame:
    return pd.crosstab(
        pd.Series(list(expected), name="expected"), pd.Series(list(predicted), name="predicted"), dropna=False
    )


def _as_set(value: Any) -> set[Any]:
    if isinstance(value, (set, frozenset, list, tuple)):
        return set(value)
    return {value}


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


def load_eval_set(name: str, directory: Path | None = None) -> list[dict[str, Any]]:
    return load_jsonl((directory or EVAL_DIR) / f"{name}.jsonl")


def sample(rows: list[dict[str, Any]], n: int | None, seed: int = 7) -> list[dict[str, Any]]:
    """A deterministic, stratification-free sample (for CI's small runs)."""
    if n is None or n >= len(rows):
        return rows
    import random

    return random.Random(seed).sample(rows, n)


# -- runners -----------------------------------------------------------------------------------------
SECTION_METHODS = ("payload_filter", "keyword_resolver", "dense_top1", "bm25_top1", "hybrid_top1")


def _timed(fn):  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    value = fn()
    return value, (time.perf_counter() - started) * 1000


def evaluate_section_routing(
    retrieval: RetrievalService, rows: Sequence[dict[str, Any]], methods: Sequence[str] = SECTION_METHODS, k: int = 5
) -> pd.DataFrame:
    """Which section each route returns first, per question and method.

    ``payload_filter`` is the section route when the section is named (exact by construction);
    ``keyword_resolver`` is whether the resolver names the right section from the words;
    the others rank the drug's chunks by similarity and take the top chunk's section.
    """
    store = retrieval.store
    records = []
    for row in rows:
        drug, label, question = row["drug_id"], row["section_key"], row["question"]
        for method in methods:
            if method == "payload_filter":
                hits, ms = _timed(lambda: store.find_by_section(drug, label))
                ranked = [h.chunk.section_key for h in hits]
            elif method == "keyword_resolver":
                predicted, ms = _timed(lambda: resolve_section(question))
                ranked = [predicted] if predicted else []
            elif method == "dense_top1":
                hits, ms = _timed(lambda: store.search(retrieval.embed_query(question), limit=k, drug_id=drug))
                ranked = [h.chunk.section_key for h in hits]
            elif method == "bm25_top1":
                hits, ms = _timed(lambda: store.search_bm25(question, limit=k, drug_id=drug))
                ranked = [h.chunk.section_key for h in hits]
            elif method == "hybrid_top1":
                hits, ms = _timed(
                    lambda: store.search_hybrid(question, retrieval.embed_query(question), limit=k, drug_id=drug)
                )
                ranked = [h.chunk.section_key for h in hits]
            else:
                raise ValueError(f"unknown method {method!r}; choose from {SECTION_METHODS}")
            records.append({
                "id": row["id"], "method": method, "drug_id": drug, "section_key": label,
                "predicted": ranked[0] if ranked else None, "hit@1": hit_at_k(ranked, label, 1),
                "hit@3": hit_at_k(ranked, label, 3), "rr": reciprocal_rank(ranked, label), "ms": ms,
                "tags": ",".join(row.get("tags", [])),
            })
    return pd.DataFrame.from_records(records)


def evaluate_pooling(
    retrieval: RetrievalService, rows: Sequence[dict[str, Any]], policy: EvidencePolicy | None = None,
    drug_names: dict[str, list[str]] | None = None,
) -> pd.DataFrame:
    policy = policy or retrieval.policy
    records = []
    for row in rows:
        names = (drug_names or {}).get(row["drug_id"], [])
        pooled, ms = _timed(lambda: retrieval.pooled_neighbour_hits(
            row["drug_id"], row["section_key"], row["question"], names, policy))
        sections = sorted({h.chunk.section_key for h in pooled})
        expected = row.get("expected_pooled_sections", [])
        records.append({
            "id": row["id"], "kind": row["kind"], "drug_id": row["drug_id"], "section_key": row["section_key"],
            "pooled_sections": sections, "expected": expected,
            "recovered": bool(expected) and set(expected) <= set(sections),
            "leaked": bool(set(sections) - set(expected)), "top_score": max((h.score for h in pooled), default=0.0),
            "ms": ms,
        })
    return pd.DataFrame.from_records(records)


def evaluate_indications(
    retrieval: RetrievalService, rows: Sequence[dict[str, Any]], policy: EvidencePolicy | None = None
) -> pd.DataFrame:
    records = []
    for row in rows:
        result, ms = _timed(lambda: retrieval.retrieve_by_indication(row["condition"], policy=policy))
        predicted = [c.drug_id for c in result.candidates]
        expected = row.get("expected_drugs", [])
        precision, recall = precision_recall(predicted, expected)
        records.append({
            "id": row["id"], "kind": row["kind"], "condition": row["condition"], "mode": result.mode,
            "predicted": predicted, "expected": expected, "precision": precision, "recall": recall,
            "false_positive": row["kind"] == "nonsense" and bool(predicted),
            "top_score": result.candidates[0].score if result.candidates else None, "ms": ms,
        })
    return pd.DataFrame.from_records(records)


@dataclass(frozen=True)
class TurnCheck:
    field: str
    expected: Any
    actual: Any

    @property
    def ok(self) -> bool:
        if self.field == "drugs":
            return sorted(self.expected) == sorted(self.actual or [])
        return bool(self.expected == self.actual)


def check_turn(expected: dict[str, Any], reply: dict[str, Any]) -> list[TurnCheck]:
    frame = reply.get("frame") or {}
    actual = {
        "outcome": reply.get("outcome"), "reason": reply.get("reason"), "rule": reply.get("rule"),
        "drugs": frame.get("drugs", []), "section_key": frame.get("section_key"),
    }
    return [TurnCheck(field, value, actual.get(field)) for field, value in expected.items()]


def evaluate_agent(agent: Any, scenarios: Sequence[dict[str, Any]], prefix: str = "eval") -> pd.DataFrame:
    """Run each scenario as one conversation; one row per turn with what matched."""
    records = []
    for scenario in scenarios:
        conversation_id = f"{prefix}-{scenario['id']}-{time.monotonic_ns()}"
        for number, turn in enumerate(scenario["turns"], start=1):
            started = time.perf_counter()
            reply = agent.handle(turn["text"], conversation_id).to_json_dict()
            ms = (time.perf_counter() - started) * 1000
            checks = check_turn(turn["expected"], reply)
            records.append({
                "scenario": scenario["id"], "turn": number, "text": turn["text"],
                "expected_outcome": turn["expected"].get("outcome"), "outcome": reply["outcome"],
                "expected_rule": turn["expected"].get("rule"), "rule": reply["rule"], "reason": reply["reason"],
                "correct": all(c.ok for c in checks),
                "mismatches": "; ".join(f"{c.field}: expected {c.expected!r}, got {c.actual!r}" for c in checks if not c.ok),
                "ms": ms,
            })
    return pd.DataFrame.from_records(records)
