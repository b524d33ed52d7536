"""The labelled agent scenario set, offline: at least 95 % of turns fully correct."""

from __future__ import annotations

from duocthu.evaluation import evaluate_agent, load_eval_set


def test_agent_scenarios_offline(demo_runtime):
    scenarios = load_eval_set("agent")
    turns = sum(len(s["turns"]) for s in scenarios)
    assert len(scenarios) >= 90 and turns >= 150
    results = evaluate_agent(demo_runtime.agent, scenarios, prefix="test")
    accuracy = results["correct"].mean()
    failures = results.loc[~results["correct"], ["scenario", "turn", "text", "mismatches"]].to_string()
    assert accuracy >= 0.95, f"turn accuracy {accuracy:.3f} < 0.95; failures:\n{failures}"
    covered_rules = set(results["rule"].dropna().astype(int))
    assert covered_rules == set(range(1, 17))
