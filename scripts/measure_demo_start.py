"""Time a `make demo`-like start: (optionally) index, start Streamlit, load it in Chromium, ask once.

Usage::

    .venv/bin/python scripts/measure_demo_start.py [--home DIR] [--fresh] [--port N]

``--fresh`` deletes DIR first, so the index is built as `make demo` does on a first run
(`python -m duocthu index`). Without it an existing index is served. Results are printed and
written to ``artifacts/demo-start.json``. Needs /usr/bin/chromium (``make e2e-deps``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as `python scripts/…` from the repository: bench is a sibling package

from bench.app_server import (  # noqa: E402
    ANSWER_RENDERED,
    CHAT_INPUT,
    CHROMIUM,
    CHROMIUM_FLAGS,
    serve_app,
    stop_app,
)

QUESTION = "Chống chỉ định của ibuprofen?"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", default=None, help="DUOCTHU_HOME to serve (default: a new temp dir)")
    parser.add_argument("--fresh", action="store_true", help="delete the home and index first, like a first `make demo`")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    home = Path(args.home) if args.home else Path(tempfile.mkdtemp(prefix="duocthu-demo-"))
    if args.fresh and home.exists():
        shutil.rmtree(home)
    env = {**os.environ, "DUOCTHU_HOME": str(home)}
    timings: dict[str, float] = {}
    started = time.monotonic()
    if args.fresh or not (home / "qdrant").exists():
        subprocess.run([sys.executable, "-m", "duocthu", "index"], cwd=ROOT, env=env, check=True)
        timings["index_s"] = time.monotonic() - started
    app_started = time.monotonic()
    process, url = serve_app(env, home.parent / f"{home.name}-streamlit.log", port=args.port, timeout_s=180)
    try:
        timings["streamlit_healthy_s"] = time.monotonic() - app_started
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS, headless=True)
            page = browser.new_page(viewport={"width": 1440, "height": 1000})
            page.goto(url, wait_until="domcontentloaded")
            box = page.locator(CHAT_INPUT)
            box.wait_for(timeout=180_000)
            timings["chat_ready_s"] = time.monotonic() - app_started
            asked = time.monotonic()
            box.fill(QUESTION)
            box.press("Enter")
            page.wait_for_function(ANSWER_RENDERED, arg=2, timeout=120_000)  # the question, then the answer
            timings["question_to_answer_s"] = time.monotonic() - asked
            timings["app_start_to_first_answer_s"] = time.monotonic() - app_started
            timings["total_to_first_answer_s"] = time.monotonic() - started
            browser.close()
    finally:
        stop_app(process)
    rounded = {k: round(v, 2) for k, v in timings.items()}
    out = ROOT / "artifacts" / "demo-start.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"home": str(home), **rounded}, indent=2), encoding="utf-8")
    print(json.dumps(rounded, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
