"""Measuring query understanding: understanders side by side, the intent model's choices and calibration.

Used by notebook ``07_understanding``. Every understander is measured inside the same agent (same
retrieval, same extractive answerer), so a difference in turn accuracy is a difference in
understanding.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from duocthu.agent.agent import RagAgent
from duocthu.agent.answering import (
    ExtractiveAnswerGenerator,
    GroundedAnswerService,
    VerbatimEntailmentChecker,
)
from duocthu.budget import RequestBudget
from duocthu.conversations import InMemoryConversationStore
from duocthu.providers.llm import JsonLlm, ScriptedLlm
from duocthu.qdrant_store import QdrantStore
from duocthu.runtime import Runtime, understanding_parts
from duocthu.understanding import UnderstandingParts, get_understander
from duocthu.understanding.base import QueryUnderstander
from duocthu.understanding.intent import IntentExample, train


def fallback_llm() -> ScriptedLlm:
    """The scripted stand-in for an LLM understander when no model is reachable (CI).

    It answers every understanding call with the least informative frame, so its row shows what the
    shared entity, cue and carry-over layers carry on their own — not what a real model would do.
    """
    return ScriptedLlm(default=lambda system, user, label: {"turn_type": "drug_attribute"})


def understander_for(store: QdrantStore, name: str, parts: UnderstandingParts) -> QueryUnderstander:
    """A run-time understander by name, or ``rules``: the first version's phrase rules (the baseline)."""
    if name == "rules":
        from duocthu.evaluation.baselines.rules import RuleBasedUnderstander

        return RuleBasedUnderstander(parts.resolver, [c.text for c in store.indication_pool()])
    return get_understander(name, parts)


def agent_with_understander(runtime: Runtime, name: str, llm: JsonLlm | None = None) -> RagAgent:
    parts = understanding_parts(runtime.store, runtime.retrieval.embed_query, llm)
    return RagAgent(
        understander_for(runtime.store, name, parts), runtime.retrieval,
        GroundedAnswerService(ExtractiveAnswerGenerator(), VerbatimEntailmentChecker()), parts.resolver,
        InMemoryConversationStore(), lexicon=parts.lexicon,
    )


def understanding_latency(runtime: Runtime, name: str, texts: Sequence[str], llm: JsonLlm | None = None) -> pd.DataFrame:
    """Milliseconds per turn of understanding alone (the embedding included, computed fresh)."""
    parts = understanding_parts(runtime.store, _fresh_embed(runtime), llm)
    understander = understander_for(runtime.store, name, parts)
    rows = []
    for text in texts:
        started = time.perf_counter()
        understander.understand(text, [], RequestBudget(), None)
        rows.append({"understander": name, "text": text, "ms": (time.perf_counter() - started) * 1000})
    return pd.DataFrame.from_records(rows)


def _fresh_embed(runtime: Runtime) -> Callable[[str], np.ndarray]:
    return lambda text: runtime.embedder.embed_queries([text])[0]


def intent_cross_validation(
    examples: Sequence[IntentExample], vectors: np.ndarray, configs: Sequence[dict[str, Any]], folds: int = 5,
) -> pd.DataFrame:
    """Held-out accuracy of each (method, features, C) on the exemplars: turn type and section."""
    from sklearn.model_selection import StratifiedKFold

    labels = np.array([e.turn_type for e in examples])
    rows = []
    for config in configs:
        turn_hits: list[bool] = []
        section_hits: list[bool] = []
        splitter = StratifiedKFold(folds, shuffle=True, random_state=0)
        for train_rows, test_rows in splitter.split(vectors, labels):
            model = train([examples[i] for i in train_rows], vectors[train_rows], config.get("method", "logreg"),
                          config.get("c", 4.0), features=config.get("features", "embedding+chars"))
            predictions = model.predict_many(vectors[test_rows], [examples[i].text for i in test_rows])
            for prediction, i in zip(predictions, test_rows, strict=True):
                turn_hits.append(prediction.turn_type == examples[i].turn_type)
                if examples[i].section_key:
                    section_hits.append(prediction.section == examples[i].section_key)
        rows.append({**config, "turn_accuracy": float(np.mean(turn_hits)),
                     "section_accuracy": float(np.mean(section_hits))})
    return pd.DataFrame.from_records(rows)


def calibration_table(probabilities: Sequence[float], correct: Sequence[bool], bins: int = 10) -> pd.DataFrame:
    """Reliability: per probability bin, the mean predicted probability and the observed accuracy."""
    frame = pd.DataFrame({"p": list(probabilities), "correct": [bool(c) for c in correct]})
    frame["bin"] = pd.cut(frame["p"], np.linspace(0, 1, bins + 1), include_lowest=True)
    table = frame.groupby("bin", observed=True).agg(n=("p", "size"), mean_p=("p", "mean"), accuracy=("correct", "mean"))
    return table.reset_index().assign(bin=lambda t: t["bin"].astype(str))


def expected_calibration_error(table: pd.DataFrame) -> float:
    total = table["n"].sum()
    return float((table["n"] / total * (table["mean_p"] - table["accuracy"]).abs()).sum()) if total else float("nan")
