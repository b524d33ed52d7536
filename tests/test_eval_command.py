"""``duocthu eval`` end to end on the committed example (five monographs, 30 labelled turns), in process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from duocthu.cli import main

from .conftest import ROOT

EXAMPLE = ROOT / "data" / "examples" / "my_data"
QUESTIONS = EXAMPLE / "questions.jsonl"


@pytest.fixture(scope="module")
def eval_env(tmp_path_factory):
    """The example book as the formulary in use, a private home (query-vector cache, no traces kept)."""
    home = tmp_path_factory.mktemp("eval-home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DUOCTHU_HOME", str(home))
        patch.setenv("DUOCTHU_FORMULARY", str(EXAMPLE / "formulary"))
        patch.delenv("DUOCTHU_EMBEDDING_CACHE", raising=False)
        patch.delenv("UNDERSTANDER", raising=False)
        yield home


def _relabelled(target: Path, changes: dict[str, dict]) -> Path:
    """The example's questions with some labels replaced (a deliberately wrong label makes a known flip)."""
    lines = []
    for line in QUESTIONS.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        record["expected"] = changes.get(record["id"], record["expected"])
        lines.append(json.dumps(record, ensure_ascii=False))
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target


def _eval(*args: str) -> int:
    return main(["eval", *args, "--quiet"])


@pytest.fixture(scope="module")
def base_run(eval_env, tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    questions = _relabelled(out / "base.jsonl", {"g2": {"outcome": "answerable"}})  # wrong on purpose: fixed later
    assert _eval(str(questions), "--out", str(out / "base"), "--min-accuracy", "0.5") == 0
    return out


def _load(folder: Path) -> dict:
    return json.loads((folder / "run.json").read_text(encoding="utf-8"))


@pytest.mark.slow
def test_a_run_writes_every_turn_with_its_reply_verdict_and_provenance(base_run):
    run = _load(base_run / "base")
    assert len(run["turns"]) == 30 and run["format"] == "duocthu-eval-run/1"
    first = run["turns"][0]
    assert {"id", "conversation_id", "kind", "text", "expected", "correct", "checks", "mismatches", "reply"} <= set(first)
    assert first["reply"]["outcome"] and "answer" in first["reply"] and "evidence" in first["reply"]
    d1b = next(t for t in run["turns"] if t["id"] == "d1b")
    assert d1b["reply"]["conversation_id"] == "d1" and d1b["reply"]["frame"]["drugs"] == ["paracetamol"]  # a conversation
    assert run["commit"] and run["created"] and len(run["formulary"]["sha256"]) == 64 and run["formulary"]["monographs"] == 5
    assert run["settings"]["formulary_dir"].endswith("my_data/formulary") and "home" not in run["settings"]
    assert run["policy"]["minimum_score"] == pytest.approx(0.91) and run["coverage"]["missing_drugs"] == []
    g2 = next(t for t in run["turns"] if t["id"] == "g2")
    assert g2["correct"] is False and g2["mismatches"]
    report = (base_run / "base" / "report.md").read_text(encoding="utf-8")
    for heading in ("## Accuracy per kind", "## Outcomes: expected", "## Sections: labelled", "### `g2`"):
        assert heading in report
    assert run["summary"]["turns"] == 30 and 0.5 <= run["summary"]["accuracy"] < 1


@pytest.mark.slow
def test_against_lists_the_turns_that_flipped_and_min_accuracy_gates(base_run, capsys):
    questions = _relabelled(base_run / "second.jsonl", {"s1": {"outcome": "verify_pdf"}})  # wrong on purpose: broken
    status = _eval(str(questions), "--out", str(base_run / "second"), "--set", "minimum_score=0.80",
                   "--against", str(base_run / "base"), "--min-accuracy", "1.0")
    before, after = _load(base_run / "base"), _load(base_run / "second")
    correct_before = {t["id"]: t["correct"] for t in before["turns"]}
    against = after["against"]
    assert "g2" in against["fixed"] and "s1" in against["broken"]
    assert set(against["fixed"]) == {t["id"] for t in after["turns"] if t["correct"] and not correct_before[t["id"]]}
    assert set(against["broken"]) == {t["id"] for t in after["turns"] if not t["correct"] and correct_before[t["id"]]}
    assert "minimum_score: 0.91 → 0.8" in against["differences"] and after["overrides"] == {"minimum_score": 0.8}
    report = (base_run / "second" / "report.md").read_text(encoding="utf-8")
    assert "### Broken (right before, wrong now)" in report and "| s1 | section |" in report
    assert status == 1 and "below --min-accuracy 1.0" in capsys.readouterr().err


@pytest.mark.slow
def test_a_set_naming_mostly_absent_drugs_is_refused_unless_allowed(eval_env, tmp_path, capsys):
    questions = tmp_path / "other-book.jsonl"
    questions.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in [
        {"conversation_id": "a", "text": "Liều digoxin?", "expected": {"drugs": ["digoxin"]}, "kind": "dose"},
        {"conversation_id": "b", "text": "Warfarin tương tác gì?", "expected": {"drugs": ["warfarin"]}, "kind": "x"},
        {"conversation_id": "c", "text": "Chỉ định của paracetamol?", "expected": {"drugs": ["paracetamol"]}},
    ]) + "\n", encoding="utf-8")
    assert _eval(str(questions), "--out", str(tmp_path / "refused")) == 2
    err = capsys.readouterr().err
    assert "lacks 2 of the 3 labelled drugs (67%): digoxin, warfarin" in err and "--allow-missing" in err
    assert not (tmp_path / "refused").exists()
    assert _eval(str(questions), "--out", str(tmp_path / "allowed"), "--allow-missing") == 0
    run = _load(tmp_path / "allowed")
    assert run["coverage"]["missing_drugs"] == ["digoxin", "warfarin"]
    assert "## ⚠ What the formulary lacks" in (tmp_path / "allowed" / "report.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(("args", "message"), [
    (["--set", "minimum_scor=0.8"], "minimum_scor=0.8 is not a setting"),
    (["--set", "minimum_score=high"], "expects a number"),
    (["--set", "understander=clever"], "UNDERSTANDER='clever' is not one of"),
    (["--set", "minimum_score"], "expected KEY=VALUE"),
    (["--against", "/nonexistent/run"], "no previous run at /nonexistent/run"),
])
def test_bad_arguments_are_clear_errors_before_any_work(eval_env, tmp_path, capsys, args, message):
    assert _eval(str(QUESTIONS), "--out", str(tmp_path / "out"), *args) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_an_unknown_key_lists_every_valid_one(eval_env, capsys):
    assert _eval(str(QUESTIONS), "--set", "nope=1") == 2
    err = capsys.readouterr().err
    assert "Settings: " in err and "understander" in err and "EvidencePolicy: " in err and "lexical_pool_min_score" in err
