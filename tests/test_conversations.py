"""Conversation stores: one contract run against in-memory, SQLite and PostgreSQL.

PostgreSQL tests talk to the real local server (``integration``) in tables with a prefix
unique to this test session, dropped at the end; they skip when no server is reachable.
"""

from __future__ import annotations

import multiprocessing
import os
import uuid
from dataclasses import replace

import pytest

from duocthu.conversations import (
    ConversationState,
    ConversationStore,
    InMemoryConversationStore,
    PostgresConversationStore,
    SqliteConversationStore,
    TurnLine,
    open_conversation_store,
)
from duocthu.errors import ConversationStoreUnavailable, DuocthuError

PG_URLS = ("postgresql://postgres@127.0.0.1:5432/test", "postgresql://root@127.0.0.1:5432/test")
SQL_LOOKING_IDS = (
    "x'; DROP TABLE duocthu_turns; --",
    'a"); DELETE FROM duocthu_conversation_state; --',
)
FRAME = {
    "intent": "dose",
    "drug": "Paracetamol",
    "sections": ["liều dùng", "chống chỉ định"],
    "population": {"age_years": 7, "weight_kg": 21.5, "pregnant": False, "renal": None},
}


def lines(*texts: str, start: float = 1_700_000_000.0) -> list[TurnLine]:
    return [
        TurnLine("user" if i % 2 == 0 else "assistant", text, start + i)
        for i, text in enumerate(texts)
    ]


# ---------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def pg_url() -> str:
    psycopg = pytest.importorskip("psycopg")
    failures = []
    for url in PG_URLS:
        try:
            with psycopg.connect(url, connect_timeout=3):
                return url
        except psycopg.Error as exc:
            failures.append(f"{url}: {str(exc).strip()}")
    pytest.skip("no PostgreSQL server reachable for integration tests: " + "; ".join(failures))


@pytest.fixture(scope="session")
def pg_prefix(pg_url):
    """A table prefix unique to this test session; its tables are dropped at the end."""
    import psycopg

    prefix = f"duocthu_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    yield prefix
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"DROP TABLE IF EXISTS {prefix}_turns, {prefix}_conversation_state")


@pytest.fixture(
    params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.integration)]
)
def store(request, tmp_path):
    if request.param == "memory":
        opened: ConversationStore = InMemoryConversationStore()
    elif request.param == "sqlite":
        opened = SqliteConversationStore(tmp_path / "nested" / "conversations.sqlite3")
    else:
        opened = PostgresConversationStore(
            request.getfixturevalue("pg_url"), table_prefix=request.getfixturevalue("pg_prefix")
        )
    yield opened
    opened.close()


@pytest.fixture()
def cid() -> str:
    """A conversation id unique to this test (the PostgreSQL tables live for the whole session)."""
    return f"hội-thoại-{uuid.uuid4().hex}"


# ---------------------------------------------------------------- the contract


def test_append_and_recent_order_and_limit(store, cid):
    store.append(cid, lines("q1", "a1"))
    store.append(cid, lines("q2", "a2", "q3", start=1_700_000_100.0))

    assert [line.text for line in store.recent(cid, 10)] == ["q1", "a1", "q2", "a2", "q3"]
    assert [line.text for line in store.recent(cid, 3)] == ["q2", "a2", "q3"]
    assert store.recent(cid, 0) == []
    last = store.recent(cid, 1)[0]
    assert last == TurnLine("user", "q3", 1_700_000_102.0)


def test_recent_of_unknown_conversation_is_empty(store, cid):
    assert store.recent(cid, 5) == []
    store.append(cid, [])
    assert store.recent(cid, 5) == []


def test_conversations_are_isolated(store, cid):
    other = cid + "-khác"
    store.append(cid, lines("mine"))
    store.append(other, lines("theirs"))
    store.put_state(cid, ConversationState(FRAME, 1))

    assert [line.text for line in store.recent(cid, 10)] == ["mine"]
    assert [line.text for line in store.recent(other, 10)] == ["theirs"]
    assert store.get_state(other) == ConversationState()
    assert store.recent(cid.upper(), 10) == []  # ids are exact, not case-folded


