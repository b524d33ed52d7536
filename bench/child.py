"""One stage in its own process: ``python -m bench.child STAGE WORKSPACE PARAMS.json RESULT.json``."""

from __future__ import annotations

import json
import resource
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.workspace import Workspace

Stage = Callable[[Workspace, dict[str, Any]], dict[str, Any]]


def get_stage(name: str) -> Stage:
    from bench import stages_book, stages_build, stages_latency, stages_quality, stages_sessions

    stages: dict[str, Stage] = {
        "demo": stages_latency.stage_demo,
        "synthetic": stages_latency.stage_synthetic,
        "index_build": stages_build.stage_index_build,
        "commands": stages_build.stage_commands,
        "app_memory": stages_build.stage_app_memory,
        "quality": stages_quality.stage_quality,
        "book": stages_book.stage_book,
        "sessions": stages_sessions.stage_sessions,
    }
    try:
        return stages[name]
    except KeyError:
        raise ValueError(f"unknown stage {name!r}; choose from {', '.join(stages)}") from None


def _cpu_s() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def run_stage(name: str, workspace: Workspace, params: dict[str, Any]) -> dict[str, Any]:
    started, cpu = time.perf_counter(), _cpu_s()
    with warnings.catch_warnings():
        # local mode warns once past 20k points; the report states the sizes instead
        warnings.simplefilter("ignore", UserWarning)
        result = get_stage(name)(workspace, params)
    result["stage_s"] = round(time.perf_counter() - started, 1)
    result["stage_cpu_s"] = round(_cpu_s() - cpu, 1)  # CPU/wall well under 1: the machine was busy
    return result


def main(argv: list[str] | None = None) -> int:
    name, root, formulary, params_path, result_path = sys.argv[1:] if argv is None else argv
    workspace = Workspace(Path(root), Path(formulary))
    params = json.loads(Path(params_path).read_text())
    try:
        record = {"ok": True, "result": run_stage(name, workspace, params)}
    except BaseException as exc:  # noqa: BLE001 - the parent reports any failure of a stage
        record = {"ok": False, "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-3000:]}
    Path(result_path).write_text(json.dumps(record, ensure_ascii=False, indent=1))
    return 0 if record["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
