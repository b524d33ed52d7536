"""Run one ``duocthu`` command in this process and record its wall time and peak memory.

``python -m bench.peak RESULT.json [--stdout FILE] -- index`` runs ``duocthu index`` exactly as
the console script does (``duocthu.cli.main``), then writes ``{"rc", "wall_s", "peak_rss_mb"}``.
The wall time includes imports, as a user running the command would see it.
"""

from __future__ import annotations

import time

STARTED = time.perf_counter()

import argparse  # noqa: E402
import contextlib  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    split = args.index("--")
    parser = argparse.ArgumentParser(prog="python -m bench.peak")
    parser.add_argument("result")
    parser.add_argument("--stdout")
    options = parser.parse_args(args[:split])
    command = args[split + 1 :]

    from bench.measure import peak_rss_mb
    from duocthu.cli import main as duocthu_main

    with contextlib.ExitStack() as stack:
        if options.stdout:
            handle = stack.enter_context(open(options.stdout, "w", encoding="utf-8"))
            stack.enter_context(contextlib.redirect_stdout(handle))
        rc = duocthu_main(command)
    Path(options.result).write_text(json.dumps({
        "rc": rc, "wall_s": round(time.perf_counter() - STARTED, 2), "peak_rss_mb": peak_rss_mb(),
    }))
    return rc


if __name__ == "__main__":
    raise SystemExit(main())
