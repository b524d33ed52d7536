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


# -- runners -----------------------------------------------------------------------------------------
SECTION_METHODS = ("payload_filter", "keyword_resolver", "dense_top1", "bm25_top1", "hybrid_top1")


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
    ``keyword_resolver`` is whether the resolver names the right section from the words;
    the others rank the drug's chunks by similarity and take the top chunk's section.
    """
    store = retrieval.store
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
            else:
                raise ValueError(f"unknown method {method!r}; choose from {SECTION_METHODS}")
            records.append({
                "id": row["id"], "method": method, "drug_id": drug, "section_key": label,
                "predicted": ranked[0] if ranked else None, "hit@1": hit_at_k(ranked, label, 1),
                "hit@3": hit_at_k(ranked, label, 3), "rr": reciprocal_rank(ranked, label), "ms": ms,
                "tags": ",".join(row.get("tags", [])),
            })
    return pd.DataFrame.from_records(records)


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
    retrieval: RetrievalService, rows: Sequence[dict[str, Any]], policy: EvidencePolicy | None = None
) -> pd.DataFrame:
    records = []
    for row in rows:
        result, ms = _timed(retrieval.retrieve_by_indication, row["condition"], policy=policy)
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


def agent_summary(turns: pd.DataFrame) -> dict[str, Any]:
    """Outcome accuracy (the outcome alone), turn accuracy (every expected field) and more."""
    if turns.empty:
        return {"turns": 0, "scenarios": 0, "outcome_accuracy": 0.0, "turn_accuracy": 0.0, "scenario_accuracy": 0.0}
    return {
        "turns": len(turns),
        "scenarios": int(turns["scenario"].nunique()),
        "outcome_accuracy": accuracy(zip(turns["expected_outcome"], turns["outcome"], strict=True)),
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
        outcome_ok=turns["expected_outcome"] == turns["outcome"],
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


# -- section routing: what attracts the wrong answers ----------------------------------------------
def attractor_table(routing: pd.DataFrame, method: str = "dense_top1") -> pd.DataFrame:
    """For one method, the sections its wrong top-1 answers land in, most attracting first."""
    wrong = routing[(routing["method"] == method) & (routing["hit@1"] == 0)].copy()
    wrong["predicted"] = wrong["predicted"].fillna(NO_PREDICTION)
    if wrong.empty:
        return pd.DataFrame(columns=["predicted", "wrong_answers", "share_of_wrong", "asked_sections"])
    table = wrong.groupby("predicted").agg(
        wrong_answers=("id", "size"),
        asked_sections=("section_key", lambda s: ", ".join(f"{k}×{n}" for k, n in s.value_counts().items())),
    ).reset_index()
    table["share_of_wrong"] = table["wrong_answers"] / len(wrong)
    return table.sort_values(["wrong_answers", "predicted"], ascending=[False, True]).reset_index(drop=True)[
        ["predicted", "wrong_answers", "share_of_wrong", "asked_sections"]
    ]


def chunk_table(store: QdrantStore, e5_token_count: Callable[[str], int] | None = None) -> pd.DataFrame:
    """Every indexed chunk with its size: characters, ``count_tokens`` and (optionally) e5 tokens.

    ``e5_tokens`` is the text's own tokens: the count the model reports minus what it reports
    for an empty text (its special tokens and ``passage: `` prefix).
    """
    overhead = e5_token_count("") if e5_token_count else 0
    records = []
    for chunk in store.chunks_where():
        record = {
            "doc_id": chunk.doc_id, "drug_id": chunk.drug_id, "section_key": chunk.section_key,
            "part_index": chunk.part_index, "chunk_kind": chunk.chunk_kind.value, "chars": len(chunk.text),
            "tokens": count_tokens(chunk.text),
        }
        if e5_token_count:
            record["e5_tokens"] = e5_token_count(chunk.text) - overhead
        records.append(record)
    frame = pd.DataFrame.from_records(records)
    order = {key: i for i, key in enumerate(SECTION_ORDER)}
    return frame.sort_values(["drug_id", "section_key", "part_index"], key=lambda s: s.map(order) if s.name == "section_key" else s).reset_index(drop=True)


def section_size_table(chunks: pd.DataFrame) -> pd.DataFrame:
    """Per section: how many drugs have it, chunks and tokens per drug, share of a monograph."""
    per_drug = chunks.groupby(["drug_id", "section_key"]).agg(chunks=("doc_id", "size"), tokens=("tokens", "sum")).reset_index()
    per_drug["share_of_monograph"] = per_drug["tokens"] / per_drug.groupby("drug_id")["tokens"].transform("sum")
    table = per_drug.groupby("section_key").agg(
        drugs=("drug_id", "nunique"), chunks_per_drug=("chunks", "mean"), tokens_per_drug=("tokens", "mean"),
        tokens_p90=("tokens", lambda s: s.quantile(0.9)), share_of_monograph=("share_of_monograph", "mean"),
    ).reset_index()
    table["order"] = table["section_key"].map({key: i for i, key in enumerate(SECTION_ORDER)})
    return table.sort_values("order").drop(columns="order").reset_index(drop=True)


# -- pooling sweeps --------------------------------------------------------------------------------
def pooling_grid(
    min_scores: Sequence[float] = (2, 3, 4, 5, 6, 7, 8),
    bm25_min_scores: Sequence[float] = (4, 6, 8, 10, 12, 14, 16, 20),
    enabled: Sequence[str] = ("than_trong", "all"),
    attractor_excluded: Sequence[bool] = (True, False),
) -> list[dict[str, Any]]:
    """Every pooling configuration to measure: scorer × threshold × enabled sections × attractor."""
    grid = []
    for scorer, thresholds in (("count", min_scores), ("bm25", bm25_min_scores)):
        for threshold in thresholds:
            for where in enabled:
                for excluded in attractor_excluded:
                    grid.append({"scorer": scorer, "threshold": float(threshold), "enabled": where,
                                 "attractor_excluded": bool(excluded)})
    return grid


def pooling_policy(base: EvidencePolicy, config: Mapping[str, Any]) -> EvidencePolicy:
    """The policy a :func:`pooling_grid` entry describes, everything else as in ``base``."""
    enabled = SECTION_ORDER if config["enabled"] == "all" else tuple(str(config["enabled"]).split(","))
    excluded = base.lexical_pool_excluded_sections if config["attractor_excluded"] else frozenset()
    threshold_field = "bm25_pool_min_score" if config["scorer"] == "bm25" else "lexical_pool_min_score"
    return base.with_overrides(**{
        "lexical_scorer": config["scorer"], threshold_field: float(config["threshold"]),
        "lexical_pool_enabled_sections": frozenset(enabled), "lexical_pool_excluded_sections": excluded,
    })


class _MemoisingStore:
    """A read-through cache over the two lexical searches pooling makes (sweeps repeat them).

    Results are identical to the store's: ``search_lexical`` is read once per (tokens, drug,
    sections, exclusions) with no minimum and filtered afterwards, which is what the store's own
    ``min_score`` does; everything else is delegated.
    """

    def __init__(self, store: QdrantStore):
        self._store = store
        self._lexical: dict[tuple[Any, ...], list[Hit]] = {}
        self._bm25: dict[tuple[Any, ...], list[Hit]] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def search_lexical(
        self, query_tokens: frozenset[str], drug_id: str, section_keys: Sequence[str] | None = None,
        exclude_sections: Iterable[str] | None = None, min_score: float = 0.0,
    ) -> list[Hit]:
        key = (query_tokens, drug_id, tuple(section_keys) if section_keys is not None else None,
               frozenset(exclude_sections or ()))
        if key not in self._lexical:
            self._lexical[key] = self._store.search_lexical(query_tokens, drug_id, section_keys, exclude_sections)
        return [h for h in self._lexical[key] if h.score >= min_score]

    def search_bm25(self, query: str, limit: int = 5, drug_id: str | None = None, **filters: Any) -> list[Hit]:
        key = (query, limit, drug_id, tuple(sorted((k, str(v)) for k, v in filters.items())))
        if key not in self._bm25:
            self._bm25[key] = self._store.search_bm25(query, limit=limit, drug_id=drug_id, **filters)
        return list(self._bm25[key])


def sweep_pooling(
    retrieval: RetrievalService, rows: Sequence[dict[str, Any]], grid: Sequence[Mapping[str, Any]],
    drug_names: dict[str, list[str]] | None = None, base: EvidencePolicy | None = None,
) -> pd.DataFrame:
    """:func:`evaluate_pooling` for every configuration; config columns prepended.

    The lexical searches are cached across configurations (same results, one search each).
    """
    base = base or retrieval.policy
    cached = RetrievalService(_MemoisingStore(retrieval.store), retrieval.embed_query, retrieval.reranker, base)  # type: ignore[arg-type]
    frames = []
    for config in grid:
        frame = evaluate_pooling(cached, rows, pooling_policy(base, config), drug_names)
        for column, value in reversed(list(config.items())):
            frame.insert(0, column, value)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def pooling_summary(pooled: pd.DataFrame, by: Sequence[str] = ()) -> pd.DataFrame:
    """Recovery and leak rates of pooling results (from :func:`evaluate_pooling`), per configuration.

    * ``recovery_rate`` — ``cross_section`` rows whose expected section(s) were pooled;
    * ``leak_rate`` — ``leak`` rows where pooling added anything (the named section already
      answers them: data/eval/README.md);
    * ``extra_rate`` — ``cross_section`` rows where pooling *also* added an unexpected section;
    * ``unexpected_rate`` — all rows with any unexpected pooled section (the strictest view:
      :func:`leak_rate` over every row).
    """
    def summarise(group: pd.DataFrame) -> pd.Series:
        cross = group[group["kind"] == "cross_section"]
        leaks = group[group["kind"] == "leak"]
        return pd.Series({
            "rows": len(group), "cross_section_rows": len(cross), "leak_rows": len(leaks),
            "recovery_rate": float(cross["recovered"].mean()) if len(cross) else float("nan"),
            "leak_rate": leak_rate(leaks["pooled_sections"], leaks["expected"]) if len(leaks) else float("nan"),
            "extra_rate": leak_rate(cross["pooled_sections"], cross["expected"]) if len(cross) else float("nan"),
            "unexpected_rate": leak_rate(group["pooled_sections"], group["expected"]) if len(group) else 0.0,
            "leaks": int(leaks["leaked"].sum()), "extras": int(cross["leaked"].sum()),
        })

    if not by:
        return summarise(pooled).to_frame().T
    return pooled.groupby(list(by), sort=False)[list(pooled.columns)].apply(summarise).reset_index()


def section_lexical_scores(
    retrieval: RetrievalService, rows: Sequence[dict[str, Any]], drug_names: dict[str, list[str]] | None = None
) -> pd.DataFrame:
    """Best distinct-token count per (question, other section), before any threshold or exclusion.

    ``role`` says whether the section is the expected answer, the known attractor or another one:
    the spread between them is what a single minimum score has to separate.
    """
    from duocthu.lexical import lexical_query_tokens
    from duocthu.sections import SECTION_PHRASES

    attractors = set(retrieval.policy.lexical_pool_excluded_sections)
    records = []
    for row in rows:
        names = (drug_names or {}).get(row["drug_id"], [])
        tokens = lexical_query_tokens(row["question"], exclude=[*names, *SECTION_PHRASES[row["section_key"]]])
        best: dict[str, float] = {}
        for hit in retrieval.store.search_lexical(tokens, row["drug_id"], exclude_sections=[row["section_key"]]):
            best[hit.chunk.section_key] = max(best.get(hit.chunk.section_key, 0.0), hit.score)
        expected = set(row.get("expected_pooled_sections", []))
        for section, score in best.items():
            role = "expected" if section in expected else "attractor" if section in attractors else "other"
            records.append({"id": row["id"], "kind": row["kind"], "section_key": section, "role": role,
                            "score": score, "query_tokens": len(tokens)})
    return pd.DataFrame.from_records(records)


def drug_names_for(resolver: Any, drug_ids: Iterable[str]) -> dict[str, list[str]]:
    """The names the agent passes to pooling for each drug (``DrugResolver.names_of``)."""
    return {drug_id: list(resolver.names_of(drug_id)) for drug_id in dict.fromkeys(drug_ids)}


# -- reverse lookup: modes, the dense threshold, the keyword ranking -------------------------------
INDICATION_MODES = ("keyword", "dense", "hybrid", "keyword_then_dense")


def evaluate_indication_modes(
    retrieval: RetrievalService, rows: Sequence[dict[str, Any]], modes: Sequence[str] = INDICATION_MODES,
    policy: EvidencePolicy | None = None,
) -> pd.DataFrame:
    """:func:`evaluate_indications` once per ``EvidencePolicy.indication_mode``."""
    base = policy or retrieval.policy
    frames = []
    for mode in modes:
        frame = evaluate_indications(retrieval, rows, base.with_overrides(indication_mode=mode))
        frame.insert(0, "policy_mode", mode)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def indication_summary(results: pd.DataFrame, by: Sequence[str] = ("policy_mode",)) -> pd.DataFrame:
    """Precision/recall/MRR on real conditions; false positives on nonsense ones.

    Precision counts an empty answer as 1.0 (nothing wrong was said); ``answered`` shows how
    often a real condition got any drug at all.
    """
    def summarise(group: pd.DataFrame) -> pd.Series:
        real = group[group["kind"] == "real"]
        nonsense = group[group["kind"] == "nonsense"]
        return pd.Series({
            "real": len(real), "nonsense": len(nonsense),
            "precision": float(real["precision"].mean()) if len(real) else float("nan"),
            "recall": float(real["recall"].mean()) if len(real) else float("nan"),
            "mrr": mean_reciprocal_rank(zip(real["predicted"], real["expected"], strict=True)) if len(real) else float("nan"),
            "answered": float((real["predicted"].map(len) > 0).mean()) if len(real) else float("nan"),
            "fp_rate": false_positive_rate(nonsense["predicted"]) if len(nonsense) else float("nan"),
            "fp_count": int(nonsense["predicted"].map(bool).sum()),
        })

    return results.groupby(list(by), sort=False)[list(results.columns)].apply(summarise).reset_index()


def apply_minimum_score(hits: Sequence[Hit], minimum_score: float) -> list[Hit]:
    """The dense fallback's gate (``QdrantStore.search_indication``) applied to a ranked pool:
    nothing if the best hit is under the minimum, else the hits at or above it."""
    if not hits or hits[0].score < minimum_score:
        return []
    return [h for h in hits if h.score >= minimum_score]


def dense_indication_pools(
    retrieval: RetrievalService, rows: Sequence[dict[str, Any]], limit: int | None = None
) -> list[tuple[dict[str, Any], list[Hit]]]:
    """Each condition's dense ``chi_dinh`` pool with no minimum (thresholds applied afterwards)."""
    limit = limit or retrieval.policy.indication_retrieval_limit
    return [
        (row, retrieval.store.search_indication(retrieval.embed_query(row["condition"]), limit, -1.0))
        for row in rows
    ]


