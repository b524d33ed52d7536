"""The Qdrant adapter: every read the retrieval routes make, and the collection schema.

One code path for the embedded engine (``QdrantClient(path=...)``, the offline default) and a
Qdrant server or cluster (``QDRANT_URL``). The index is served through an alias; builds write a
new collection and move the alias only when it is complete (see :mod:`duocthu.indexing`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from qdrant_client import QdrantClient
from qdrant_client import models as qm

from duocthu.config import Settings
from duocthu.errors import BackendUnavailableError, IndexLockedError, IndexMissingError
from duocthu.lexical import bm25_query_vector, distinct_match_count
from duocthu.sections import SECTION_ORDER
from duocthu.text import find_phrase, find_phrase_in_book_words, folded_words, words
from duocthu.types import Chunk, ChunkKind, DrugEntry, Hit, ScoreKind

DENSE = "dense"
SPARSE_BM25 = "bm25"
SCROLL_PAGE_SIZE = 256
LOOKUP_PAGE_SIZE = 16_384
PAYLOAD_INDEXES = ("drug_id", "section_key", "chunk_kind", "atc_levels", "doc_id")
_OWNER_FILE = "duocthu-owner.json"


def _match(key: str, value: Any) -> qm.FieldCondition:
    return qm.FieldCondition(key=key, match=qm.MatchValue(value=value))


def _match_any(key: str, values: Iterable[str]) -> qm.FieldCondition:
    return qm.FieldCondition(key=key, match=qm.MatchAny(any=list(values)))


def build_filter(
    drug_id: str | None = None,
    section_keys: Iterable[str] | None = None,
    chunk_kind: ChunkKind | None = None,
    atc: str | None = None,
    exclude_sections: Iterable[str] | None = None,
) -> qm.Filter | None:
    must: list[qm.Condition] = []
    if drug_id is not None:
        must.append(_match("drug_id", drug_id))
    if section_keys is not None:
        must.append(_match_any("section_key", section_keys))
    if chunk_kind is not None:
        must.append(_match("chunk_kind", chunk_kind.value))
    if atc:
        must.append(_match("atc_levels", atc.strip().upper()))
    must_not: list[qm.Condition] = []
    if exclude_sections:
        must_not.append(_match_any("section_key", exclude_sections))
    if not must and not must_not:
        return None
    return qm.Filter(must=must or None, must_not=must_not or None)


def open_client(settings: Settings) -> QdrantClient:
    """A client for the configured Qdrant; clear errors for a held lock or a dead server."""
    if settings.qdrant_url:
        try:
            client = QdrantClient(
                url=settings.qdrant_url, api_key=settings.qdrant_api_key,
                timeout=max(1, int(settings.qdrant_timeout_s)), check_compatibility=False,
            )
            client.get_collections()
        except Exception as exc:
            raise BackendUnavailableError(
                f"Qdrant server at {settings.qdrant_url} is unreachable or too slow ({type(exc).__name__}). "
                "Check QDRANT_URL, or unset it to use the embedded index."
            ) from exc
        return client
    path = settings.qdrant_path
    path.mkdir(parents=True, exist_ok=True)
    try:
        client = QdrantClient(path=str(path))
    except RuntimeError as exc:
        if "already accessed" not in str(exc):
            raise
        raise IndexLockedError(_locked_message(path)) from exc
    (path / _OWNER_FILE).write_text(
        json.dumps({"pid": os.getpid(), "command": _command_line()}), encoding="utf-8"
    )
    return client


def _command_line() -> str:
    try:
        return Path("/proc/self/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return "unknown"


def _locked_message(path: Path) -> str:
    owner = "another process"
    try:
        info = json.loads((path / _OWNER_FILE).read_text(encoding="utf-8"))
        owner = f"process {info['pid']} ({info['command']})"
    except (OSError, ValueError, KeyError):
        pass
    return (
        f"the embedded Qdrant index at {path} is in use by {owner}. Local mode admits one "
        "process per folder: stop that process, or give this one its own DUOCTHU_HOME, or run a "
        "Qdrant server and set QDRANT_URL for both."
    )


class PayloadLookup:
    """Exact payload lookups without a scan: every chunk of the served collection, by key.

    The embedded engine filters by scanning every point (~85 ms per filtered scroll at 10k
    points), so the exact routes read this in-process map instead: built once by one full
    scroll, keyed by the collection the alias points to, and rebuilt when a new index is
    published. Results are identical to the filtered scroll (tested); a Qdrant server keeps
    using its payload indexes.
    """

    def __init__(self, chunks: Iterable[Chunk], collection: str):
        self.collection = collection
        self.by_drug_section: dict[tuple[str, str], list[Chunk]] = {}
        self.by_section: dict[str, list[Chunk]] = {}
        self.by_drug: dict[str, list[Chunk]] = {}
        for chunk in chunks:
            self.by_drug_section.setdefault((chunk.drug_id, chunk.section_key), []).append(chunk)
            self.by_section.setdefault(chunk.section_key, []).append(chunk)
            self.by_drug.setdefault(chunk.drug_id, []).append(chunk)

    def select(
        self, drug_id: str | None, section_keys: Iterable[str] | None, chunk_kind: ChunkKind | None,
        exclude_sections: Iterable[str] | None = None,
    ) -> list[Chunk]:
        if drug_id is not None and section_keys is not None:
            chunks = [c for key in section_keys for c in self.by_drug_section.get((drug_id, key), [])]
        elif drug_id is not None:
            chunks = list(self.by_drug.get(drug_id, []))
        elif section_keys is not None:
            chunks = [c for key in section_keys for c in self.by_section.get(key, [])]
        else:
            chunks = [c for group in self.by_drug.values() for c in group]
        excluded = set(exclude_sections or ())
        return [
            c for c in chunks
            if (chunk_kind is None or c.chunk_kind is chunk_kind) and c.section_key not in excluded
        ]


_TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (ConnectionError, TimeoutError, OSError)
try:  # qdrant-client's and httpx's own transport errors, when present
    import httpx
    from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

    _TRANSPORT_ERRORS += (httpx.HTTPError, ResponseHandlingException, UnexpectedResponse)
except ImportError:  # pragma: no cover
    pass


class _GuardedClient:
    """Forwards to a QdrantClient; transport failures become :class:`BackendUnavailableError`."""

    def __init__(self, client: QdrantClient):
        self._client = client

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._client, name)
        if not callable(attribute):
            return attribute

        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return attribute(*args, **kwargs)
            except _TRANSPORT_ERRORS as exc:
                raise BackendUnavailableError(
                    f"Qdrant did not answer {name}: {type(exc).__name__}: {str(exc)[:200]}"
                ) from exc

        return call


class QdrantStore:
    """Reads over the served index (an alias). Every method returns :class:`Hit` lists.

    ``exact_lookup=True`` answers the exact (payload-filter) routes from a :class:`PayloadLookup`
    instead of a scanning scroll — the embedded default; the spec's scroll stays the path for a
    Qdrant server and for ``exact_lookup=False``.
    """

    def __init__(
        self, client: QdrantClient, collection: str, page_size: int = SCROLL_PAGE_SIZE, exact_lookup: bool = False
    ):
        self.client: Any = _GuardedClient(client)
        self.raw_client = client
        self.collection = collection
        self.page_size = page_size
        self.exact_lookup = exact_lookup
        self._lookup: PayloadLookup | None = None
        self._indication_pool: list[tuple[Chunk, list[str], list[str]]] | None = None
        self._indication_pool_collection: str | None = None

    def served_collection(self) -> str:
        for description in self.client.get_aliases().aliases:
            if description.alias_name == self.collection:
                return description.collection_name
        return self.collection

    def _payload_lookup(self) -> PayloadLookup:
        served = self.served_collection()
        if self._lookup is None or self._lookup.collection != served:
            # Local mode re-sorts every point per page, so one big-paged scroll fills the map in
            # O(n) pages of work instead of O(n/256) (bench: 30k chunks 6.6 s → 2.3 s).
            self._lookup = PayloadLookup(self._scroll(None, page_size=LOOKUP_PAGE_SIZE), served)
        return self._lookup

    def refresh(self) -> None:
        """Forget cached payloads (after a rebuild in this process)."""
        self._lookup = None
        self._indication_pool = None

    def chunks_where(
        self, drug_id: str | None = None, section_keys: Iterable[str] | None = None,
        chunk_kind: ChunkKind | None = None, exclude_sections: Iterable[str] | None = None,
    ) -> list[Chunk]:
        if self.exact_lookup:
            return self._payload_lookup().select(drug_id, section_keys, chunk_kind, exclude_sections)
        return list(self._scroll(build_filter(drug_id, section_keys, chunk_kind, exclude_sections=exclude_sections)))

    # -- health --------------------------------------------------------------------------------
    def ensure_ready(self) -> None:
        if not self.exists():
            raise IndexMissingError(
                f"no index named {self.collection!r} was found. Build it with: duocthu index "
                "(or `make index`)."
            )

    def exists(self) -> bool:
        try:
            return bool(self.client.collection_exists(self.collection))
        except Exception as exc:
            raise BackendUnavailableError(f"Qdrant did not answer: {type(exc).__name__}: {exc}") from exc

    def count(self) -> int:
        return int(self.client.count(self.collection, exact=True).count)

    # -- scrolling -----------------------------------------------------------------------------
    def scroll_chunks(self, query_filter: qm.Filter | None) -> Iterator[Chunk]:
        return self._scroll(query_filter)

    def _scroll(self, query_filter: qm.Filter | None, page_size: int | None = None) -> Iterator[Chunk]:
        """Every chunk matching the filter, following ``next_page_offset`` to the end."""
        offset: Any = None
        while True:
            points, offset = self.client.scroll(
                self.collection, scroll_filter=query_filter, limit=page_size or self.page_size,
                offset=offset, with_payload=True, with_vectors=False,
            )
            for point in points:
                yield Chunk.from_payload(point.payload or {})
            if offset is None:
                return

    def drug_catalogue(self) -> list[DrugEntry]:
        entries: dict[str, DrugEntry] = {}
        for chunk in self.chunks_where(section_keys=["ten_chung_quoc_te"]):
            entries.setdefault(
                chunk.drug_id,
                DrugEntry(chunk.drug_id, chunk.display_name, chunk.aliases, chunk.atc_codes),
            )
        return sorted(entries.values(), key=lambda e: e.drug_id)

    # -- exact routes --------------------------------------------------------------------------
    def find_by_section(self, drug_id: str, section_key: str) -> list[Hit]:
        """The whole section, in part order. A scroll, not a top-k: no evidence limit.

        Score 1.0 is by construction (an exact payload match), not a similarity.
        """
        chunks = sorted(self.chunks_where(drug_id, [section_key]), key=lambda c: c.part_index)
        return [Hit(c, 1.0, ScoreKind.EXACT, "section") for c in chunks]

    def find_by_drug(self, drug_id: str) -> list[Hit]:
        """Every prose chunk of the drug in book order, ``【display name】`` on each section's start."""
        chunks = sorted(
            self.chunks_where(drug_id, chunk_kind=ChunkKind.PROSE),
            key=lambda c: (SECTION_ORDER.index(c.section_key), c.part_index),
        )
        hits: list[Hit] = []
        seen_sections: set[str] = set()
        for chunk in chunks:
            display = None
            if chunk.section_key not in seen_sections:
                seen_sections.add(chunk.section_key)
                display = f"【{chunk.display_name}】 {chunk.section_title}\n{chunk.text}"
            hits.append(Hit(chunk, 1.0, ScoreKind.EXACT, "drug", display_text=display))
        return hits

    def indication_pool(self) -> list[Chunk]:
        """Every ``chi_dinh`` prose chunk (read once per served index)."""
        return [chunk for chunk, _, _ in self._tokenised_indication_pool()]

    def _tokenised_indication_pool(self) -> list[tuple[Chunk, list[str], list[str]]]:
        # Folded tokens are computed once per served index, not once per reverse-lookup query.
        served = self.served_collection()
        if self._indication_pool is None or self._indication_pool_collection != served:
            chunks = self.chunks_where(section_keys=["chi_dinh"], chunk_kind=ChunkKind.PROSE)
            self._indication_pool = [(c, folded_words(c.text_folded), words(c.text)) for c in chunks]
            self._indication_pool_collection = served
        return self._indication_pool

    def find_by_indication(self, indication: str, limit: int | None = None, typed_with_accents: bool = False) -> list[Hit]:
        """``chi_dinh`` chunks naming the indication as a contiguous, word-anchored phrase.

        Not a substring and not a token subset. Score ``1 + 1/(1+position) + 1/(1 + words/40)``
        rewards an early, concise mention. ``typed_with_accents``: the user typed the question with its
        diacritics, so a word typed without any ("ho") means exactly that word, not "hỗ" or "hộ".
        """
        phrase = folded_words(indication)
        typed = words(indication)
        if not phrase:
            return []
        hits: list[Hit] = []
        for chunk, tokens, book_words in self._tokenised_indication_pool():
            position = find_phrase(tokens, phrase)
            if position < 0:
                continue
            if len(book_words) == len(tokens) and len(typed) == len(phrase):
                # Accents count where the user typed them: "bệnh than" (anthrax) is not "bệnh thận".
                position = find_phrase_in_book_words(book_words, typed, typed_with_accents)
                if position < 0:
                    continue
            score = 1 + 1 / (1 + position) + 1 / (1 + len(tokens) / 40)
            hits.append(Hit(chunk, score, ScoreKind.PHRASE, "indication_keyword"))
        hits.sort(key=lambda h: (-h.score, h.doc_id))
        return hits[:limit] if limit else hits

    # -- similarity routes ---------------------------------------------------------------------
    def search(
        self,
        vector: np.ndarray,
        limit: int = 5,
        drug_id: str | None = None,
        section_keys: Iterable[str] | None = None,
        chunk_kind: ChunkKind | None = None,
        atc: str | None = None,
        min_score: float | None = None,
        route: str = "dense",
    ) -> list[Hit]:
        response = self.client.query_points(
            self.collection, query=np.asarray(vector, dtype=np.float32).tolist(), using=DENSE,
            query_filter=build_filter(drug_id, section_keys, chunk_kind, atc), limit=limit,
            with_payload=True, score_threshold=min_score,
        )
        return [
            Hit(Chunk.from_payload(p.payload or {}), float(p.score), ScoreKind.SIMILARITY, route)
            for p in response.points
        ]

    def search_indication(self, vector: np.ndarray, limit: int, min_score: float) -> list[Hit]:
        """Dense fallback for reverse lookup: chi_dinh prose only; weak hits are dropped.

        Dense search always returns its nearest neighbours, so a made-up condition would
        otherwise get "matches"; if the best hit is under ``min_score`` nothing is returned.
        """
        hits = self.search(
            vector, limit=limit, section_keys=["chi_dinh"], chunk_kind=ChunkKind.PROSE,
            route="indication_dense",
        )
        if not hits or hits[0].score < min_score:
            return []
        return [h for h in hits if h.score >= min_score]

    def search_bm25(
        self,
        query: str,
        limit: int = 5,
        drug_id: str | None = None,
        section_keys: Iterable[str] | None = None,
        chunk_kind: ChunkKind | None = None,
        atc: str | None = None,
    ) -> list[Hit]:
        indices, values = bm25_query_vector(query)
        if not indices:
            return []
        response = self.client.query_points(
            self.collection, query=qm.SparseVector(indices=indices, values=values),
            using=SPARSE_BM25, query_filter=build_filter(drug_id, section_keys, chunk_kind, atc),
            limit=limit, with_payload=True,
        )
        return [
            Hit(Chunk.from_payload(p.payload or {}), float(p.score), ScoreKind.BM25, "bm25")
            for p in response.points
        ]

    def search_hybrid(
        self,
        query: str,
        vector: np.ndarray,
        limit: int = 5,
        drug_id: str | None = None,
        section_keys: Iterable[str] | None = None,
        chunk_kind: ChunkKind | None = None,
        atc: str | None = None,
        prefetch_limit: int = 20,
    ) -> list[Hit]:
        """Dense and BM25 candidates fused by reciprocal rank (Qdrant's RRF)."""
        query_filter = build_filter(drug_id, section_keys, chunk_kind, atc)
        prefetch = [
            qm.Prefetch(query=np.asarray(vector, dtype=np.float32).tolist(), using=DENSE,
                        filter=query_filter, limit=prefetch_limit)
        ]
        indices, values = bm25_query_vector(query)
        if indices:
            prefetch.append(
                qm.Prefetch(query=qm.SparseVector(indices=indices, values=values), using=SPARSE_BM25,
                            filter=query_filter, limit=prefetch_limit)
            )
        response = self.client.query_points(
            self.collection, prefetch=prefetch, query=qm.FusionQuery(fusion=qm.Fusion.RRF),
            limit=limit, with_payload=True,
        )
        return [
            Hit(Chunk.from_payload(p.payload or {}), float(p.score), ScoreKind.RRF, "hybrid")
            for p in response.points
        ]

    def search_lexical(
        self,
        query_tokens: frozenset[str],
        drug_id: str,
        section_keys: Sequence[str] | None = None,
        exclude_sections: Iterable[str] | None = None,
        min_score: float = 0.0,
    ) -> list[Hit]:
        """The spec's lexical search: score = count of distinct matched query tokens.

        A transparent stand-in for BM25 scoped to one drug and a set of sections.
        """
        hits = []
        for chunk in self.chunks_where(drug_id, section_keys, exclude_sections=exclude_sections):
            score = float(distinct_match_count(query_tokens, chunk.text_folded))
            if score > 0 and score >= min_score:
                hits.append(Hit(chunk, score, ScoreKind.LEXICAL_COUNT, "lexical"))
        hits.sort(key=lambda h: (-h.score, SECTION_ORDER.index(h.chunk.section_key), h.chunk.part_index))
        return hits
