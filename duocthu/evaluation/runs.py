"""Running labelled turns through an agent, and the run record (``run.json``) it leaves.

A run keeps every turn with the full reply (an open dict: fields added to the reply later, such
as typed ``blocks``, are kept as they come), the verdict of each label check
(:func:`~duocthu.evaluation.checks.check_turn`), the settings and evidence policy in force, the
commit, the formulary's fingerprint and the time.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from duocthu.config import PROJECT_ROOT
from duocthu.errors import DuocthuError
from duocthu.evaluation.checks import check_turn
from duocthu.evaluation.labelled import LabelledTurn

RUN_FORMAT = "duocthu-eval-run/1"
RUN_FILE = "run.json"


@dataclass(frozen=True)
class TurnOutcome:
    """One turn as run: its labels, the reply, and each check's verdict."""

    turn: LabelledTurn
    reply: Mapping[str, Any]
    checks: tuple[dict[str, Any], ...]
    ms: float

    @property
    def correct(self) -> bool:
        return all(c["ok"] for c in self.checks)

    @property
    def mismatches(self) -> list[str]:
        answer = str(self.reply.get("answer") or "")
        return [f"{c['field']}: expected {c['expected']!r}, got {_shown(c['actual'], answer)}"
                for c in self.checks if not c["ok"]]

    def as_json(self) -> dict[str, Any]:
        t = self.turn
        return {
            "id": t.id, "conversation_id": t.conversation_id, "turn": t.turn, "line": t.line, "kind": t.kind,
            "text": t.text, "expected": dict(t.expected), "scored": t.scored,
            "correct": self.correct if t.scored else None, "mismatches": self.mismatches,
            "checks": list(self.checks), "ms": round(self.ms, 2), "input": dict(t.extra), "reply": dict(self.reply),
        }


def _shown(actual: Any, answer: str) -> str:
    """``repr(actual)``, saying so when a check reported only the start of the answer."""
    if isinstance(actual, str) and actual and len(answer) > len(actual) and answer.startswith(actual):
        return f"{actual!r} … [the answer's first {len(actual)} of {len(answer)} characters; whole in the reply]"
    return repr(actual)


def run_turns(agent: Any, turns: Sequence[LabelledTurn], progress: bool = False, label: str = "eval") -> list[TurnOutcome]:
    """Every turn through ``agent.handle(text, conversation_id)``, in file order; checks applied to each reply."""
    outcomes = []
    bar = _progress_bar(len(turns), label) if progress else None
    try:
        for turn in turns:
            started = time.perf_counter()
            reply = agent.handle(turn.text, turn.conversation_id).to_json_dict()
            ms = (time.perf_counter() - started) * 1000
            checks = tuple(
                {"field": c.field, "expected": c.expected, "actual": c.actual, "ok": bool(c.ok)}
                for c in check_turn(dict(turn.expected), reply)
            )
            outcomes.append(TurnOutcome(turn, reply, checks, ms))
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return outcomes


def _progress_bar(total: int, label: str) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, desc=label, unit="turn", file=sys.stderr, leave=True, mininterval=0.5)


# -- where a run came from ----------------------------------------------------------------------------
def git_commit(root: Path = PROJECT_ROOT) -> dict[str, Any]:
    """The checkout's commit and whether it has uncommitted changes (``"unknown"`` outside a git checkout)."""
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()
        status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return {"commit": "unknown", "dirty": None}
    return {"commit": head or "unknown", "dirty": bool(status.strip())}


def formulary_fingerprint(source: Path) -> dict[str, Any]:
    """A hash over the monograph files (names and bytes): two runs with the same hash read the same book."""
    files = sorted(p for p in Path(source).glob("*.md") if p.name.lower() != "readme.md")
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode("utf-8") + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return {"dir": str(Path(source).resolve()), "monographs": len(files), "sha256": digest.hexdigest()}


def file_sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


