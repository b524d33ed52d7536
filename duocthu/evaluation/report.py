"""The figures of a run and ``report.md``: accuracy with Wilson intervals, confusions, failures, flips.

Accuracy is over *scored* turns (those with labels): a turn is right when every label check holds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from duocthu.evaluation.metrics import confusion_table
from duocthu.evaluation.runs import EvalRun

Z95 = 1.959963984540054
ANSWER_CHARS_SHOWN = 700
UNCOMPARED_SETTINGS = frozenset({"home"})


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95 % by default); ``(nan, nan)`` when ``n`` is 0.

    >>> [round(x, 3) for x in wilson_interval(26, 30)]
    [0.703, 0.947]
    """
    if n == 0:
        return math.nan, math.nan
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    # At 0 and n the bound is exactly 0 or 1; floating point would say 0.9999999999999999.
    return (0.0 if successes == 0 else centre - half), (1.0 if successes == n else centre + half)


def accuracy_of(correct: pd.Series) -> dict[str, Any]:
    """Turns, right, accuracy and its Wilson 95 % interval."""
    n, k = len(correct), int(correct.sum())
    low, high = wilson_interval(k, n)
    return {"turns": n, "correct": k, "accuracy": k / n if n else math.nan, "ci_low": low, "ci_high": high}


def scored(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["scored"]]


def per_kind(frame: pd.DataFrame) -> pd.DataFrame:
    """Accuracy per kind with its interval, most turns first."""
    rows = [{"kind": kind, **accuracy_of(group["correct"])} for kind, group in scored(frame).groupby("kind", sort=True)]
    table = pd.DataFrame.from_records(rows, columns=["kind", "turns", "correct", "accuracy", "ci_low", "ci_high"])
    return table.sort_values(["turns", "kind"], ascending=[False, True]).reset_index(drop=True)


def outcome_confusion(frame: pd.DataFrame) -> pd.DataFrame:
    """Expected outcome (rows; a list of allowed outcomes as ``a|b``) against the reply's."""
    labelled = scored(frame).dropna(subset=["expected_outcome"])
    return confusion_table(list(labelled["expected_outcome"]), list(labelled["outcome"]))


def section_confusion(frame: pd.DataFrame) -> pd.DataFrame:
    """Expected section (rows) against the understood one, over turns whose label gives a section."""
    labelled = scored(frame)
    labelled = labelled[labelled["expected_section"] != "—"]
    return confusion_table(list(labelled["expected_section"]), list(labelled["section"]))


def summary(run: EvalRun) -> dict[str, Any]:
    """The run's headline figures (what run.json's ``summary`` and the notebooks' metrics hold)."""
    frame = run.turns_frame()
    kinds = per_kind(frame)
    outcome_rows = scored(frame).dropna(subset=["expected_outcome"])
    outcome_ok = [_outcome_matches(e, a) for e, a in zip(outcome_rows["expected_outcome"], outcome_rows["outcome"],
                                                         strict=True)]
    return {
        **accuracy_of(scored(frame)["correct"]), "unscored_turns": int((~frame["scored"]).sum()),
        "outcome_accuracy": sum(outcome_ok) / len(outcome_ok) if outcome_ok else math.nan,
        "per_kind": kinds.to_dict("records"),
        "ms_p50": float(frame["ms"].median()) if len(frame) else math.nan,
    }


def _outcome_matches(expected: str, actual: Any) -> bool:
    return actual in expected.split("|")


# -- comparison ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Comparison:
    """This run against a previous one: turns that flipped either way, per-kind change, what differs."""

    previous_label: str
    before: Mapping[str, Any]
    after: Mapping[str, Any]
    fixed: pd.DataFrame  # wrong before, right now
    broken: pd.DataFrame  # right before, wrong now
    per_kind: pd.DataFrame
    only_now: tuple[str, ...]
    only_before: tuple[str, ...]
    differences: tuple[str, ...]

    def as_json(self) -> dict[str, Any]:
        return {
            "previous": self.previous_label, "accuracy_before": self.before["accuracy"],
            "accuracy_after": self.after["accuracy"], "fixed": list(self.fixed["id"]), "broken": list(self.broken["id"]),
            "per_kind": self.per_kind.to_dict("records"), "only_now": list(self.only_now),
            "only_before": list(self.only_before), "differences": list(self.differences),
        }