def test_state_default_put_get_overwrite(store, cid):
    assert store.get_state(cid) == ConversationState(None, 0)

    store.put_state(cid, ConversationState(FRAME, 2))
    assert store.get_state(cid) == ConversationState(FRAME, 2)

    store.put_state(cid, ConversationState({"intent": "overview"}, 0))
    assert store.get_state(cid) == ConversationState({"intent": "overview"}, 0)

    store.put_state(cid, ConversationState(None, 3))
    assert store.get_state(cid) == ConversationState(None, 3)


def test_state_is_a_copy(store, cid):
    frame = {"drug": "Amoxicilin", "sections": ["liều dùng"]}
    store.put_state(cid, ConversationState(frame, 1))
    frame["sections"].append("mutated after put")

    got = store.get_state(cid)
    assert got.last_frame == {"drug": "Amoxicilin", "sections": ["liều dùng"]}
    got.last_frame["drug"] = "mutated after get"
    assert store.get_state(cid).last_frame["drug"] == "Amoxicilin"


def test_vietnamese_unicode_round_trips(store, cid):
    text = 'Liều dùng của thuốc hạ sốt cho trẻ em dưới 6 tuổi là bao nhiêu? 🤒 — «ổn» ‘đúng’ "x"'
    decomposed = "Thuốc".replace("ố", "o\u0302\u0301")  # NFD form is kept, not normalised
    store.append(cid, lines(text, decomposed))
    store.put_state(cid, ConversationState({"câu hỏi": text, "ghi chú": decomposed}, 1))

    assert [line.text for line in store.recent(cid, 5)] == [text, decomposed]
    assert store.get_state(cid).last_frame == {"câu hỏi": text, "ghi chú": decomposed}


@pytest.mark.parametrize("sql_id", SQL_LOOKING_IDS)
def test_sql_looking_ids_are_data(store, sql_id):
    if isinstance(store, PostgresConversationStore):  # aim the "injection" at this store's tables
        sql_id = sql_id.replace("duocthu_", store.turns_table.removesuffix("turns"))
    innocent = f"innocent-{uuid.uuid4().hex}"
    store.append(innocent, lines("still here"))

    store.append(sql_id, lines("x'); --", "'; SELECT 1; --"))
    store.put_state(sql_id, ConversationState({"drug": "'; DROP TABLE x; --"}, 4))

    assert [line.text for line in store.recent(sql_id, 5)] == ["x'); --", "'; SELECT 1; --"]
    assert store.get_state(sql_id) == ConversationState({"drug": "'; DROP TABLE x; --"}, 4)
    assert [line.text for line in store.recent(innocent, 5)] == ["still here"]
    assert store.recent("x", 5) == []


def test_unstorable_strings_are_rejected_the_same_everywhere(store, cid):
    with pytest.raises(ValueError, match="NUL"):
        store.append("a\x00b", lines("q"))
    with pytest.raises(ValueError, match="NUL"):
        store.put_state(cid, ConversationState({"drug": "a\x00b"}, 0))
    with pytest.raises(ValueError, match="NUL"):
        TurnLine("user", "a\x00b", 0.0)
    with pytest.raises(ValueError, match="Unicode"):
        store.get_state("\ud800")
    # a literal backslash + "u0000" is ordinary text
    store.put_state(cid, ConversationState({"raw": "\\u0000"}, 0))
    assert store.get_state(cid).last_frame == {"raw": "\\u0000"}


def test_turn_line_role_is_checked():
    with pytest.raises(ValueError, match="role"):
        TurnLine("system", "hi", 0.0)


# ---------------------------------------------------------------- several processes


def test_two_sqlite_stores_on_one_file_share_state(tmp_path):
    path = tmp_path / "shared.sqlite3"
    first, second = SqliteConversationStore(path), SqliteConversationStore(path)
    try:
        first.put_state("c1", ConversationState({"drug": "Ibuprofen"}, 1))
        first.append("c1", lines("q1", "a1"))
        assert second.get_state("c1") == ConversationState({"drug": "Ibuprofen"}, 1)
        assert [line.text for line in second.recent("c1", 5)] == ["q1", "a1"]

        state = second.get_state("c1")
        second.put_state("c1", replace(state, clarify_streak=state.clarify_streak + 1))
        assert first.get_state("c1").clarify_streak == 2
        journal_mode = first._conn.execute("PRAGMA journal_mode").fetchone()[0]
        assert journal_mode == "wal"
    finally:
        first.close()
        second.close()


