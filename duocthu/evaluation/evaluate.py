"""``duocthu eval``: a labelled file through the agent on a private index → ``run.json`` and ``report.md``.

The CLI only parses arguments and calls :func:`run_eval_command`; notebook 08 calls
:func:`evaluate_turns` and :func:`sweep_settings` — the same code, so a figure in the notebook
is a figure ``duocthu eval`` would print.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from duocthu.config import Settings
from duocthu.evaluation.coverage import Coverage, check_coverage
from duocthu.evaluation.harness import PrivateIndex
from duocthu.evaluation.labelled import LabelledTurn, load_labelled
from duocthu.evaluation.overrides import (
    INDEX_KEYS,
    RuntimeOverrides,
    parse_overrides,
    parse_set_arguments,
    settings_json,
)
from duocthu.evaluation.report import (
    Comparison,
    compare_runs,
    interval,
    per_kind,
    render_report,
    summary,
)
from duocthu.evaluation.runs import EvalRun, load_run, run_meta, run_turns, write_run
from duocthu.indexing import ProgressFactory

DEFAULT_OUT_ROOT = Path("reports") / "eval"
REPORT_FILE = "report.md"
EXIT_BELOW_MINIMUM = 1


@dataclass(frozen=True)
class EvalRequest:
    """What ``duocthu eval`` was asked to do."""

    eval_file: Path
    out_dir: Path | None = None
    set_pairs: Sequence[str] = ()
    against: Path | None = None
    min_accuracy: float | None = None
    allow_missing: bool = False
    progress: bool = True


def default_out_dir(eval_file: Path, now: datetime | None = None) -> Path:
    """``reports/eval/<file stem>-<YYYYmmdd-HHMMSS>``: a new folder per run, so a previous one stays to compare."""
    stamp = (now or datetime.now()).strftime("%Y%m%d-%H%M%S")
    return DEFAULT_OUT_ROOT / f"{eval_file.stem}-{stamp}"


def evaluate_turns(
    index: PrivateIndex, turns: Sequence[LabelledTurn], overrides: RuntimeOverrides, eval_file: Path,
    coverage: Coverage, progress: bool = False, seconds: Mapping[str, float] | None = None,
) -> EvalRun:
    """Run ``turns`` through a fresh agent over ``index`` with ``overrides``; the run with its header and summary."""
    runtime = index.runtime(overrides)
    started = time.perf_counter()
    try:
        outcomes = run_turns(runtime.agent, turns, progress=progress)
    finally:
        runtime.conversations.close()
    timing = {**(seconds or {}), "turns": time.perf_counter() - started}
    recorded = settings_json(runtime.settings, runtime.retrieval.policy)
    recorded["settings"].pop("home", None)  # a temporary folder, different every run
    meta = run_meta(eval_file, index.settings.formulary_dir, recorded, overrides.as_json(), coverage.as_json(), timing)
    meta["index"] = {"chunks": index.report.chunks, "embedded": index.report.embedded, "from_cache": index.report.cache_hits,
                     "seconds": round(index.report.seconds, 2)}
    run = EvalRun.from_outcomes(outcomes, meta)
    meta["summary"] = summary(run)
    return run


def sweep_settings(
    index: PrivateIndex, turns: Sequence[LabelledTurn], sweep: Mapping[str, Sequence[Any]], eval_file: Path,
    coverage: Coverage, base: Mapping[str, Any] | None = None, progress: bool = False,
) -> tuple[pd.DataFrame, dict[tuple[str, Any], EvalRun]]:
    """Each value of each swept key (with ``base`` overrides) → one run; accuracy per kind and overall.

    Returns the long table (``setting, value, kind, turns, correct, accuracy, ci_low, ci_high``;
    kind ``(all)`` is the overall figure) and the runs by ``(setting, value)``.
    """
    rows, runs = [], {}
    fixed = {k: v for k, v in (base or {}).items() if k not in INDEX_KEYS}  # index keys: applied when it was built
    for key, values in sweep.items():
        for value in values:
            overrides = parse_overrides({**fixed, key: value})
            run = evaluate_turns(index, turns, overrides, eval_file, coverage, progress=progress)
            runs[(key, _hashable(value))] = run
            figures = run.meta["summary"]
            overall = {k: figures[k] for k in ("turns", "correct", "accuracy", "ci_low", "ci_high")}
            for row in [{"kind": "(all)", **overall}, *per_kind(run.turns_frame()).to_dict("records")]:
                rows.append({"setting": key, "value": value, **row})
    return pd.DataFrame.from_records(rows), runs


def _hashable(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def run_eval_command(
    request: EvalRequest, settings: Settings, index_progress: ProgressFactory | None = None,
    out: Callable[[str], None] = print, err: Callable[[str], None] = print,
) -> int:
    """The whole command; returns the exit status (1 below ``min_accuracy``). Errors are :class:`DuocthuError`."""
    turns = load_labelled(request.eval_file)
    overrides = parse_overrides(parse_set_arguments(request.set_pairs))
    settings = overrides.apply_to(settings)
    coverage = check_coverage(turns, settings.formulary_dir, request.allow_missing, echo=err)
    previous = load_run(request.against) if request.against else None
    started = time.perf_counter()
    index = PrivateIndex(settings, progress=index_progress)
    try:
        run = evaluate_turns(index, turns, overrides.without_index_keys(), request.eval_file, coverage,
                             progress=request.progress, seconds={"index": time.perf_counter() - started})
    finally:
        index.close()
    comparison = compare_runs(run, previous, str(request.against)) if previous is not None else None
    if comparison is not None:
        run.meta["against"] = comparison.as_json()
    out_dir = request.out_dir or default_out_dir(request.eval_file)
    run_path = write_run(run, out_dir)
    report_path = out_dir / REPORT_FILE
    report_path.write_text(render_report(run, comparison), encoding="utf-8")
    _print_summary(run, comparison, run_path, report_path, out)
    return _gate(run.meta["summary"], request.min_accuracy, err)


def _print_summary(run: EvalRun, comparison: Comparison | None, run_path: Path, report_path: Path,
                   out: Callable[[str], None]) -> None:
    figures = run.meta["summary"]
    out(f"accuracy {interval(figures)}")
    for row in figures["per_kind"]:
        out(f"  {row['kind']:<28} {interval(row)}")
    if comparison is not None:
        out(f"against {comparison.previous_label}: {comparison.before['accuracy']:.3f} → "
            f"{comparison.after['accuracy']:.3f}; {len(comparison.fixed)} fixed, {len(comparison.broken)} broken")
    out(f"wrote {run_path} and {report_path}")


def _gate(figures: Mapping[str, Any], minimum: float | None, err: Callable[[str], None]) -> int:
    if minimum is None:
        return 0
    accuracy = figures["accuracy"]
    if math.isnan(accuracy) or accuracy < minimum:
        err(f"accuracy {accuracy:.3f} is below --min-accuracy {minimum}")
        return EXIT_BELOW_MINIMUM
    return 0