def compare_runs(current: EvalRun, previous: EvalRun, previous_label: str) -> Comparison:
    """Match turns by id (scored in both runs) and list what flipped."""
    now, before = scored(current.turns_frame()), scored(previous.turns_frame())
    joined = now.merge(before[["id", "correct", "mismatches", "outcome"]], on="id", suffixes=("", "_before"))
    fixed = joined[joined["correct"] & ~joined["correct_before"]]
    broken = joined[~joined["correct"] & joined["correct_before"]]
    kinds = []
    for kind, group in joined.groupby("kind", sort=True):
        a, b = group["correct_before"].mean(), group["correct"].mean()
        kinds.append({"kind": kind, "turns": len(group), "before": a, "after": b, "change_points": 100 * (b - a),
                      "fixed": int((group["correct"] & ~group["correct_before"]).sum()),
                      "broken": int((~group["correct"] & group["correct_before"]).sum())})
    return Comparison(
        previous_label, accuracy_of(joined["correct_before"]), accuracy_of(joined["correct"]),
        fixed.reset_index(drop=True), broken.reset_index(drop=True),
        pd.DataFrame.from_records(kinds, columns=["kind", "turns", "before", "after", "change_points", "fixed", "broken"]),
        tuple(sorted(set(now["id"]) - set(before["id"]))), tuple(sorted(set(before["id"]) - set(now["id"]))),
        tuple(run_differences(previous.meta, current.meta)),
    )


