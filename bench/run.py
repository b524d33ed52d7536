"""``python -m bench`` — run every stage, then write the report (``docs/benchmarks.md``).

Each stage runs in its own child process (``bench.child``) unless ``--inline``; a stage that
fails or runs out of memory is reported as such and the run goes on.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.measure import machine
from bench.profiles import Profile, get_profile
from bench.workspace import FORMULARY, Workspace, coverage
from duocthu.config import PROJECT_ROOT

DEFAULT_OUT = PROJECT_ROOT / "docs" / "benchmarks.md"


def _load_average() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def _log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def _stage_plan(profile: Profile, only: set[str] | None, tiers: tuple[int, ...]) -> list[tuple[str, str, dict[str, Any]]]:
    """(key, stage, params) in run order: `app_memory` needs the index `commands` builds."""
    plan = [
        ("index_build", "index_build", profile.index_build),
        ("commands", "commands", profile.commands),
        ("app_memory", "app_memory", profile.app_memory),
        ("demo", "demo", profile.demo),
        ("quality", "quality", profile.quality),
    ]
    plan += [(f"synthetic_{n}", "synthetic", {**profile.synthetic, "target_chunks": n}) for n in tiers]
    if profile.name != "smoke" or (only and "book" in only):  # bench/stages_book.py (smoke: only when asked)
        plan.append(("book", "book", {"profile": profile.name}))
    if profile.name != "smoke" or (only and "sessions" in only):  # bench/stages_sessions.py (Chromium)
        plan.append(("sessions", "sessions", {"sessions": 8, "rounds": 3}))
    if only:
        plan = [step for step in plan if step[1] in only or step[0] in only]
    return plan


def _run_child(ws: Workspace, key: str, stage: str, params: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    params_path, result_path = ws.root / f"{key}.params.json", ws.root / f"{key}.result.json"
    params_path.write_text(json.dumps(params))
    argv = [sys.executable, "-m", "bench.child", stage, str(ws.root), str(ws.formulary), str(params_path), str(result_path)]
    try:
        # stderr is inherited: a stage's progress lines show live; its failure comes back in the result file
        done = subprocess.run(argv, cwd=PROJECT_ROOT, env=ws.env("unused"), stdout=subprocess.DEVNULL, text=True,
                              timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"did not finish within {timeout_s:.0f} s (stage timeout)"}
    if result_path.exists():
        return dict(json.loads(result_path.read_text()))
    if done.returncode < 0:
        name = signal.Signals(-done.returncode).name
        hint = " — most likely the kernel's out-of-memory killer" if name == "SIGKILL" else ""
        return {"ok": False, "error": f"child process killed by {name}{hint}"}
    return {"ok": False, "error": f"child process exited with {done.returncode} without a result (see the log above)"}


def _run_inline(ws: Workspace, stage: str, params: dict[str, Any]) -> dict[str, Any]:
    from bench.child import run_stage

    try:
        return {"ok": True, "result": run_stage(stage, ws, params)}
    except Exception as exc:  # noqa: BLE001 - reported, the run goes on
        import traceback

        return {"ok": False, "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-3000:]}


def _subset_formulary(ws: Workspace, drugs: tuple[str, ...]) -> Path:
    target = ws.root / "formulary"
    target.mkdir(parents=True, exist_ok=True)
    for drug in drugs:
        shutil.copy(FORMULARY / f"{drug}.md", target / f"{drug}.md")
    return target


def run(profile: Profile, out: Path, workdir: Path, inline: bool = False, only: set[str] | None = None,
        tiers: tuple[int, ...] | None = None, allow_missing_vectors: bool = False,
        command: str = "") -> dict[str, Any]:
    started = time.perf_counter()
    ws = Workspace(workdir)
    ws.prepare()
    if profile.formulary_drugs:
        ws = Workspace(workdir, _subset_formulary(ws, profile.formulary_drugs))
    cover = coverage(ws.formulary, ws.cache_dir)
    if cover["chunks_missing_vector"] and not allow_missing_vectors:
        raise SystemExit(
            f"bench: {cover['chunks_missing_vector']} of {cover['chunks']} chunks ({cover['drugs_missing_vector']} drugs) "
            "have no vector in data/embedding-cache/: a build would embed them (slow) and distort the build and "
            "scale figures. Commit the full cache (`duocthu index` writes it) or pass --allow-missing-vectors."
        )
    results: dict[str, Any] = {
        "profile": profile.name, "command": command, "machine": machine(), "coverage": cover,
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"), "load_average_start": _load_average(),
        "formulary": str(ws.formulary.relative_to(PROJECT_ROOT)) if ws.formulary.is_relative_to(PROJECT_ROOT)
        else f"{len(profile.formulary_drugs or ())}-drug subset of data/formulary ({', '.join(profile.formulary_drugs or ())})",
        "inline": inline, "stages": {},
    }
    for key, stage, params in _stage_plan(profile, only, tiers if tiers is not None else profile.synthetic_tiers):
        _log(f"{key} …")
        t0 = time.perf_counter()
        record = _run_inline(ws, stage, params) if inline else _run_child(ws, key, stage, params, profile.stage_timeout_s)
        record["params"] = params
        results["stages"][key] = record
        _log(f"{key} {'done' if record['ok'] else 'FAILED: ' + record['error']} in {time.perf_counter() - t0:.0f} s")
    results["load_average_end"] = _load_average()
    results["total_s"] = round(time.perf_counter() - started, 1)

    from bench.report import render

    out.parent.mkdir(parents=True, exist_ok=True)
    from bench.stages_book import render_book
    from bench.stages_sessions import report_lines as render_sessions

    out.write_text(render(results) + render_book(results) + "\n".join(render_sessions(results)), encoding="utf-8")
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="full", help="full (make bench) or smoke (tiny sizes, for CI)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="report path (default docs/benchmarks.md)")
    parser.add_argument("--json", type=Path, help="also write the raw results as JSON here")
    parser.add_argument("--only", help="comma-separated stages: index_build,commands,app_memory,demo,quality,synthetic,book")
    parser.add_argument("--tiers", help="comma-separated synthetic sizes in chunks (default: the profile's)")
    parser.add_argument("--inline", action="store_true", help="run stages in this process (peak memory is shared)")
    parser.add_argument("--workdir", type=Path, help="workspace (default: a new temporary folder, removed after)")
    parser.add_argument("--keep", action="store_true", help="keep the workspace")
    parser.add_argument("--allow-missing-vectors", action="store_true",
                        help="run even if the embedding cache does not cover the formulary")
    args = parser.parse_args(argv)
    profile = get_profile(args.profile)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="duocthu-bench-"))
    shown = [a for a in (sys.argv[1:] if argv is None else argv)]
    command = shlex.join([".venv/bin/python", "-m", "bench", *shown])
    try:
        results = run(
            profile, args.out, workdir, inline=args.inline,
            only=set(args.only.split(",")) if args.only else None,
            tiers=tuple(int(x) for x in args.tiers.split(",")) if args.tiers else None,
            allow_missing_vectors=args.allow_missing_vectors, command=command,
        )
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(results, ensure_ascii=False, indent=1), encoding="utf-8")
    failed = [k for k, v in results["stages"].items() if not v["ok"]]
    _log(f"wrote {args.out} in {results['total_s']:.0f} s" + (f"; failed stages: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
