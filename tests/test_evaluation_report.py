"""The figures and ``report.md`` of a run, and the comparison of two runs, on hand-made run records."""

from __future__ import annotations

import math

import pytest

from duocthu.evaluation.labelled import LabelledTurn
from duocthu.evaluation.report import (
    compare_runs,
    per_kind,
    render_report,
    summary,
    wilson_interval,
)
from duocthu.evaluation.runs import EvalRun, TurnOutcome


def _turn(turn_id: str, kind: str, correct: bool, outcome: str = "answerable", section: str | None = "chi_dinh",
          answer: str = "Theo Dược thư …") -> dict:
    expected = {"outcome": "answerable", "section_key": "chi_dinh"}
    mismatches = [] if correct else [f"outcome: expected 'answerable', got {outcome!r}"]
    return {"id": turn_id, "conversation_id": turn_id, "turn": 1, "line": 1, "kind": kind, "text": f"câu {turn_id}",
            "expected": expected, "scored": True, "correct": correct, "mismatches": mismatches, "checks": [], "ms": 10.0,
            "input": {}, "reply": {"outcome": outcome, "reason": "r", "rule": 16, "answer": answer,
                                   "frame": {"drugs": ["paracetamol"], "section_key": section}, "blocks": [{"type": "prose"}]}}


def _run(turns: list[dict], **meta) -> EvalRun:
    return EvalRun({"eval_file": "q.jsonl", "commit": "abc", "formulary": {"dir": "book", "sha256": "f" * 64, "monographs": 5},
                    "settings": {"understander": "auto", "home": "/tmp/x"}, "policy": {"minimum_score": 0.91},
                    "overrides": {}, "seconds": {"turns": 1.0}, "created": "now", **meta}, turns)


def test_wilson_interval():
    low, high = wilson_interval(26, 30)
    assert (round(low, 3), round(high, 3)) == (0.703, 0.947)
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == 1.0
    assert all(math.isnan(x) for x in wilson_interval(0, 0))


def test_summary_and_per_kind_count_scored_turns_only():
    unscored = {**_turn("u", "dose", False), "scored": False, "correct": None, "expected": {}}
    run = _run([_turn("a", "dose", True), _turn("b", "dose", False, "clarify"), _turn("c", "section", True), unscored])
    figures = summary(run)
    assert (figures["turns"], figures["correct"], figures["unscored_turns"]) == (3, 2, 1)
    assert figures["accuracy"] == pytest.approx(2 / 3) and figures["outcome_accuracy"] == pytest.approx(2 / 3)
    kinds = per_kind(run.turns_frame()).set_index("kind")
    assert kinds.loc["dose", "turns"] == 2 and kinds.loc["dose", "accuracy"] == 0.5
    assert kinds.loc["dose", "ci_low"] < 0.5 < kinds.loc["dose", "ci_high"]


def test_comparison_lists_flips_both_ways_and_what_changed():
    before = _run([_turn("a", "dose", True), _turn("b", "dose", False, "clarify"), _turn("c", "section", True),
                   _turn("old", "section", True)])
    after = _run([_turn("a", "dose", False, "abstain"), _turn("b", "dose", True), _turn("c", "section", True),
                  _turn("new", "section", False)], policy={"minimum_score": 0.84}, settings={"home": "/tmp/y"})
    comparison = compare_runs(after, before, "runs/base")
    assert list(comparison.fixed["id"]) == ["b"] and list(comparison.broken["id"]) == ["a"]
    assert comparison.only_now == ("new",) and comparison.only_before == ("old",)
    assert comparison.differences == ("understander: 'auto' → None", "minimum_score: 0.91 → 0.84")  # home ignored
    dose = comparison.per_kind.set_index("kind").loc["dose"]
    assert (dose["fixed"], dose["broken"], dose["change_points"]) == (1, 1, 0.0)
    report = render_report(after, comparison)
    assert "## Against `runs/base`" in report and "**1 fixed**, **1 broken**" in report
    assert "| b | dose | câu b | clarify → answerable |" in report


def test_report_sections_and_a_trimmed_answer_says_so():
    long_answer = "Chống chỉ định: " + "x" * 900
    run = _run([_turn("a", "dose", False, "clarify", answer=long_answer), _turn("b", "section", True)],
               coverage={"lines": ["the formulary lacks 1 of the 2 labelled drugs (50%): warfarin"]})
    report = render_report(run, answer_chars=100)
    for heading in ("# Evaluation of `q.jsonl`", "## ⚠ What the formulary lacks", "## Accuracy per kind",
                    "## Outcomes: expected", "## Sections: labelled", "## Failures: 1"):
        assert heading in report
    assert "[trimmed: 100 of 916 characters shown; whole in run.json]" in report
    assert "95 % CI" in report and "Every scored turn is right" not in report


def test_a_turn_outcome_keeps_the_whole_reply_and_says_when_a_check_shows_part_of_it():
    turn = LabelledTurn("t1", "c1", 1, "Liều?", {"no_dose": True}, "dose", 3, {"source": "ward"})
    reply = {"outcome": "answerable", "answer": "500 mg " * 60, "blocks": [{"type": "quote_list"}]}
    outcome = TurnOutcome(turn, reply, ({"field": "no_dose", "expected": True, "actual": reply["answer"][:200],
                                         "ok": False},), 12.0)
    record = outcome.as_json()
    assert record["reply"]["blocks"] == [{"type": "quote_list"}]  # fields the reply gains later are kept
    assert record["input"] == {"source": "ward"} and record["correct"] is False
    assert "the answer's first 200 of 420 characters; whole in the reply" in record["mismatches"][0]


def test_run_json_round_trips_from_the_file_or_its_folder(tmp_path):
    from duocthu.errors import DuocthuError
    from duocthu.evaluation.runs import load_run, write_run

    run = _run([_turn("a", "dose", True), _turn("b", "dose", False)])
    path = write_run(run, tmp_path / "run")
    assert load_run(path) == load_run(tmp_path / "run") == run
    (tmp_path / "other.json").write_text('{"turns": []}', encoding="utf-8")
    with pytest.raises(DuocthuError, match="not a duocthu eval run"):
        load_run(tmp_path / "other.json")
