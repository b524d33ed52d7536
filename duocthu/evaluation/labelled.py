"""Labelled turns: the one schema ``duocthu eval`` and notebook 08 read (``data/eval/README.md``).

Two line forms, mixed freely in one JSONL file:

* a **turn**: ``{"conversation_id": "c1", "text": "…", "expected": {…}, "kind": "…"}`` — turns with the
  same ``conversation_id`` form one conversation, in file order (as in ``duocthu batch``); ``id`` is
  optional (default ``line-N``), and so is ``conversation_id`` (default: the turn is its own
  conversation);
* a **scenario** (the project's own agent and safety sets): ``{"id": "…", "turns": [{"text",
  "expected"}, …], "kind": "…"}`` — one conversation.

``expected`` holds the project's label checks by name (:data:`duocthu.evaluation.checks.CHECKS`),
plus two aliases: ``must_contain`` → ``answer_contains`` and ``must_not_contain`` →
``answer_not_contains`` (a single string counts as a one-item list). A turn with no ``expected``
(or ``{}``) is run — it can set up a conversation — but not scored. Every other field is kept.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from duocthu.errors import DuocthuError
from duocthu.evaluation.checks import CHECKS

ALIASES = {"must_contain": "answer_contains", "must_not_contain": "answer_not_contains"}
LIST_CHECKS = ("answer_contains", "answer_not_contains")
TURN_FIELDS = {"id", "conversation_id", "text", "expected", "kind"}
SCENARIO_FIELDS = {"id", "turns", "kind"}
MAX_PROBLEMS_SHOWN = 20


class LabelledFileError(DuocthuError):
    """A labelled file that cannot be read as the documented schema; lists every problem."""


@dataclass(frozen=True)
class LabelledTurn:
    """One user turn with its labels, where it came from, and every field the line carried."""

    id: str
    conversation_id: str
    turn: int  # 1-based position in its conversation
    text: str
    expected: Mapping[str, Any]
    kind: str | None
    line: int
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def scored(self) -> bool:
        return bool(self.expected)


def load_labelled(path: Path | str) -> list[LabelledTurn]:
    """Every turn of a labelled JSONL file, in file order; raise one error listing every bad line."""
    source = Path(path)
    try:
        lines = source.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise LabelledFileError(f"cannot read {source}: {exc}") from exc
    turns, problems = parse_labelled_lines(lines)
    if problems:
        shown = "\n".join(f"  {source}:{p}" for p in problems[:MAX_PROBLEMS_SHOWN])
        more = f"\n  … and {len(problems) - MAX_PROBLEMS_SHOWN} more" if len(problems) > MAX_PROBLEMS_SHOWN else ""
        raise LabelledFileError(f"{len(problems)} problem(s) in {source} (schema: data/eval/README.md):\n{shown}{more}")
    if not turns:
        raise LabelledFileError(f"{source} holds no turns")
    return turns


def parse_labelled_lines(lines: Sequence[str]) -> tuple[list[LabelledTurn], list[str]]:
    """(turns, problems as ``"LINE: message"``) of JSONL lines; blank lines are skipped."""
    turns: list[LabelledTurn] = []
    problems: list[str] = []
    positions: dict[str, int] = {}
    seen: dict[str, int] = {}
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            problems.append(f"{number}: broken JSON ({exc.msg}, column {exc.colno})")
            continue
        try:
            parsed = _scenario(record, number) if isinstance(record, dict) and "turns" in record else [
                _turn(record, number, positions)]
        except ValueError as exc:
            problems.append(f"{number}: {exc}")
            continue
        for turn in parsed:
            if turn.id in seen:
                problems.append(f"{number}: id {turn.id!r} repeats line {seen[turn.id]} (turns are compared by id)")
            seen.setdefault(turn.id, number)
        turns.extend(parsed)
    return turns, problems


def _turn(record: Any, number: int, positions: dict[str, int]) -> LabelledTurn:
    if not isinstance(record, dict):
        raise ValueError("a line must be a JSON object")
    text = record.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ValueError("'text' must be a non-empty string")
    turn_id = _string(record, "id", f"line-{number}")
    conversation = _string(record, "conversation_id", turn_id)
    positions[conversation] = positions.get(conversation, 0) + 1
    extra = {k: v for k, v in record.items() if k not in TURN_FIELDS}
    return LabelledTurn(turn_id, conversation, positions[conversation], text, normalise_expected(record.get("expected")),
                        _kind(record), number, extra)


def _scenario(record: dict[str, Any], number: int) -> list[LabelledTurn]:
    scenario_id = record.get("id")
    if not isinstance(scenario_id, str) or not scenario_id.strip():
        raise ValueError("a scenario ('turns') needs a non-empty string 'id'")
    items = record["turns"]
    if not isinstance(items, list) or not items:
        raise ValueError("'turns' must be a non-empty list of {\"text\", \"expected\"}")
    extra = {k: v for k, v in record.items() if k not in SCENARIO_FIELDS}
    turns = []
    for position, item in enumerate(items, start=1):
        if not isinstance(item, dict) or not isinstance(item.get("text"), str) or not item["text"].strip():
            raise ValueError(f"turn {position}: needs a non-empty string 'text'")
        try:
            expected = normalise_expected(item.get("expected"))
        except ValueError as exc:
            raise ValueError(f"turn {position}: {exc}") from None
        turn_extra = {**extra, **{k: v for k, v in item.items() if k not in {"text", "expected"}}}
        turns.append(LabelledTurn(f"{scenario_id}#{position}", scenario_id, position, item["text"], expected,
                                  _kind(record), number, turn_extra))
    return turns


def normalise_expected(expected: Any) -> dict[str, Any]:
    """Labels under their check names (aliases resolved); unknown names are an error that lists the known ones."""
    if expected is None:
        return {}
    if not isinstance(expected, dict):
        raise ValueError("'expected' must be an object of label checks")
    labels: dict[str, Any] = {}
    for name, value in expected.items():
        check = ALIASES.get(name, name)
        if check not in CHECKS:
            known = ", ".join([*CHECKS, *ALIASES])
            raise ValueError(f"unknown label check {name!r}; known: {known}")
        if check in labels:
            raise ValueError(f"{name!r} repeats {check!r}")
        labels[check] = [value] if check in LIST_CHECKS and isinstance(value, str) else value
    return labels


def _string(record: dict[str, Any], key: str, default: str) -> str:
    value = record.get(key)
    if value is None:
        return default
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{key!r} must be a non-empty string")
    return value


def _kind(record: dict[str, Any]) -> str | None:
    kind = record.get("kind")
    if kind is not None and not isinstance(kind, str):
        raise ValueError("'kind' must be a string")
    return kind
