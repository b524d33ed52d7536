"""Sweeps and tables the notebooks plot: attractors, pooling grids, the dense floor, packing budgets."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from duocthu.evaluation.metrics import (
    NO_PREDICTION,
    false_positive_rate,
    hit_at_k,
    leak_rate,
    mean_reciprocal_rank,
    precision_recall,
    reciprocal_rank,
)
from duocthu.evaluation.runners import evaluate_indications, evaluate_pooling
from duocthu.qdrant_store import QdrantStore
from duocthu.retrieval.packing import pack_evidence
from duocthu.retrieval.policy import EvidencePolicy
from duocthu.retrieval.service import RetrievalService, rank_indication_drugs
from duocthu.sections import SECTION_ORDER
from duocthu.text import count_tokens
from duocthu.types import Hit


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
            **({"recall_at_cap": float(real["recall_at_cap"].mean()) if len(real) else float("nan")}
               if "recall_at_cap" in group else {}),
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

