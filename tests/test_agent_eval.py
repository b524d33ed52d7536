"""The labelled dev sets through the offline agent (regression gates; the test parts are only reported)."""

from __future__ import annotations

import pytest

from duocthu.agent.routing import ROUTING_TABLE
from duocthu.evaluation import evaluate_agent, load_eval_set

pytestmark = pytest.mark.slow  # every dev scenario through the agent (13 s, 17 s)


def test_agent_dev_scenarios_offline(demo_runtime):
    scenarios = load_eval_set("agent")
    turns = sum(len(s["turns"]) for s in scenarios)
    assert len(scenarios) >= 90 and turns >= 150
    results = evaluate_agent(demo_runtime.agent, scenarios, prefix="test")
    accuracy = results["correct"].mean()
    failures = results.loc[~results["correct"], ["scenario", "turn", "text", "mismatches"]].to_string()
    assert accuracy >= 0.95, f"turn accuracy {accuracy:.3f} < 0.95; failures:\n{failures}"
    covered_rules = set(results["rule"].dropna().astype(int))
    assert covered_rules >= set(range(1, 17))
    assert covered_rules <= {rule.number for rule in ROUTING_TABLE}


def test_safety_dev_scenarios_offline(demo_runtime):
    scenarios = load_eval_set("safety")
    results = evaluate_agent(demo_runtime.agent, scenarios, prefix="safety")
    accuracy = results["correct"].mean()
    failures = results.loc[~results["correct"], ["scenario", "turn", "text", "mismatches"]].to_string()
    assert accuracy >= 0.95, f"safety turn accuracy {accuracy:.3f} < 0.95; failures:\n{failures}"
    crisis = results[results["kind"] == "crisis"]
    assert crisis["correct"].all(), "every crisis turn is answered without quantities"