def minimum_score_sweep(
    pools: Sequence[tuple[dict[str, Any], list[Hit]]], thresholds: Sequence[float],
    policy: EvidencePolicy, keyword_predictions: Mapping[str, Sequence[str]] | None = None,
) -> pd.DataFrame:
    """Recall, precision and nonsense false-positive rate of the dense fallback per minimum score.

    ``pipeline="dense"`` is dense alone; with ``keyword_predictions`` (row id → drugs found by the
    keyword pass) a ``keyword_then_dense`` row measures the live pipeline, where the dense gate
    only sees what the keyword pass missed.
    """
    records = []
    for threshold in thresholds:
        for row, pool in pools:
            kept = apply_minimum_score(pool, threshold)
            dense = [c.drug_id for c in rank_indication_drugs(
                kept, policy.indication_candidate_limit, policy.indication_evidence_per_drug)]
            variants = {"dense": dense}
            if keyword_predictions is not None:
                keyword = list(keyword_predictions.get(row["id"], []))
                variants["keyword_then_dense"] = keyword or dense
            for pipeline, predicted in variants.items():
                precision, recall = precision_recall(predicted, row.get("expected_drugs", []))
                records.append({
                    "threshold": float(threshold), "pipeline": pipeline, "id": row["id"], "kind": row["kind"],
                    "predicted": predicted, "precision": precision, "recall": recall,
                    "false_positive": row["kind"] == "nonsense" and bool(predicted),
                })
    frame = pd.DataFrame.from_records(records)
    return frame.groupby(["pipeline", "threshold"]).apply(_threshold_row, include_groups=False).reset_index()


