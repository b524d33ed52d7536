"""Runners: one DataFrame row per item (and per method) for routing, pooling, reverse lookup, the agent."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from duocthu.budget import RequestBudget
from duocthu.evaluation.checks import check_turn
from duocthu.evaluation.metrics import hit_at_k, precision_recall, reciprocal_rank
from duocthu.retrieval.policy import EvidencePolicy
from duocthu.retrieval.service import RetrievalService
from duocthu.runtime import understanding_parts
from duocthu.sections import resolve_section
from duocthu.types import Hit
from duocthu.understanding.base import QueryUnderstander

# -- runners -----------------------------------------------------------------------------------------
SECTION_METHODS = ("payload_filter", "keyword_resolver", "dense_top1", "bm25_top1", "hybrid_top1")
UNDERSTANDER_METHOD_PREFIX = "understander:"  # e.g. "understander:learned": the section a whole understander names


def _timed(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, float]:
    """``fn(*args, **kwargs)`` and its wall time in milliseconds."""
    started = time.perf_counter()
    value = fn(*args, **kwargs)
    return value, (time.perf_counter() - started) * 1000


def evaluate_section_routing(
    retrieval: RetrievalService, rows: Sequence[dict[str, Any]], methods: Sequence[str] = SECTION_METHODS, k: int = 5
) -> pd.DataFrame:
    """Which section each route returns first, per question and method.

    ``payload_filter`` is the section route when the section is named (exact by construction);
    ``keyword_resolver`` is whether the first version's phrase resolver names the right section;
    ``understander:<name>`` (``learned``, ``rules``) whether that understander's frame does, on the
    question alone; the others rank the drug's chunks by similarity and take the top chunk's section.
    """
    store = retrieval.store
    understanders = {m: _understander(retrieval, m.removeprefix(UNDERSTANDER_METHOD_PREFIX))
                     for m in methods if m.startswith(UNDERSTANDER_METHOD_PREFIX)}
    records = []
    for row in rows:
        drug, label, question = row["drug_id"], row["section_key"], row["question"]
        for method in methods:
            if method == "payload_filter":
                hits, ms = _timed(store.find_by_section, drug, label)
                ranked = [h.chunk.section_key for h in hits]
            elif method == "keyword_resolver":
                predicted, ms = _timed(resolve_section, question)
                ranked = [predicted] if predicted else []
            elif method == "dense_top1":
                hits, ms = _timed(_dense_search, retrieval, question, k, drug)
                ranked = [h.chunk.section_key for h in hits]
            elif method == "bm25_top1":
                hits, ms = _timed(store.search_bm25, question, limit=k, drug_id=drug)
                ranked = [h.chunk.section_key for h in hits]
            elif method == "hybrid_top1":
                hits, ms = _timed(_hybrid_search, retrieval, question, k, drug)
                ranked = [h.chunk.section_key for h in hits]
            elif method in understanders:
                frame, ms = _timed(understanders[method].understand, question, [], RequestBudget(), None)
                # An uncertain frame names no section (the agent asks, offering the candidates):
                # a miss at 1, a hit at 3 when the labelled section is among the quick replies.
                ranked = [frame.section_key or "—", *(c for c in frame.section_candidates if c != frame.section_key)]
            else:
                raise ValueError(f"unknown method {method!r}; choose from {SECTION_METHODS} "
                                 f"or {UNDERSTANDER_METHOD_PREFIX}<name>")
            records.append({
                "id": row["id"], "method": method, "drug_id": drug, "section_key": label,
                "predicted": ranked[0] if ranked and ranked[0] != "—" else None, "hit@1": hit_at_k(ranked, label, 1),
                "hit@3": hit_at_k(ranked, label, 3), "rr": reciprocal_rank(ranked, label), "ms": ms,
                "tags": ",".join(row.get("tags", [])),
            })
    return pd.DataFrame.from_records(records)


def _understander(retrieval: RetrievalService, name: str) -> QueryUnderstander:
    from duocthu.evaluation.understanding import understander_for

    parts = understanding_parts(retrieval.store, retrieval.embed_query, None)
    return understander_for(retrieval.store, name, parts)


def _dense_search(retrieval: RetrievalService, question: str, k: int, drug: str) -> list[Hit]:
    return retrieval.store.search(retrieval.embed_query(question), limit=k, drug_id=drug)


def _hybrid_search(retrieval: RetrievalService, question: str, k: int, drug: str) -> list[Hit]:
    return retrieval.store.search_hybrid(question, retrieval.embed_query(question), limit=k, drug_id=drug)


def evaluate_pooling(
    retrieval: RetrievalService, rows: Sequence[dict[str, Any]], policy: EvidencePolicy | None = None,
    drug_names: dict[str, list[str]] | None = None,
) -> pd.DataFrame:
    policy = policy or retrieval.policy
    records = []
    for row in rows:
        names = (drug_names or {}).get(row["drug_id"], [])
        pooled, ms = _timed(
            retrieval.pooled_neighbour_hits, row["drug_id"], row["section_key"], row["question"], names, policy
        )
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
    retrieval: RetrievalService, rows: Sequence[dict[str, Any]], policy: EvidencePolicy | None = None,
    alternatives: Callable[[str], Sequence[str]] | None = None,
) -> pd.DataFrame:
    """One row per condition: the drugs reverse lookup returns against the labelled ones.

    ``alternatives`` gives the condition in the book's words (what the agent passes from the
    condition lexicon); without it only the user's words are searched. ``acceptable_drugs`` (hand
    labels) count as right when returned and are not missed when absent; ``recall_at_cap`` divides
    by the drugs the answer can show at most (``indication_candidate_limit``).
    """
    policy = policy or retrieval.policy
    records = []
    for row in rows:
        condition = row["condition"]
        others = list(alternatives(condition)) if alternatives else []
        result, ms = _timed(retrieval.retrieve_by_indication, condition, policy=policy, alternatives=others)
        predicted = [c.drug_id for c in result.candidates]
        expected = row.get("expected_drugs", [])
        acceptable = row.get("acceptable_drugs", [])
        precision, recall = precision_recall(predicted, expected)
        if predicted:
            precision = len(set(predicted) & (set(expected) | set(acceptable))) / len(set(predicted))
        shown_at_most = min(len(set(expected)), policy.indication_candidate_limit)
        records.append({
            "id": row["id"], "kind": row["kind"], "condition": condition, "mode": result.mode,
            "alternatives": others, "predicted": predicted, "expected": expected, "acceptable": acceptable,
            "precision": precision, "recall": recall,
            "recall_at_cap": len(set(predicted) & set(expected)) / shown_at_most if shown_at_most else 1.0,
            "false_positive": row["kind"] == "nonsense" and bool(predicted),
            "top_score": result.candidates[0].score if result.candidates else None, "ms": ms,
        })
    return pd.DataFrame.from_records(records)


def evaluate_agent(agent: Any, scenarios: Sequence[dict[str, Any]], prefix: str = "eval") -> pd.DataFrame:
    """Run each scenario as one conversation; one row per turn with what matched.

    Columns include the scenario's ``kind`` and ``rewords`` (test sets), each check's result as
    ``check_<name>`` (True/False, missing when the label does not give it), and the frame's section.
    """
    records = []
    for scenario in scenarios:
        conversation_id = f"{prefix}-{scenario['id']}-{time.monotonic_ns()}"
        for number, turn in enumerate(scenario["turns"], start=1):
            started = time.perf_counter()
            reply = agent.handle(turn["text"], conversation_id).to_json_dict()
            ms = (time.perf_counter() - started) * 1000
            checks = check_turn(turn["expected"], reply)
            expected_outcome = turn["expected"].get("outcome")
            records.append({
                "scenario": scenario["id"], "kind": scenario.get("kind"), "rewords": scenario.get("rewords"),
                "turn": number, "text": turn["text"],
                "expected_outcome": expected_outcome if isinstance(expected_outcome, str) else "|".join(expected_outcome or []),
                "outcome": reply["outcome"], "outcome_ok": next((c.ok for c in checks if c.field == "outcome"), True),
                "expected_rule": turn["expected"].get("rule"), "rule": reply["rule"], "reason": reply["reason"],
                "expected_section": turn["expected"].get("section_key", "—"),
                "section": (reply.get("frame") or {}).get("section_key"),
                "correct": all(c.ok for c in checks),
                **{f"check_{c.field}": c.ok for c in checks},
                "mismatches": "; ".join(f"{c.field}: expected {c.expected!r}, got {c.actual!r}" for c in checks if not c.ok),
                "expected": turn["expected"], "safety": reply.get("safety") or [], "ms": ms,
            })
    return pd.DataFrame.from_records(records)


def _outcome_ok(turns: pd.DataFrame) -> pd.Series:
    """Whether each turn's outcome matched (a label may allow several outcomes)."""
    if "outcome_ok" in turns:
        return turns["outcome_ok"].astype(bool)
    return turns["expected_outcome"] == turns["outcome"]


