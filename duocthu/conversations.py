"""Conversation stores: recent turns and per-conversation state, shared across app processes.

The clarify circuit breaker's streak and the last query frame live here, not in process
memory, so several app processes serving one conversation agree. Three stores implement
:class:`ConversationStore`: in-memory (tests, ``memory://``), SQLite (the local default, WAL
mode) and PostgreSQL (psycopg 3, imported only inside its adapter). Conversation ids are user
data: every query is parameterised.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from duocthu.config import Settings
from duocthu.errors import ConversationStoreUnavailable
from duocthu.extras import require_extra

ROLES = ("user", "assistant")
# an escaped NUL in JSON text (``\u0000``), not an escaped backslash followed by "u0000"
_JSON_NUL = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")


@dataclass(frozen=True)
class TurnLine:
    role: str  # "user" | "assistant"
    text: str
    created_at: float  # epoch seconds

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"TurnLine.role must be one of {ROLES}, not {self.role!r}")
        check_storable(self.text, "turn text")


@dataclass(frozen=True)
class ConversationState:
    last_frame: dict[str, Any] | None = None
    clarify_streak: int = 0


class ConversationStore(Protocol):
    name: str

    def recent(self, conversation_id: str, limit: int) -> list[TurnLine]:
        """The last ``limit`` lines of the conversation, oldest first."""
        ...

    def append(self, conversation_id: str, lines: Sequence[TurnLine]) -> None: ...

    def get_state(self, conversation_id: str) -> ConversationState:
        """The stored state, or the default ``ConversationState()`` for an unknown id."""
        ...

    def put_state(self, conversation_id: str, state: ConversationState) -> None: ...

    def close(self) -> None: ...


def check_storable(value: str, what: str) -> str:
    """Reject strings no store can keep faithfully, so all stores behave the same.

    PostgreSQL ``text``/``jsonb`` cannot hold NUL characters, and no store can encode lone
    surrogates; everything else (Vietnamese, quotes, SQL-looking text) is kept as is.
    """
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a string, not {type(value).__name__}")
    if "\x00" in value:
        raise ValueError(f"{what} cannot contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"{what} is not valid Unicode text: {exc}") from exc
    return value


def frame_to_json(frame: dict[str, Any] | None) -> str | None:
    """The frame as JSON text (``None`` stays ``None``); raises ``ValueError`` if unstorable."""
    if frame is None:
        return None
    try:
        text = json.dumps(frame, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"last_frame must be JSON-serialisable: {exc}") from exc
    if _JSON_NUL.search(text):
        raise ValueError("last_frame cannot contain NUL characters")
    return check_storable(text, "last_frame")


class InMemoryConversationStore:
    """Process-local store guarded by a lock; frames are stored as JSON text like the others."""

    name = "memory"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._turns: dict[str, list[TurnLine]] = defaultdict(list)
        self._states: dict[str, tuple[str | None, int]] = {}  # frame kept as JSON, like the others

    def recent(self, conversation_id: str, limit: int) -> list[TurnLine]:
        check_storable(conversation_id, "conversation id")
        if limit <= 0:
            return []
        with self._lock:
            return list(self._turns.get(conversation_id, [])[-limit:])

    def append(self, conversation_id: str, lines: Sequence[TurnLine]) -> None:
        check_storable(conversation_id, "conversation id")
        with self._lock:
            self._turns[conversation_id].extend(lines)

    def get_state(self, conversation_id: str) -> ConversationState:
        check_storable(conversation_id, "conversation id")
        with self._lock:
            frame, streak = self._states.get(conversation_id, (None, 0))
        return ConversationState(None if frame is None else json.loads(frame), streak)

    def put_state(self, conversation_id: str, state: ConversationState) -> None:
        check_storable(conversation_id, "conversation id")
        frame = frame_to_json(state.last_frame)
        with self._lock:
            self._states[conversation_id] = (frame, state.clarify_streak)

    def close(self) -> None:
        pass


class SqliteConversationStore:
    """One SQLite file in WAL mode; one lock-protected connection per store instance.

    Several processes may open the same file: WAL lets readers proceed while one writes, and
    ``busy_timeout`` makes writers wait for each other instead of failing.
    """

    name = "sqlite"

    def __init__(self, path: str | Path, busy_timeout_ms: int = 5_000):
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(
                self.path,
                check_same_thread=False,
                isolation_level=None,
                timeout=busy_timeout_ms / 1000,
            )
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
            self._conn.executescript(
                """
                CREATE TABLE IF NOT EXISTS turns (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    conversation_id TEXT NOT NULL,
                    role TEXT NOT NULL,
                    text TEXT NOT NULL,
                    created_at REAL NOT NULL
                );
                CREATE INDEX IF NOT EXISTS turns_by_conversation ON turns (conversation_id, seq);
                CREATE TABLE IF NOT EXISTS conversation_state (
                    conversation_id TEXT PRIMARY KEY,
                    last_frame TEXT,
                    clarify_streak INTEGER NOT NULL DEFAULT 0,
                    updated_at REAL NOT NULL
                );
                """
            )
        except (OSError, sqlite3.Error) as exc:
            raise ConversationStoreUnavailable(
                f"cannot open the SQLite conversation store at {self.path}: {exc} "
                "(check the path is writable, or set DUOCTHU_STORE_URL)"
            ) from exc

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise ConversationStoreUnavailable(
                    f"SQLite conversation store {self.path}: {exc}"
                ) from exc

    def recent(self, conversation_id: str, limit: int) -> list[TurnLine]:
        check_storable(conversation_id, "conversation id")
        if limit <= 0:
            return []
        rows = self._execute(
            "SELECT role, text, created_at FROM turns WHERE conversation_id = ? ORDER BY seq DESC LIMIT ?",
            (conversation_id, limit),
        )
        return [TurnLine(role, text, created_at) for role, text, created_at in reversed(rows)]

    def append(self, conversation_id: str, lines: Sequence[TurnLine]) -> None:
        check_storable(conversation_id, "conversation id")
        if not lines:
            return
        with self._lock:
            try:
                with self._conn:  # one transaction: a turn's lines land together
                    self._conn.execute("BEGIN IMMEDIATE")
                    self._conn.executemany(
                        "INSERT INTO turns (conversation_id, role, text, created_at) VALUES (?, ?, ?, ?)",
                        [
                            (conversation_id, line.role, line.text, line.created_at)
                            for line in lines
                        ],
                    )
            except sqlite3.Error as exc:
                raise ConversationStoreUnavailable(
                    f"SQLite conversation store {self.path}: {exc}"
                ) from exc

    def get_state(self, conversation_id: str) -> ConversationState:
        check_storable(conversation_id, "conversation id")
        rows = self._execute(
            "SELECT last_frame, clarify_streak FROM conversation_state WHERE conversation_id = ?",
            (conversation_id,),
        )
        if not rows:
            return ConversationState()
        frame, streak = rows[0]
        return ConversationState(None if frame is None else json.loads(frame), int(streak))

    def put_state(self, conversation_id: str, state: ConversationState) -> None:
        check_storable(conversation_id, "conversation id")
        self._execute(
            "INSERT INTO conversation_state (conversation_id, last_frame, clarify_streak, updated_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (conversation_id) DO UPDATE SET "
            "last_frame = excluded.last_frame, clarify_streak = excluded.clarify_streak, "
            "updated_at = excluded.updated_at",
            (conversation_id, frame_to_json(state.last_frame), state.clarify_streak, time.time()),
        )

    def close(self) -> None:
        with self._lock:
            self._conn.close()


_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]{0,40}$")


class PostgresConversationStore:
    """PostgreSQL through psycopg 3: one lock-protected autocommit connection, reopened if lost.

    Tables ``{prefix}_turns`` and ``{prefix}_conversation_state`` are created if missing (under
    an advisory lock, so processes starting together do not race). ``table_prefix`` is
    validated as a plain identifier because it is the one thing interpolated into SQL.
    """

    name = "postgres"

    def __init__(self, url: str, table_prefix: str = "duocthu", connect_timeout_s: int = 5):
        if not _IDENTIFIER.match(table_prefix):
            raise ValueError(f"table_prefix must match {_IDENTIFIER.pattern}, not {table_prefix!r}")
        self.url = url
        self.turns_table = f"{table_prefix}_turns"
        self.state_table = f"{table_prefix}_conversation_state"
        self._connect_timeout_s = connect_timeout_s
        self._lock = threading.Lock()
        self._conn: Any = None
        with self._lock:
            conn = self._connection()
            try:
                self._create_tables(conn)
            except ConversationStoreUnavailable:
                conn.close()
                self._conn = None
                raise

    def _connection(self) -> Any:
        psycopg = require_extra("psycopg", "postgres", "DUOCTHU_STORE_URL=postgresql://…")

        if self._conn is None or self._conn.closed or self._conn.broken:
            try:
                self._conn = psycopg.connect(
                    self.url, autocommit=True, connect_timeout=self._connect_timeout_s
                )
            except psycopg.Error as exc:
                raise ConversationStoreUnavailable(
                    f"cannot connect to the PostgreSQL conversation store: {exc} "
                    "(check DUOCTHU_STORE_URL and that the server is running)"
                ) from exc
        return self._conn

    def _create_tables(self, conn: Any) -> None:
        import psycopg

        try:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (self.turns_table,))
                conn.execute(
                    f"CREATE TABLE IF NOT EXISTS {self.turns_table} ("
                    " conversation_id text NOT NULL, seq bigserial PRIMARY KEY,"
                    " role text NOT NULL, text text NOT NULL, created_at double precision NOT NULL)"
                )
                conn.execute(
                    f"CREATE INDEX IF NOT EXISTS {self.turns_table}_by_conversation"
                    f" ON {self.turns_table} (conversation_id, seq)"
                )
                conn.execute(
                    f"CREATE TABLE IF NOT EXISTS {self.state_table} ("
                    " conversation_id text PRIMARY KEY, last_frame jsonb,"
                    " clarify_streak int NOT NULL DEFAULT 0, updated_at timestamptz NOT NULL DEFAULT now())"
                )
        except psycopg.Error as exc:
            raise ConversationStoreUnavailable(
                f"cannot create the conversation tables: {exc}"
            ) from exc

    def _run(
        self, sql: str, params: Sequence[Any] = (), many: bool = False
    ) -> list[tuple[Any, ...]]:
        import psycopg

        with self._lock:
            conn = self._connection()
            try:
                if many:
                    with conn.transaction(), conn.cursor() as cur:
                        cur.executemany(sql, params)
                    return []
                cur = conn.execute(sql, params)
                return cur.fetchall() if cur.description else []
            except psycopg.Error as exc:
                raise ConversationStoreUnavailable(f"PostgreSQL conversation store: {exc}") from exc

    def recent(self, conversation_id: str, limit: int) -> list[TurnLine]:
        check_storable(conversation_id, "conversation id")
        if limit <= 0:
            return []
        rows = self._run(
            f"SELECT role, text, created_at FROM {self.turns_table}"
            " WHERE conversation_id = %s ORDER BY seq DESC LIMIT %s",
            (conversation_id, limit),
        )
        return [TurnLine(role, text, created_at) for role, text, created_at in reversed(rows)]

    def append(self, conversation_id: str, lines: Sequence[TurnLine]) -> None:
        check_storable(conversation_id, "conversation id")
        if not lines:
            return
        self._run(
            f"INSERT INTO {self.turns_table} (conversation_id, role, text, created_at) VALUES (%s, %s, %s, %s)",
            [(conversation_id, line.role, line.text, line.created_at) for line in lines],
            many=True,
        )

    def get_state(self, conversation_id: str) -> ConversationState:
        check_storable(conversation_id, "conversation id")
        rows = self._run(
            f"SELECT last_frame, clarify_streak FROM {self.state_table} WHERE conversation_id = %s",
            (conversation_id,),
        )
        if not rows:
            return ConversationState()
        frame, streak = rows[0]
        return ConversationState(frame, int(streak))

    def put_state(self, conversation_id: str, state: ConversationState) -> None:
        check_storable(conversation_id, "conversation id")
        frame = frame_to_json(state.last_frame)
        self._run(
            f"INSERT INTO {self.state_table} (conversation_id, last_frame, clarify_streak, updated_at)"
            " VALUES (%s, %s::jsonb, %s, now()) ON CONFLICT (conversation_id) DO UPDATE SET"
            " last_frame = EXCLUDED.last_frame, clarify_streak = EXCLUDED.clarify_streak,"
            " updated_at = EXCLUDED.updated_at",
            (conversation_id, frame, state.clarify_streak),
        )

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def open_conversation_store(settings: Settings) -> ConversationStore:
    """The store ``DUOCTHU_STORE_URL`` names; by default SQLite under ``settings.home``.

    ``postgresql://…`` / ``postgres://…`` → PostgreSQL; ``sqlite:///path`` → SQLite at
    ``path`` (``sqlite:////abs/path`` for an absolute path); ``memory://`` → in-memory.
    """
    url = settings.store_url
    if url is None:
        return SqliteConversationStore(settings.sqlite_store_path)
    if url.startswith(("postgresql://", "postgres://")):
        return PostgresConversationStore(url)
    if url.startswith("sqlite:///") and len(url) > len("sqlite:///"):
        return SqliteConversationStore(url[len("sqlite:///") :])
    if url == "memory://":
        return InMemoryConversationStore()
    raise ConversationStoreUnavailable(
        f"DUOCTHU_STORE_URL={url!r} is not supported: use postgresql://…, sqlite:///path or memory://"
    )