def _threshold_row(group: pd.DataFrame) -> pd.Series:
    real = group[group["kind"] == "real"]
    nonsense = group[group["kind"] == "nonsense"]
    return pd.Series({
        "recall": float(real["recall"].mean()) if len(real) else float("nan"),
        "precision": float(real["precision"].mean()) if len(real) else float("nan"),
        "fp_rate": float(nonsense["false_positive"].mean()) if len(nonsense) else float("nan"),
        "fp_count": int(nonsense["false_positive"].sum()),
    })


def recommend_minimum_score(sweep: pd.DataFrame, pipeline: str = "dense") -> dict[str, Any]:
    """The lowest threshold with no nonsense false positive: the best recall among those.

    Recall can only fall as the threshold rises, so the lowest zero-false-positive threshold is
    the best one *on this set*; it sits right above the highest-scoring nonsense phrase, so a
    deployment wants a margin above it. ``same_recall_up_to`` is the highest threshold that
    still keeps that recall.
    """
    rows = sweep[(sweep["pipeline"] == pipeline) & (sweep["fp_count"] == 0)].sort_values("threshold")
    if rows.empty:
        return {"pipeline": pipeline, "recommended": None, "recall": None, "same_recall_up_to": None}
    best = rows.iloc[0]
    tied = rows[rows["recall"] >= best["recall"] - 1e-12]
    return {
        "pipeline": pipeline, "recommended": float(best["threshold"]), "recall": float(best["recall"]),
        "precision": float(best["precision"]), "same_recall_up_to": float(tied["threshold"].max()),
    }