def agent_summary(turns: pd.DataFrame) -> dict[str, Any]:
    """Outcome accuracy (the outcome alone), turn accuracy (every expected field) and more."""
    if turns.empty:
        return {"turns": 0, "scenarios": 0, "outcome_accuracy": 0.0, "turn_accuracy": 0.0, "scenario_accuracy": 0.0}
    return {
        "turns": len(turns),
        "scenarios": int(turns["scenario"].nunique()),
        "outcome_accuracy": float(_outcome_ok(turns).mean()),
        "turn_accuracy": float(turns["correct"].mean()),
        "scenario_accuracy": float(turns.groupby("scenario")["correct"].all().mean()),
        "latency_ms_p50": float(turns["ms"].median()),
        "latency_ms_p95": float(turns["ms"].quantile(0.95)),
    }


def per_rule_table(turns: pd.DataFrame) -> pd.DataFrame:
    """One row per routing-table row: how often it fired and was right, how often it was expected
    and fired (``rule_recall``), with the table's own condition and outcome."""
    from duocthu.agent.routing import ROUTING_TABLE

    conditions = {rule.number: rule.condition for rule in ROUTING_TABLE}
    outcomes = {rule.number: rule.outcome for rule in ROUTING_TABLE}
    frame = turns.assign(
        rule=turns["rule"].astype("Int64"), expected_rule=turns["expected_rule"].astype("Int64"),
        outcome_ok=_outcome_ok(turns),
    )
    frame = frame.assign(rule_ok=(frame["rule"] == frame["expected_rule"]).fillna(False))
    fired = frame.groupby("rule", dropna=False).agg(
        fired=("turn", "size"), outcome_accuracy=("outcome_ok", "mean"), turn_accuracy=("correct", "mean"),
    )
    expected = frame.dropna(subset=["expected_rule"]).groupby("expected_rule").agg(
        expected=("turn", "size"), rule_recall=("rule_ok", "mean"),
    )
    expected.index.name = "rule"
    table = fired.join(expected, how="outer").reset_index()
    table[["fired", "expected"]] = table[["fired", "expected"]].fillna(0).astype(int)
    table["condition"] = [conditions.get(r) if pd.notna(r) else "(no rule: the turn failed)" for r in table["rule"]]
    table["table_outcome"] = [outcomes.get(r) if pd.notna(r) else "" for r in table["rule"]]
    return table


def clarify_turns(turns: pd.DataFrame) -> pd.DataFrame:
    """Per conversation: how many turns the agent spent asking back, and how many it expected to."""
    return turns.assign(
        clarify=turns["outcome"] == "clarify", expected_clarify=turns["expected_outcome"] == "clarify",
    ).groupby("scenario").agg(
        turns=("turn", "size"), clarify_turns=("clarify", "sum"), expected_clarify_turns=("expected_clarify", "sum"),
    ).reset_index()


