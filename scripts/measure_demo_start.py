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
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
QUESTION = "Chống chỉ định của ibuprofen?"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_healthy(url: str, process: subprocess.Popen, timeout_s: float = 180) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"streamlit exited with {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.read().strip() == b"ok":
                    return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("streamlit did not become healthy")


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
    port = args.port or free_port()
    url = f"http://127.0.0.1:{port}"
    app_started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app_streamlit.py", "--server.address", "127.0.0.1",
         "--server.port", str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        wait_healthy(url, process)
        timings["streamlit_healthy_s"] = time.monotonic() - app_started
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=FLAGS, headless=True)
            page = browser.new_page(viewport={"width": 1440, "height": 1000})
            page.goto(url, wait_until="domcontentloaded")
            box = page.locator('[data-testid="stChatInputTextArea"]')
            box.wait_for(timeout=180_000)
            timings["chat_ready_s"] = time.monotonic() - app_started
            asked = time.monotonic()
            box.fill(QUESTION)
            box.press("Enter")
            answer = page.locator('[data-testid="stChatMessage"]').nth(1)
            answer.get_by_text("Quy trình xử lý").first.wait_for(timeout=120_000)
            timings["question_to_answer_s"] = time.monotonic() - asked
            timings["app_start_to_first_answer_s"] = time.monotonic() - app_started
            timings["total_to_first_answer_s"] = time.monotonic() - started
            browser.close()
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
    rounded = {k: round(v, 2) for k, v in timings.items()}
    out = ROOT / "artifacts" / "demo-start.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"home": str(home), **rounded}, indent=2), encoding="utf-8")
    print(json.dumps(rounded, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