def top_scores(pools: Sequence[tuple[dict[str, Any], list[Hit]]]) -> pd.DataFrame:
    """The best dense similarity each condition reaches (what the minimum score is compared to)."""
    return pd.DataFrame.from_records([
        {"id": row["id"], "kind": row["kind"], "condition": row["condition"],
         "top_score": pool[0].score if pool else float("nan"),
         "top_drug": pool[0].chunk.drug_id if pool else None,
         "top_is_expected": bool(pool) and pool[0].chunk.drug_id in set(row.get("expected_drugs", []))}
        for row, pool in pools
    ])


KEYWORD_SCORINGS: dict[str, Callable[[int, int], float]] = {
    "formula": lambda position, words: 1 + 1 / (1 + position) + 1 / (1 + words / 40),
    "position_only": lambda position, words: 1 + 1 / (1 + position),
    "length_only": lambda position, words: 1 + 1 / (1 + words / 40),
    "flat": lambda position, words: 1.0,
}
"""The keyword ranking ``1 + 1/(1+position) + 1/(1 + words/40)`` (as in
``QdrantStore.find_by_indication``), its two halves, and a flat score (ties by drug id)."""


def keyword_ranking_comparison(
    store: QdrantStore, rows: Sequence[dict[str, Any]], policy: EvidencePolicy,
    scorings: Mapping[str, Callable[[int, int], float]] = KEYWORD_SCORINGS,
) -> pd.DataFrame:
    """Rank each real condition's keyword matches under every scoring; one row per condition × scoring."""
    from duocthu.text import find_phrase, folded_words

    records = []
    for row in rows:
        if row["kind"] != "real":
            continue
        matched = store.find_by_indication(row["condition"])  # every match, before the drug cap
        phrase = folded_words(row["condition"])
        features = []
        for hit in matched:
            tokens = folded_words(hit.chunk.text_folded)
            features.append((hit, find_phrase(tokens, phrase), len(tokens)))
        expected = row.get("expected_drugs", [])
        for name, score in scorings.items():
            rescored = [hit.rescored(score(position, words), hit.score_kind) for hit, position, words in features]
            ranked = [c.drug_id for c in rank_indication_drugs(
                rescored, policy.indication_candidate_limit, policy.indication_evidence_per_drug)]
            _, recall = precision_recall(ranked, expected)
            records.append({
                "id": row["id"], "condition": row["condition"], "scoring": name, "matched_drugs": len({h.chunk.drug_id for h in matched}),
                "ranked": ranked, "expected": expected, "rr": reciprocal_rank(ranked, expected),
                "hit@1": hit_at_k(ranked, expected, 1), "recall@cap": recall,
            })
    return pd.DataFrame.from_records(records)


