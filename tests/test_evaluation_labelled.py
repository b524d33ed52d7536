"""The labelled-turn schema of ``duocthu eval``: both line forms, aliases, and errors that list every bad line."""

from __future__ import annotations

import json

import pytest

from duocthu.evaluation.labelled import (
    LabelledFileError,
    load_labelled,
    normalise_expected,
    parse_labelled_lines,
)

from .conftest import ROOT


def _lines(*records) -> list[str]:
    return [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in records]


def test_flat_turns_group_by_conversation_in_file_order():
    turns, problems = parse_labelled_lines(_lines(
        {"conversation_id": "c1", "text": "Liều paracetamol cho bé?", "expected": {"outcome": "clarify"}, "kind": "dose"},
        {"conversation_id": "c2", "text": "Xin chào", "expected": {"reason": "smalltalk"}},
        "",
        {"conversation_id": "c1", "text": "5 tuổi, 18 kg", "expected": {"outcome": "answerable"}, "source": "ward 3"},
        {"text": "Không có id"},
    ))
    assert problems == []
    assert [(t.id, t.conversation_id, t.turn, t.line) for t in turns] == [
        ("line-1", "c1", 1, 1), ("line-2", "c2", 1, 2), ("line-4", "c1", 2, 4), ("line-5", "line-5", 1, 5)]
    assert turns[0].kind == "dose" and turns[1].kind is None
    assert turns[2].extra == {"source": "ward 3"}  # every other field is kept
    assert not turns[3].scored and turns[0].scored  # no labels: run, not scored


def test_scenarios_are_one_conversation_each():
    turns, problems = parse_labelled_lines(_lines({
        "id": "ag-001", "kind": "rewording", "rewords": "ag-000",
        "turns": [{"text": "Liều thuốc?", "expected": {"outcome": "clarify"}},
                  {"text": "Paracetamol", "expected": {"drugs": ["paracetamol"]}}]}))
    assert problems == []
    assert [(t.id, t.conversation_id, t.turn) for t in turns] == [("ag-001#1", "ag-001", 1), ("ag-001#2", "ag-001", 2)]
    assert turns[1].kind == "rewording" and turns[1].extra == {"rewords": "ag-000"}


def test_the_project_sets_load_as_they_are():
    turns = load_labelled(ROOT / "data" / "eval" / "agent" / "dev.jsonl")
    assert len(turns) > 150 and all(t.scored for t in turns)


def test_must_contain_aliases_and_a_single_phrase():
    assert normalise_expected({"must_contain": "hen", "must_not_contain": ["mg"], "outcome": ["abstain", "clarify"]}) == {
        "answer_contains": ["hen"], "answer_not_contains": ["mg"], "outcome": ["abstain", "clarify"]}
    with pytest.raises(ValueError, match="repeats"):
        normalise_expected({"must_contain": ["a"], "answer_contains": ["b"]})


def test_every_bad_line_is_listed_with_its_number(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(_lines(
        {"conversation_id": "c1", "text": "ok", "expected": {"outcome": "answerable"}},
        "{broken",
        {"conversation_id": "c1", "text": "", "expected": {}},
        {"conversation_id": "c2", "text": "x", "expected": {"expected_section": "chi_dinh"}},
        {"id": "s1", "turns": []},
        {"id": "t1", "text": "a"},
        {"id": "t1", "text": "b"},
        ["not", "an", "object"],
    )), encoding="utf-8")
    with pytest.raises(LabelledFileError) as caught:
        load_labelled(path)
    message = str(caught.value)
    for expected in ("bad.jsonl:2: broken JSON", "bad.jsonl:3: 'text' must be a non-empty string",
                     "bad.jsonl:4: unknown label check 'expected_section'; known: outcome", "must_contain",
                     "bad.jsonl:5: 'turns' must be a non-empty list", "bad.jsonl:7: id 't1' repeats line 6",
                     "bad.jsonl:8: a line must be a JSON object", "data/eval/README.md"):
        assert expected in message


def test_an_empty_or_missing_file_is_a_clear_error(tmp_path):
    (tmp_path / "empty.jsonl").write_text("\n\n", encoding="utf-8")
    with pytest.raises(LabelledFileError, match="holds no turns"):
        load_labelled(tmp_path / "empty.jsonl")
    with pytest.raises(LabelledFileError, match="cannot read"):
        load_labelled(tmp_path / "absent.jsonl")
