"""A conversation as the page shows it: its id in the URL, its turns restored after a reload or from a link.

The conversation store (``duocthu.conversations``) is the durable record: it keeps each turn's
question and answer text. The :class:`ReplyArchive` keeps, in this app process, the full replies a
session has shown (source cards, safety quotes), so a reload served by the same process shows the
same document; after a restart, or for turns answered by another process, the store's text is shown.
"""

from __future__ import annotations

import re
import threading
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from duocthu.agent.reply import AgentReply
from duocthu.conversations import ConversationStore

_ID = re.compile(r"^[0-9a-f]{32}$")
MAX_RESTORED_TURNS = 100


def new_conversation_id() -> str:
    return uuid.uuid4().hex


def valid_conversation_id(value: object) -> bool:
    """Only ids this app makes (32 hex digits) are read back from a URL."""
    return isinstance(value, str) and bool(_ID.match(value))


@dataclass
class ShownTurn:
    """One question and what the page shows for it."""

    question: str
    reply: AgentReply | None = None
    error: str | None = None
    policy: dict[str, Any] = field(default_factory=dict)
    providers: dict[str, str] = field(default_factory=dict)
    stored_answer: str | None = None  # restored from the conversation store: the answer's text only

    @property
    def restored_from_store(self) -> bool:
        return self.reply is None and self.stored_answer is not None


class ReplyArchive:
    """The replies this process has shown, per conversation (bounded: the oldest conversation goes first)."""

    def __init__(self, max_conversations: int = 500):
        self.max_conversations = max_conversations
        self._lock = threading.Lock()
        self._turns: OrderedDict[str, list[ShownTurn]] = OrderedDict()

    def put(self, conversation_id: str, turns: list[ShownTurn]) -> None:
        with self._lock:
            self._turns[conversation_id] = list(turns)
            self._turns.move_to_end(conversation_id)
            while len(self._turns) > self.max_conversations:
                self._turns.popitem(last=False)

    def get(self, conversation_id: str) -> list[ShownTurn] | None:
        with self._lock:
            turns = self._turns.get(conversation_id)
            return list(turns) if turns is not None else None

    def clear(self) -> None:
        with self._lock:
            self._turns.clear()


def turns_from_store(store: ConversationStore, conversation_id: str, limit: int = MAX_RESTORED_TURNS) -> list[ShownTurn]:
    """The conversation's turns as the store kept them: each question with its answer's text."""
    turns: list[ShownTurn] = []
    for line in store.recent(conversation_id, limit * 2):
        if line.role == "user":
            turns.append(ShownTurn(line.text))
        elif turns and turns[-1].stored_answer is None:
            turns[-1].stored_answer = line.text
    return [t for t in turns if t.stored_answer is not None]


def restore_turns(
    conversation_id: str, archive: ReplyArchive, store: ConversationStore | None,
) -> tuple[list[ShownTurn], str | None]:
    """(the turns to show, a problem to report or None): the archive first, else the store."""
    archived = archive.get(conversation_id)
    if archived is not None:
        return archived, None
    if store is None:
        return [], None
    try:
        return turns_from_store(store, conversation_id), None
    except Exception as exc:  # the page still opens, with an empty conversation and a note
        return [], f"Không đọc được lịch sử hội thoại ({type(exc).__name__})."