def _worker(kind: str, target: str, prefix: str | None, worker: int, shared: str, own: str) -> int:
    """Runs in a spawned process: 20 turns in its own conversation, bumps the shared state."""
    if kind == "postgres":
        store: ConversationStore = PostgresConversationStore(
            target, table_prefix=prefix or "duocthu"
        )
    else:
        store = SqliteConversationStore(target)
    try:
        for i in range(20):
            store.append(
                own, [TurnLine("user" if i % 2 == 0 else "assistant", f"w{worker}-{i}", float(i))]
            )
            state = store.get_state(shared)
            store.put_state(
                shared, ConversationState({"worker": worker, "i": i}, state.clarify_streak + 1)
            )
    finally:
        store.close()
    return worker


def _run_two_processes(
    kind: str, target: str, prefix: str | None, opened: ConversationStore
) -> None:
    run = uuid.uuid4().hex
    shared, owns = f"shared-{run}", [f"own-{run}-0", f"own-{run}-1"]
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2) as pool:
        done = pool.starmap(
            _worker, [(kind, target, prefix, w, shared, owns[w]) for w in (0, 1)], chunksize=1
        )
    assert sorted(done) == [0, 1]  # any exception in a worker re-raises here

    for w, own in enumerate(owns):
        assert [line.text for line in opened.recent(own, 100)] == [f"w{w}-{i}" for i in range(20)]
    assert opened.recent(shared, 10) == []
    state = opened.get_state(shared)
    # read-modify-write is not atomic across processes, so bumps may be lost, never invented
    assert 20 <= state.clarify_streak <= 40
    assert state.last_frame in [{"worker": w, "i": 19} for w in (0, 1)]


@pytest.mark.integration
@pytest.mark.slow
def test_two_processes_on_postgres(pg_url, pg_prefix):
    # the tables exist before the workers race to open the store
    opened = PostgresConversationStore(pg_url, table_prefix=pg_prefix)
    try:
        _run_two_processes("postgres", pg_url, pg_prefix, opened)
    finally:
        opened.close()


@pytest.mark.slow
def test_two_processes_on_sqlite(tmp_path):
    path = tmp_path / "shared.sqlite3"
    opened = SqliteConversationStore(path)
    try:
        _run_two_processes("sqlite", str(path), None, opened)
    finally:
        opened.close()


# ---------------------------------------------------------------- open_conversation_store


def test_open_default_is_sqlite_under_home(settings):
    store = open_conversation_store(settings)
    try:
        assert isinstance(store, SqliteConversationStore)
        assert store.path == settings.sqlite_store_path
        assert settings.sqlite_store_path.exists()
    finally:
        store.close()


def test_open_sqlite_url(settings, tmp_path):
    path = tmp_path / "elsewhere" / "c.sqlite3"
    store = open_conversation_store(replace(settings, store_url=f"sqlite:///{path}"))
    try:
        assert isinstance(store, SqliteConversationStore)
        assert store.path == path
    finally:
        store.close()


def test_open_memory_url(settings):
    assert isinstance(
        open_conversation_store(replace(settings, store_url="memory://")), InMemoryConversationStore
    )


@pytest.mark.parametrize("scheme", ["postgresql", "postgres"])
def test_open_unreachable_postgres_raises_store_unavailable(settings, scheme):
    url = f"{scheme}://postgres@127.0.0.1:1/test?connect_timeout=2"
    with pytest.raises(ConversationStoreUnavailable, match="PostgreSQL") as raised:
        open_conversation_store(replace(settings, store_url=url))
    assert isinstance(raised.value, DuocthuError)


def test_open_unknown_scheme(settings):
    with pytest.raises(ConversationStoreUnavailable, match="not supported"):
        open_conversation_store(replace(settings, store_url="redis://localhost"))


def test_sqlite_unwritable_path_raises_store_unavailable(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with pytest.raises(ConversationStoreUnavailable, match="SQLite"):
        SqliteConversationStore(blocker / "c.sqlite3")


@pytest.mark.integration
def test_postgres_table_prefix_must_be_an_identifier(pg_url):
    with pytest.raises(ValueError, match="table_prefix"):
        PostgresConversationStore(pg_url, table_prefix="x; DROP TABLE y")
