"""The runtime the app serves: one Qdrant client and one embedder per process, runtimes per provider pair."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace

from qdrant_client import QdrantClient

from duocthu.agent.reply import AgentReply
from duocthu.config import Settings
from duocthu.indexing import IndexReport, ProgressFactory
from duocthu.providers.embedding import Embedder, get_embedder
from duocthu.qdrant_store import QdrantStore, open_client
from duocthu.retrieval.policy import EvidencePolicy
from duocthu.runtime import Runtime, build_runtime, index_formulary


@dataclass
class Engine:
    """One Qdrant client and one embedder per process; runtimes are built once the index exists.

    Sessions share the runtimes and run concurrently: a session's policy travels with its request
    (``agent.handle(..., policy=…)``) and is never written onto the shared runtime. The lock only
    guards building a runtime or the index.
    """

    settings: Settings
    client: QdrantClient
    embedder: Embedder
    lock: threading.RLock = field(default_factory=threading.RLock)
    base_policy: EvidencePolicy | None = None
    _runtimes: dict[tuple[str, str], Runtime] = field(default_factory=dict)

    def index_ready(self) -> bool:
        return QdrantStore(self.client, self.settings.collection).exists()

    def build_index(self, progress: ProgressFactory | None = None) -> IndexReport:
        with self.lock:
            return index_formulary(self.settings, self.client, self.embedder, progress=progress)

    def runtime(self, answer_provider: str | None = None, rerank_provider: str | None = None) -> Runtime:
        """The shared runtime for these providers (raises :class:`IndexMissingError` without an index)."""
        key = (answer_provider or self.settings.answer_provider, rerank_provider or self.settings.rerank_provider)
        with self.lock:
            if key not in self._runtimes:
                settings = replace(self.settings, answer_provider=key[0], rerank_provider=key[1])
                settings.validate()
                runtime = build_runtime(settings, client=self.client, embedder=self.embedder)
                if self.base_policy is None:
                    self.base_policy = runtime.retrieval.policy
                self._runtimes[key] = runtime
            return self._runtimes[key]

    def handle(
        self, text: str, conversation_id: str, policy: EvidencePolicy | None = None,
        answer_provider: str | None = None, rerank_provider: str | None = None,
    ) -> AgentReply:
        """One turn under this session's policy and providers."""
        runtime = self.runtime(answer_provider, rerank_provider)
        return runtime.agent.handle(text, conversation_id, policy)

    def drug_names(self) -> dict[str, str]:
        """drug_id → the book's display name (for source cards)."""
        return {d: e.display_name for d, e in self.runtime().resolver.catalogue.items()}

    def close(self) -> None:
        for runtime in self._runtimes.values():
            runtime.conversations.close()
        self._runtimes.clear()
        self.client.close()


def open_engine(settings: Settings | None = None, embedder: Embedder | None = None) -> Engine:
    """Open the configured index location (``DUOCTHU_HOME``, ``QDRANT_URL``) without building anything."""
    settings = settings or Settings.from_env()
    return Engine(settings, open_client(settings), embedder or get_embedder(settings))


def load_runtime(settings: Settings | None = None) -> Runtime:
    """The runtime for ``settings`` (default: the environment), building the index if it is missing."""
    engine = open_engine(settings)
    if not engine.index_ready():
        engine.build_index()
    return engine.runtime()


PROGRESS_LABELS = {"embed": "Tính embedding cho các đoạn", "upsert": "Ghi các đoạn vào Qdrant"}