# -- evidence packing ------------------------------------------------------------------------------
def free_form_rankings(
    retrieval: RetrievalService, rows: Sequence[dict[str, Any]], top_k: int | None
) -> list[tuple[Hit, ...]]:
    """The free-form route's ranked evidence per question, before packing (``top_k=None``: all)."""
    policy = retrieval.policy.with_overrides(rerank_top_k=top_k or 10_000, max_context_tokens=None)
    return [retrieval.retrieve_framed(row["drug_id"], None, row["question"], policy=policy).hits for row in rows]


def budget_sweep(
    rankings: Sequence[Sequence[Hit]], budgets: Sequence[int],
    token_counter: Callable[[str], int] = count_tokens,
) -> pd.DataFrame:
    """Pack every ranking at every budget: how often, and how much, evidence is left out."""
    records = []
    for budget in budgets:
        packs = [pack_evidence(hits, budget, token_counter) for hits in rankings]
        omitted = [len(p.omitted_evidence_ids) for p in packs]
        records.append({
            "budget": int(budget), "questions": len(packs),
            "share_with_omission": sum(1 for n in omitted if n) / len(packs) if packs else 0.0,
            "mean_omitted": sum(omitted) / len(packs) if packs else 0.0,
            "max_omitted": max(omitted, default=0),
            "mean_tokens_used": sum(p.tokens_used for p in packs) / len(packs) if packs else 0.0,
        })
    return pd.DataFrame.from_records(records)