def run_differences(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """What differs between two runs' headers: commit, formulary, eval file, settings, policy."""
    out = []
    for label, key in (("commit", "commit"), ("eval file", "eval_file_sha256")):
        if before.get(key) != after.get(key):
            out.append(f"{label}: {before.get(key)} → {after.get(key)}")
    if (before.get("formulary") or {}).get("sha256") != (after.get("formulary") or {}).get("sha256"):
        out.append(f"formulary: {(before.get('formulary') or {}).get('dir')} → {(after.get('formulary') or {}).get('dir')} "
                   f"(different monographs)")
    for part in ("settings", "policy"):
        old, new = before.get(part) or {}, after.get(part) or {}
        for key in sorted(set(old) | set(new)):
            if key not in UNCOMPARED_SETTINGS and old.get(key) != new.get(key):
                out.append(f"{key}: {old.get(key)!r} → {new.get(key)!r}")
    return out


# -- report.md -----------------------------------------------------------------------------------------
def md_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table; pipes and line breaks inside cells are escaped."""
    def cell(value: Any) -> str:
        if isinstance(value, float):
            return "—" if math.isnan(value) else f"{value:.3f}"
        return str(value).replace("|", "\\|").replace("\n", " ⏎ ")

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def confusion_md(table: pd.DataFrame, corner: str) -> str:
    if table.empty:
        return "_no labelled turns_"
    headers = [f"{corner} ↓ / reply →", *map(str, table.columns)]
    return md_table(headers, [[index, *row] for index, row in zip(table.index, table.to_numpy().tolist(), strict=True)])


def interval(row: Mapping[str, Any]) -> str:
    if not row["turns"]:
        return "—"
    return f"{row['accuracy']:.3f} ({row['correct']}/{row['turns']}; 95 % CI {row['ci_low']:.2f}–{row['ci_high']:.2f})"


def render_report(run: EvalRun, comparison: Comparison | None = None, answer_chars: int = ANSWER_CHARS_SHOWN) -> str:
    """The whole ``report.md``."""
    frame = run.turns_frame()
    figures = summary(run)
    meta = run.meta
    parts = [_header(meta, figures)]
    coverage_lines = list((meta.get("coverage") or {}).get("lines") or [])
    if coverage_lines:
        parts.append("## ⚠ What the formulary lacks\n\n" + "\n".join(f"- {line}" for line in coverage_lines))
    kinds = per_kind(frame)
    parts.append("## Accuracy per kind\n\n" + md_table(
        ["kind", "turns", "right", "accuracy", "95 % CI"],
        [[r["kind"], r["turns"], r["correct"], r["accuracy"], f"{r['ci_low']:.2f}–{r['ci_high']:.2f}"]
         for r in kinds.to_dict("records")]))
    parts.append("## Outcomes: expected (rows) against the reply's (columns)\n\n"
                 + confusion_md(outcome_confusion(frame), "expected"))
    parts.append("## Sections: labelled (rows) against understood (columns)\n\n"
                 + confusion_md(section_confusion(frame), "labelled"))
    if comparison is not None:
        parts.append(_comparison_md(comparison))
    parts.append(_failures_md(run, answer_chars))
    return "\n\n".join(parts) + "\n"


def _header(meta: Mapping[str, Any], figures: Mapping[str, Any]) -> str:
    formulary = meta.get("formulary") or {}
    overrides = meta.get("overrides") or {}
    dirty = " (with uncommitted changes)" if meta.get("dirty") else ""
    lines = [
        f"# Evaluation of `{meta.get('eval_file')}`", "",
        f"- **Accuracy** (every label check right): {interval(figures)}",
        f"- outcome alone right: {figures['outcome_accuracy']:.3f}" if not math.isnan(figures["outcome_accuracy"]) else
        "- outcome alone: no turn labels an outcome",
        f"- turns scored: {figures['turns']}; run but not scored (no labels): {figures['unscored_turns']}",
        f"- formulary: `{formulary.get('dir')}` — {formulary.get('monographs')} monographs, sha256 "
        f"`{str(formulary.get('sha256'))[:16]}…`",
        f"- commit `{meta.get('commit')}`{dirty}; {meta.get('created')}",
        f"- overrides: {', '.join(f'`{k}={v}`' for k, v in overrides.items()) or 'none (the settings in force)'}",
        f"- time: {', '.join(f'{k} {v:.1f} s' for k, v in (meta.get('seconds') or {}).items())}; "
        f"p50 {figures['ms_p50']:.0f} ms per turn",
    ]
    return "\n".join(lines)


def _comparison_md(comparison: Comparison) -> str:
    b, a = comparison.before, comparison.after
    parts = [f"## Against `{comparison.previous_label}`", "",
             f"Over the {a['turns']} turns scored in both runs: {interval(b)} → {interval(a)}; "
             f"**{len(comparison.fixed)} fixed**, **{len(comparison.broken)} broken**."]
    if comparison.differences:
        parts.append("\nWhat differs between the runs:\n\n" + "\n".join(f"- {d}" for d in comparison.differences))
    else:
        parts.append("\nThe two runs have the same commit, formulary, file and settings.")
    if comparison.only_now or comparison.only_before:
        parts.append(f"\nTurns only in this run: {len(comparison.only_now)}; only in the previous one: "
                     f"{len(comparison.only_before)} (not compared).")
    parts.append("\n### Change per kind\n\n" + md_table(
        ["kind", "turns", "before", "after", "change (points)", "fixed", "broken"],
        [[r["kind"], r["turns"], r["before"], r["after"], f"{r['change_points']:+.1f}", r["fixed"], r["broken"]]
         for r in comparison.per_kind.to_dict("records")]))
    for title, rows, column in (("Fixed (wrong before, right now)", comparison.fixed, "mismatches_before"),
                                ("Broken (right before, wrong now)", comparison.broken, "mismatches")):
        parts.append(f"\n### {title}: {len(rows)}\n\n" + (md_table(
            ["id", "kind", "text", "reply before → now", "mismatches" + (" before" if column.endswith("before") else "")],
            [[r["id"], r["kind"], r["text"], f"{r['outcome_before']} → {r['outcome']}", "; ".join(r[column])]
             for r in rows.to_dict("records")]) if len(rows) else "_none_"))
    return "\n".join(parts)


def _failures_md(run: EvalRun, answer_chars: int) -> str:
    failures = [t for t in run.turns if t.get("scored", True) and not t.get("correct")]
    parts = [f"## Failures: {len(failures)}"]
    if not failures:
        return parts[0] + "\n\nEvery scored turn is right."
    parts.append(f"Each reply's answer is shown up to {answer_chars} characters; a longer one is marked *trimmed* — "
                 f"every reply is whole in `run.json`.")
    for t in failures:
        reply = t.get("reply") or {}
        answer = str(reply.get("answer", ""))
        shown = answer if len(answer) <= answer_chars else (
            answer[:answer_chars] + f"\n… [trimmed: {answer_chars} of {len(answer)} characters shown; whole in run.json]")
        frame = reply.get("frame") or {}
        parts.append("\n".join([
            f"### `{t['id']}` — kind {t.get('kind') or '(none)'}, line {t.get('line')}, turn {t.get('turn')} of "
            f"conversation `{t.get('conversation_id')}`", "",
            f"**Asked:** {t.get('text')}", "",
            "**Mismatches:**", *[f"- {m}" for m in t.get("mismatches") or []], "",
            f"**Reply:** `{reply.get('outcome')}` / `{reply.get('reason')}`, rule {reply.get('rule')}, drugs "
            f"{frame.get('drugs')}, section {frame.get('section_key')}", "",
            "```text", shown, "```",
        ]))
    return "\n\n".join(parts)