# -- the record ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class EvalRun:
    """Everything ``run.json`` holds: the header (:func:`run_meta`) and every turn as plain JSON."""

    meta: dict[str, Any]
    turns: Sequence[Mapping[str, Any]]

    @classmethod
    def from_outcomes(cls, outcomes: Sequence[TurnOutcome], meta: dict[str, Any]) -> EvalRun:
        return cls(meta, [o.as_json() for o in outcomes])

    def as_json(self) -> dict[str, Any]:
        return {"format": RUN_FORMAT, **self.meta, "turns": list(self.turns)}

    def turns_frame(self) -> pd.DataFrame:
        """One row per turn: ids, kind, correct, expected and actual outcome and section, mismatches, answer."""
        return turns_frame(self.turns)


def run_meta(
    eval_file: Path, formulary_dir: Path, settings_json: Mapping[str, Any], overrides: Mapping[str, Any],
    coverage: Mapping[str, Any], seconds: Mapping[str, float],
) -> dict[str, Any]:
    """The header of ``run.json``: what was run, on what, with which settings, when."""
    return {
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "eval_file": str(Path(eval_file).resolve()), "eval_file_sha256": file_sha256(eval_file),
        **git_commit(), "formulary": formulary_fingerprint(formulary_dir), "overrides": dict(overrides),
        **settings_json, "coverage": dict(coverage), "seconds": {k: round(v, 2) for k, v in seconds.items()},
    }


def turns_frame(turns: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """The run's turns as a DataFrame (scored and unscored)."""
    records = []
    for t in turns:
        expected, reply = t.get("expected") or {}, t.get("reply") or {}
        outcome = expected.get("outcome")
        records.append({
            "id": t["id"], "conversation_id": t.get("conversation_id"), "turn": t.get("turn"),
            "kind": t.get("kind") or "(none)", "text": t.get("text", ""), "scored": bool(t.get("scored", True)),
            "correct": bool(t.get("correct")),
            "expected_outcome": "|".join(outcome) if isinstance(outcome, list) else outcome,
            "outcome": reply.get("outcome"), "reason": reply.get("reason"), "rule": reply.get("rule"),
            "expected_section": expected.get("section_key", "—"),
            "section": (reply.get("frame") or {}).get("section_key"),
            "mismatches": list(t.get("mismatches") or []), "answer": reply.get("answer", ""), "ms": t.get("ms"),
        })
    return pd.DataFrame.from_records(records, columns=[
        "id", "conversation_id", "turn", "kind", "text", "scored", "correct", "expected_outcome", "outcome",
        "reason", "rule", "expected_section", "section", "mismatches", "answer", "ms"])


def write_run(run: EvalRun, out_dir: Path) -> Path:
    """``out_dir/run.json`` (created with its folder): the header indented, then one turn per line."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / RUN_FILE
    header = json.dumps({"format": RUN_FORMAT, **run.meta}, ensure_ascii=False, indent=1, default=str)
    turns = ",\n".join(json.dumps(t, ensure_ascii=False, default=str) for t in run.turns)
    path.write_text(f'{header[:-2]},\n "turns": [\n{turns}\n]\n}}\n', encoding="utf-8")
    return path


def load_run(path: Path | str) -> EvalRun:
    """A previous run from its ``run.json`` or the folder holding it."""
    source = Path(path)
    if source.is_dir():
        source = source / RUN_FILE
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise DuocthuError(f"no previous run at {path} (give a run.json or the folder `duocthu eval --out` wrote)") from exc
    except (OSError, ValueError) as exc:
        raise DuocthuError(f"cannot read the previous run {source}: {exc}") from exc
    if not isinstance(data, dict) or data.get("format") != RUN_FORMAT:
        raise DuocthuError(f"{source} is not a duocthu eval run (format {RUN_FORMAT})")
    turns = data.pop("turns", [])
    data.pop("format", None)
    return EvalRun(data, turns)
