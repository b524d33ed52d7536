"""Metric functions and summaries of duocthu.evaluation, on tiny hand-made inputs."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from duocthu import evaluation as ev
from duocthu.retrieval.policy import EvidencePolicy
from duocthu.text import count_tokens
from duocthu.types import Chunk, ChunkKind, Hit, ScoreKind


def _hit(drug_id: str, score: float, part: int = 0, section: str = "chi_dinh") -> Hit:
    chunk = Chunk(
        doc_id=Chunk.make_doc_id(drug_id, section, part), drug_id=drug_id, display_name=drug_id.title(),
        section_key=section, section_title="Chỉ định", part_index=part, chunk_kind=ChunkKind.PROSE,
        text="văn bản " * (part + 1), text_folded="van ban " * (part + 1), source_refs=("p. 1",),
    )
    return Hit(chunk, score, ScoreKind.SIMILARITY, "test")


# -- ranking metrics -------------------------------------------------------------------------------
def test_hit_at_k():
    assert ev.hit_at_k(["a", "b", "c"], "a", 1) == 1.0
    assert ev.hit_at_k(["a", "b", "c"], "c", 2) == 0.0
    assert ev.hit_at_k(["a", "b", "c"], "c", 3) == 1.0
    assert ev.hit_at_k(["a", "b"], {"x", "b"}, 2) == 1.0
    assert ev.hit_at_k([], "a", 5) == 0.0


def test_reciprocal_rank_and_mrr():
    assert ev.reciprocal_rank(["a", "b", "c"], "b") == 0.5
    assert ev.reciprocal_rank(["a", "b", "c"], ["c", "b"]) == 0.5  # the first relevant item counts
    assert ev.reciprocal_rank(["a"], "z") == 0.0
    assert ev.mean_reciprocal_rank([(["a", "b"], "a"), (["a", "b"], "b"), (["a"], "z")]) == pytest.approx(0.5)
    assert ev.mean_reciprocal_rank([]) == 0.0


def test_precision_recall():
    assert ev.precision_recall(["a", "b"], ["b", "c", "d", "e"]) == (0.5, 0.25)
    assert ev.precision_recall([], ["a"]) == (1.0, 0.0)  # saying nothing is not saying something wrong
    assert ev.precision_recall(["a"], []) == (0.0, 1.0)
    assert ev.precision_recall(["a", "a"], ["a"]) == (1.0, 1.0)  # sets, not lists


def test_leak_rate():
    pooled = [["chong_chi_dinh"], ["chong_chi_dinh", "tuong_tac_thuoc"], [], ["duoc_ly"]]
    allowed = [["chong_chi_dinh"], ["chong_chi_dinh"], [], []]
    assert ev.leak_rate(pooled, allowed) == 0.5
    assert ev.leak_rate([], []) == 0.0
    with pytest.raises(ValueError):
        ev.leak_rate([["a"]], [])


def test_false_positive_rate():
    assert ev.false_positive_rate([[], ["ibuprofen"], [], []]) == 0.25
    assert ev.false_positive_rate([]) == 0.0


def test_accuracy():
    assert ev.accuracy([("clarify", "clarify"), ("abstain", "answerable")]) == 0.5
    assert ev.accuracy([]) == 0.0


def test_confusion_table_counts_and_missing_prediction():
    table = ev.confusion_table(["a", "b", "b", "b"], ["a", "a", None, "b"])
    assert table.loc["a", "a"] == 1
    assert table.loc["b", "a"] == 1
    assert table.loc["b", "b"] == 1
    assert table.loc["b", ev.NO_PREDICTION] == 1
    assert int(table.to_numpy().sum()) == 4


# -- sampling and metrics files --------------------------------------------------------------------
def test_stratified_sample_covers_every_stratum_deterministically():
    rows = [{"id": i, "k": "big"} for i in range(20)] + [{"id": 100, "k": "rare"}, {"id": 101, "k": "other"}]
    picked = ev.stratified_sample(rows, 5, key="k")
    assert len(picked) == 5
    assert {r["k"] for r in picked} == {"big", "rare", "other"}
    assert picked == ev.stratified_sample(rows, 5, key="k")  # same seed, same sample
    assert [r["id"] for r in picked] == sorted(r["id"] for r in picked)  # file order kept
    assert ev.stratified_sample(rows, None, key="k") == rows
    assert len(ev.stratified_sample(rows, 3, key=lambda r: r["id"] % 2)) == 3


def test_write_metrics_converts_numpy_and_pandas(tmp_path):
    import numpy as np

    path = ev.write_metrics(tmp_path / "deep" / "m.json", {
        "a": np.float64(0.5), "b": np.int64(3), "c": pd.Series([1, 2]).mean(), "d": {"x"}, "e": (1, 2),
        "f": float("nan"), "g": pd.NA, "h": np.array([1, 2]), 7: {"nested": np.bool_(True)},
    })
    assert json.loads(path.read_text()) == {
        "a": 0.5, "b": 3, "c": 1.5, "d": ["x"], "e": [1, 2], "f": None, "g": None, "h": [1, 2], "7": {"nested": True},
    }
    with pytest.raises(TypeError):
        ev.write_metrics(tmp_path / "bad.json", {"x": object()})


# -- summaries -------------------------------------------------------------------------------------
def _pooling_rows() -> pd.DataFrame:
    return pd.DataFrame.from_records([
        {"kind": "cross_section", "pooled_sections": ["chong_chi_dinh"], "expected": ["chong_chi_dinh"]},
        {"kind": "cross_section", "pooled_sections": ["chong_chi_dinh", "tuong_tac_thuoc"], "expected": ["chong_chi_dinh"]},
        {"kind": "cross_section", "pooled_sections": [], "expected": ["chong_chi_dinh"]},
        {"kind": "leak", "pooled_sections": [], "expected": []},
        {"kind": "leak", "pooled_sections": ["duoc_ly_va_co_che_tac_dung"], "expected": []},
    ]).assign(
        recovered=[True, True, False, False, False], leaked=[False, True, False, False, True],
    )


def test_pooling_summary_separates_leaks_from_extras():
    row = ev.pooling_summary(_pooling_rows()).iloc[0]
    assert row["recovery_rate"] == pytest.approx(2 / 3)
    assert row["leak_rate"] == pytest.approx(1 / 2)  # leak rows only
    assert row["extra_rate"] == pytest.approx(1 / 3)  # cross-section rows that pooled more
    assert row["unexpected_rate"] == pytest.approx(2 / 5)
    assert (row["leaks"], row["extras"]) == (1, 1)


def test_pooling_grid_and_policy():
    grid = ev.pooling_grid(min_scores=[4, 5], bm25_min_scores=[10], enabled=["than_trong", "all"], attractor_excluded=[True])
    assert len(grid) == (2 + 1) * 2
    base = EvidencePolicy()
    count_all = ev.pooling_policy(base, {"scorer": "count", "threshold": 4, "enabled": "all", "attractor_excluded": False})
    assert count_all.lexical_pool_min_score == 4.0 and "chi_dinh" in count_all.lexical_pool_enabled_sections
    assert count_all.lexical_pool_excluded_sections == frozenset()
    bm25 = ev.pooling_policy(base, {"scorer": "bm25", "threshold": 10, "enabled": "than_trong", "attractor_excluded": True})
    assert bm25.lexical_scorer == "bm25" and bm25.bm25_pool_min_score == 10.0
    assert bm25.lexical_pool_enabled_sections == frozenset({"than_trong"})
    assert bm25.lexical_pool_excluded_sections == base.lexical_pool_excluded_sections


def test_indication_summary():
    results = pd.DataFrame.from_records([
        {"policy_mode": "m", "kind": "real", "predicted": ["a", "x"], "expected": ["a", "b"], "precision": 0.5, "recall": 0.5},
        {"policy_mode": "m", "kind": "real", "predicted": [], "expected": ["c"], "precision": 1.0, "recall": 0.0},
        {"policy_mode": "m", "kind": "nonsense", "predicted": ["a"], "expected": [], "precision": 0.0, "recall": 1.0},
        {"policy_mode": "m", "kind": "nonsense", "predicted": [], "expected": [], "precision": 1.0, "recall": 1.0},
    ])
    row = ev.indication_summary(results).iloc[0]
    assert row["precision"] == 0.75 and row["recall"] == 0.25
    assert row["mrr"] == 0.5 and row["answered"] == 0.5
    assert row["fp_rate"] == 0.5 and row["fp_count"] == 1


def test_apply_minimum_score_matches_the_dense_gate():
    hits = [_hit("a", 0.90), _hit("b", 0.87), _hit("c", 0.85)]
    assert [h.chunk.drug_id for h in ev.apply_minimum_score(hits, 0.86)] == ["a", "b"]
    assert ev.apply_minimum_score(hits, 0.95) == []  # a weak best hit discards the whole pool
    assert ev.apply_minimum_score([], 0.1) == []


def test_apply_minimum_score_agrees_with_the_store(fixture_retrieval):
    store = fixture_retrieval.store
    vector = fixture_retrieval.embed_query("giảm đau hạ sốt")
    pool = store.search_indication(vector, 40, -1.0)
    assert pool
    for threshold in (0.0, pool[-1].score, pool[0].score, pool[0].score + 0.001):
        assert [h.doc_id for h in ev.apply_minimum_score(pool, threshold)] == [
            h.doc_id for h in store.search_indication(vector, 40, threshold)
        ]


def test_minimum_score_sweep_and_recommendation():
    pools = [
        ({"id": "r1", "kind": "real", "condition": "x", "expected_drugs": ["a"]}, [_hit("a", 0.92), _hit("z", 0.88)]),
        ({"id": "r2", "kind": "real", "condition": "y", "expected_drugs": ["b"]}, [_hit("b", 0.89)]),
        ({"id": "n1", "kind": "nonsense", "condition": "q", "expected_drugs": []}, [_hit("c", 0.90)]),
    ]
    sweep = ev.minimum_score_sweep(pools, [0.85, 0.895, 0.905, 0.93], EvidencePolicy(), {"r2": ["b"]})
    dense = sweep[sweep["pipeline"] == "dense"].set_index("threshold")
    assert dense.loc[0.85, "fp_count"] == 1 and dense.loc[0.85, "recall"] == 1.0
    assert dense.loc[0.905, "fp_count"] == 0 and dense.loc[0.905, "recall"] == 0.5
    assert dense.loc[0.93, "recall"] == 0.0
    pipeline = sweep[sweep["pipeline"] == "keyword_then_dense"].set_index("threshold")
    assert pipeline.loc[0.905, "recall"] == 1.0  # r2 was found by the keyword pass
    recommended = ev.recommend_minimum_score(sweep, "dense")
    assert recommended["recommended"] == 0.905 and recommended["recall"] == 0.5
    assert recommended["same_recall_up_to"] == 0.905
    assert ev.recommend_minimum_score(sweep, "keyword_then_dense")["same_recall_up_to"] == 0.905
    assert ev.recommend_minimum_score(sweep[sweep["threshold"] < 0.9], "dense")["recommended"] is None


def test_budget_sweep_counts_omissions():
    rankings = [(_hit("a", 1, part=0), _hit("a", 1, part=9)), (_hit("b", 1, part=0),)]
    sizes = [count_tokens(h.text) for h in rankings[0]]
    sweep = ev.budget_sweep(rankings, [sizes[0], sum(sizes)]).set_index("budget")
    assert sweep.loc[sizes[0], "share_with_omission"] == 0.5
    assert sweep.loc[sizes[0], "max_omitted"] == 1
    assert sweep.loc[sum(sizes), "share_with_omission"] == 0.0


def test_tokenizer_comparison():
    chunks = pd.DataFrame({"tokens": [10, 9, 30], "e5_tokens": [10, 10, 20]})
    summary = ev.tokenizer_comparison(chunks)
    assert summary["total_ratio"] == pytest.approx(49 / 40)
    assert summary["share_undercounted"] == pytest.approx(1 / 3)
    assert summary["worst_undercount_tokens"] == 1
    assert summary["min_ratio"] == pytest.approx(0.9)


def test_agent_summary_and_tables():
    turns = pd.DataFrame.from_records([
        {"scenario": "s1", "turn": 1, "expected_outcome": "clarify", "outcome": "clarify", "expected_rule": 3, "rule": 3, "correct": True, "ms": 10.0},
        {"scenario": "s1", "turn": 2, "expected_outcome": "answerable", "outcome": "answerable", "expected_rule": 16, "rule": 16, "correct": False, "ms": 30.0},
        {"scenario": "s2", "turn": 1, "expected_outcome": "abstain", "outcome": "clarify", "expected_rule": 1, "rule": 14, "correct": False, "ms": 20.0},
        {"scenario": "s3", "turn": 1, "expected_outcome": "abstain", "outcome": "abstain", "expected_rule": None, "rule": None, "correct": True, "ms": 5.0},
    ])
    summary = ev.agent_summary(turns)
    assert summary["outcome_accuracy"] == 0.75
    assert summary["turn_accuracy"] == 0.5
    assert summary["scenario_accuracy"] == pytest.approx(1 / 3)
    assert summary["latency_ms_p50"] == 15.0
    table = ev.per_rule_table(turns)
    rules = table.dropna(subset=["rule"]).set_index("rule")
    assert rules.loc[14, "fired"] == 1 and rules.loc[14, "expected"] == 0 and rules.loc[14, "outcome_accuracy"] == 0.0
    assert rules.loc[1, "fired"] == 0 and rules.loc[1, "expected"] == 1 and rules.loc[1, "rule_recall"] == 0.0
    assert rules.loc[3, "rule_recall"] == 1.0 and "paediatric" in rules.loc[3, "condition"]
    assert table["rule"].isna().sum() == 1  # the failed turn with no rule keeps its own row
    clarify = ev.clarify_turns(turns).set_index("scenario")
    assert clarify.loc["s1", "clarify_turns"] == 1 and clarify.loc["s2", "clarify_turns"] == 1
    assert clarify.loc["s2", "expected_clarify_turns"] == 0


def test_attractor_table():
    routing = pd.DataFrame.from_records([
        {"id": "1", "method": "dense_top1", "section_key": "chi_dinh", "predicted": "duoc_ly", "hit@1": 0.0},
        {"id": "2", "method": "dense_top1", "section_key": "chong_chi_dinh", "predicted": "duoc_ly", "hit@1": 0.0},
        {"id": "3", "method": "dense_top1", "section_key": "loai_thuoc", "predicted": "ten", "hit@1": 0.0},
        {"id": "4", "method": "dense_top1", "section_key": "ten", "predicted": "ten", "hit@1": 1.0},
        {"id": "5", "method": "bm25_top1", "section_key": "ten", "predicted": "duoc_ly", "hit@1": 0.0},
    ])
    table = ev.attractor_table(routing, "dense_top1")
    assert list(table["predicted"]) == ["duoc_ly", "ten"]
    assert table.iloc[0]["wrong_answers"] == 2 and math.isclose(table.iloc[0]["share_of_wrong"], 2 / 3)
    assert ev.attractor_table(routing[routing["hit@1"] == 1.0]).empty


def test_label_checks_for_statuses_questions_and_sections():
    """Issue 24/25 checks: a safety item's status, a warning not shown, what a clarify asks, a claim's section."""
    from duocthu.evaluation.checks import check_turn

    reply = {
        "answer": "Bé sinh đủ tháng hay sinh non?", "quick_replies": ["Sinh đủ tháng", "Sinh non"],
        "safety": [{"drug_id": "ceftriaxon", "quote": "Trẻ sơ sinh non tháng.", "applies": False, "status": "undetermined"},
                   {"drug_id": "ceftriaxon", "quote": "Quá mẫn với cephalosporin.", "applies": False, "status": "shown"}],
        "claims": [{"text": "…", "evidence_ids": ["x__lieu_luong_va_cach_dung__0"]}],
        "evidence": [{"doc_id": "x__lieu_luong_va_cach_dung__0", "section_key": "lieu_luong_va_cach_dung"}],
    }
    verdicts = {c.field: c.ok for c in check_turn({
        "asks": "sinh non", "claims_from_section": ["chi_dinh", "lieu_luong_va_cach_dung"],
        "safety_shows": [{"drug_id": "ceftriaxon", "phrase": "non tháng", "status": "undetermined"}],
        "safety_not_shows": [{"drug_id": "ceftriaxon", "phrase": "cephalosporin"}],
    }, reply)}
    assert all(verdicts.values()), verdicts
    assert not check_turn({"safety_not_shows": [{"drug_id": "ceftriaxon", "phrase": "non tháng"}]}, reply)[0].ok
    assert not check_turn({"safety_shows": [{"drug_id": "ceftriaxon", "phrase": "non", "status": "applies"}]}, reply)[0].ok
