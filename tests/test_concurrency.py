"""One shared agent under threads, and two processes on the PostgreSQL store: no errors, no leaks."""

from __future__ import annotations

import multiprocessing
import os
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from duocthu.agent.agent import RagAgent
from duocthu.agent.answering import (
    ExtractiveAnswerGenerator,
    GroundedAnswerService,
    VerbatimEntailmentChecker,
)
from duocthu.conversations import InMemoryConversationStore
from duocthu.runtime import understanding_parts
from duocthu.understanding import get_understander

pytestmark = pytest.mark.slow  # 50 turns on eight threads; two processes on PostgreSQL (12 s, 24 s)

POSTGRES_URL = os.environ.get("DUOCTHU_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


def _agent(retrieval, store):
    parts = understanding_parts(retrieval.store, retrieval.embed_query)
    return RagAgent(get_understander("learned", parts), retrieval,
                    GroundedAnswerService(ExtractiveAnswerGenerator(), VerbatimEntailmentChecker()), parts.resolver,
                    store, lexicon=parts.lexicon)


def _conversation(agent, worker: int, turns: int) -> list[str]:
    """A dosing conversation whose weight identifies the worker; any other weight is a leak."""
    problems = []
    weight = 10 + worker
    cid = f"w{worker}-{uuid.uuid4().hex[:6]}"
    for i in range(turns):
        text = f"Liều thuốc A cho bé nặng {weight} kg?" if i % 2 == 0 else f"Bé {worker + 2} tuổi"
        reply = agent.handle(text, cid)
        if reply.reason in ("internal_error",) or reply.failures:
            problems.append(f"{cid}#{i}: {reply.reason} {reply.failures}")
        frame = reply.frame or {}
        if frame.get("weight_kg") not in (None, weight):
            problems.append(f"{cid}#{i}: leaked weight {frame.get('weight_kg')}")
    return problems


def test_eight_threads_fifty_turns_one_agent(fixture_retrieval):
    agent = _agent(fixture_retrieval, InMemoryConversationStore())
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda w: _conversation(agent, w, 50), range(8)))
    assert [p for problems in results for p in problems] == []


def _process_main(url: str, prefix: str, worker: int, queue) -> None:  # pragma: no cover - runs in a child
    from duocthu.config import Settings
    from duocthu.conversations import PostgresConversationStore
    from duocthu.runtime import build_in_memory_runtime
    from tests.conftest import FIXTURE_FORMULARY

    try:
        settings = Settings.from_env({"DUOCTHU_HOME": f"/tmp/duocthu-proc-{prefix}-{worker}",
                                      "DUOCTHU_EMBEDDING_CACHE": f"/tmp/duocthu-proc-cache-{prefix}"})
        store = PostgresConversationStore(url, table_prefix=prefix)
        runtime = build_in_memory_runtime(settings, source=FIXTURE_FORMULARY, conversations=store)
        queue.put(_conversation(runtime.agent, worker, 20))
    except Exception as exc:
        queue.put([f"worker {worker} crashed: {type(exc).__name__}: {exc}"])


@pytest.mark.integration
def test_two_processes_share_the_postgres_store(tmp_path):
    psycopg = pytest.importorskip("psycopg")
    try:
        psycopg.connect(POSTGRES_URL, connect_timeout=3).close()
    except Exception as exc:
        pytest.skip(f"no PostgreSQL at {POSTGRES_URL}: {exc}")
    prefix = f"dtc_{uuid.uuid4().hex[:8]}"
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    workers = [context.Process(target=_process_main, args=(POSTGRES_URL, prefix, w, queue)) for w in range(2)]
    for process in workers:
        process.start()
    results = [queue.get(timeout=600) for _ in workers]
    for process in workers:
        process.join(timeout=60)
    try:
        assert [p for problems in results for p in problems] == []
    finally:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            conn.execute(f"DROP TABLE IF EXISTS {prefix}_turns, {prefix}_conversation_state")