def route_token_table(
    retrieval: RetrievalService, rows: Sequence[dict[str, Any]], drug_names: dict[str, list[str]] | None = None
) -> pd.DataFrame:
    """Evidence tokens each route hands to generation for the same questions.

    ``section``: the labelled section (plus pooling), no budget; ``overview``: the drug's intro
    sections; ``free_form``: reranked top-k packed to the policy's budget.
    """
    records = []
    for row in rows:
        names = (drug_names or {}).get(row["drug_id"], [])
        for route, result in (
            ("section", retrieval.retrieve_framed(row["drug_id"], row["section_key"], row["question"], drug_names=names)),
            ("overview", retrieval.retrieve_framed(row["drug_id"], None, row["question"], is_overview=True)),
            ("free_form", retrieval.retrieve_framed(row["drug_id"], None, row["question"])),
        ):
            records.append({
                "id": row["id"], "drug_id": row["drug_id"], "route": route, "chunks": len(result.hits),
                "tokens": sum(count_tokens(h.text) for h in result.hits),
                "omitted": len(result.pack.omitted_evidence_ids),
            })
    return pd.DataFrame.from_records(records)


def tokenizer_comparison(chunks: pd.DataFrame) -> dict[str, Any]:
    """``count_tokens`` against the e5 tokenizer over chunks (needs ``chunk_table(..., e5)``)."""
    usable = chunks[chunks["e5_tokens"] > 0]
    ratio = usable["tokens"] / usable["e5_tokens"]
    under = usable[usable["tokens"] < usable["e5_tokens"]]
    return {
        "chunks": len(usable),
        "total_ratio": float(usable["tokens"].sum() / usable["e5_tokens"].sum()),
        "median_ratio": float(ratio.median()), "p05_ratio": float(ratio.quantile(0.05)),
        "min_ratio": float(ratio.min()), "max_ratio": float(ratio.max()),
        "share_undercounted": float(len(under) / len(usable)) if len(usable) else 0.0,
        "worst_undercount_tokens": int((under["e5_tokens"] - under["tokens"]).max()) if len(under) else 0,
    }


def pack_token_comparison(
    rankings: Sequence[Sequence[Hit]], budget: int, e5_token_count: Callable[[str], int]
) -> pd.DataFrame:
    """Per packed question: tokens by ``count_tokens`` (what the budget sees) and by e5."""
    overhead = e5_token_count("")
    records = []
    for index, hits in enumerate(rankings):
        pack = pack_evidence(hits, budget)
        e5 = sum(e5_token_count(h.text) - overhead for h in pack.hits)
        records.append({"question": index, "count_tokens": pack.tokens_used, "e5_tokens": e5,
                        "over_budget_by_e5": e5 > budget})
    return pd.DataFrame.from_records(records)
