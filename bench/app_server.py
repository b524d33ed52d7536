"""The demo app in a real browser: one way to serve it, wait for it and stop it.

Shared by the sessions stage of the benchmark, the end-to-end browser tests and
``scripts/measure_demo_start.py``, so that all three start ``streamlit run app_streamlit.py`` the
way ``make demo`` does and recognise a rendered answer the same way. Standard library only.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Mapping
from pathlib import Path

from duocthu.config import PROJECT_ROOT

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
CHAT_INPUT = '[data-testid="stChatInputTextArea"]'
# ``page.evaluate(ANSWER_RENDERED, n)``: the n-th chat message is there with its decision caption, and
# nothing is still running.
ANSWER_RENDERED = """(n) => document.querySelectorAll('[data-testid="stChatMessage"]').length >= n
    && document.querySelectorAll('[data-testid="stChatMessage"]')[n - 1]
         .querySelector('[data-testid="stCaptionContainer"]') !== null
    && !document.querySelector('[data-testid="stSpinner"]')"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve_app(env: Mapping[str, str], log_path: Path, port: int = 0,
              timeout_s: float = 120) -> tuple[subprocess.Popen, str]:
    """Start the app with ``env`` (its ``DUOCTHU_HOME``) on ``port`` (0: a free one) and wait until it
    answers its health check; the process is stopped again if it never does."""
    port = port or free_port()
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(PROJECT_ROOT / "app_streamlit.py"),
             "--server.address", "127.0.0.1", "--server.port", str(port), "--server.headless", "true",
             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
            cwd=PROJECT_ROOT, env=dict(env), stdout=log, stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_for_health(url, process, timeout_s, log_path)
    except Exception:
        stop_app(process)
        raise
    return process, url


def _wait_for_health(url: str, process: subprocess.Popen, timeout_s: float, log_path: Path) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited with {process.returncode} (log {log_path})")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.read().strip() == b"ok":
                    return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"streamlit did not answer at {url} within {timeout_s:.0f} s (log {log_path})")


def stop_app(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
