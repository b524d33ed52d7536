"""The LLM understander: one JSON call that fills the same frame schema, validated, fail-closed.

Works through any :class:`~duocthu.providers.llm.JsonLlm` (Bedrock Converse, an OpenAI-compatible
server, or the scripted fake in tests). The model fills the frame's fields; the shared entity
layer maps its drug names to the book, and the shared cue and carry-over tables apply on top, so
the safety overrides never depend on the model.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pydantic import ValidationError

from duocthu.budget import RequestBudget
from duocthu.errors import AnswerGenerationUnavailable
from duocthu.providers.llm import JsonLlm
from duocthu.sections import SECTION_PHRASES
from duocthu.text import fold, normalize
from duocthu.understanding.frame import QueryFrame, TurnType
from duocthu.understanding.learned import EntityReader, base_frame, finish_frame

_LLM_SYSTEM = """Bạn phân tích câu hỏi về thuốc (tiếng Việt) thành JSON theo đúng lược đồ sau, không thêm khóa nào khác.
turn_type ∈ {turn_types}. section_key ∈ {sections} hoặc null.
population ∈ adult|pediatric|elderly|null. condition_relation ∈ indication|contraindication|caution|causes|null.
drugs: danh sách tên thuốc như người dùng viết. Chỉ trả JSON."""


_MODEL_FIELDS = (
    "section_key", "attribute", "wants_section_overview", "population", "age_text", "age_years", "weight_kg",
    "route", "condition", "indication", "condition_relation", "condition_ambiguous", "needs_clarify", "clarify_reason",
)


class LlmQueryUnderstander:
    """One JSON call through a :class:`JsonLlm`, validated against :class:`QueryFrame`.

    Fail-closed: any provider error or invalid JSON yields a frame that routes to an abstention
    with a system reason (row 4), never a guess. The model's drug names go through the book's
    resolver (a name it invents is reported as not in the book), and the shared cue and carry-over
    tables apply after it, as for every understander.
    """

    name = "llm"

    def __init__(self, llm: JsonLlm, entities: EntityReader):
        self.llm = llm
        self.entities = entities

    def understand(
        self, turn: str, history: Sequence[str], budget: RequestBudget, prior_frame: QueryFrame | None
    ) -> QueryFrame:
        text = normalize(turn).strip()
        system = _LLM_SYSTEM.format(
            turn_types="|".join(t.value for t in TurnType), sections="|".join(SECTION_PHRASES),
        )
        user = json.dumps(
            {"history": list(history)[-12:], "turn": text,
             "previous_frame": prior_frame.model_dump(mode="json") if prior_frame else None},
            ensure_ascii=False,
        )
        try:
            raw = self.llm.complete_json(system, user, budget, "understanding")
            names = [str(n) for n in raw.get("drugs") or []]
            model = QueryFrame.model_validate({k: v for k, v in raw.items() if k not in ("drugs", "unknown_drugs")})
        except (AnswerGenerationUnavailable, ValidationError, TypeError, AttributeError) as exc:
            return QueryFrame(
                turn_type=TurnType.DRUG_ATTRIBUTE, needs_clarify=True, clarify_reason="understanding_failed",
                understanding_error=f"{type(exc).__name__}: {str(exc)[:300]}",
            )
        ev = self.entities.read(text)
        frame = base_frame(ev, model.turn_type, model.section_key)
        drugs = list(frame.drugs)
        unknown = list(frame.unknown_drugs)
        for name in names:
            found = self.entities.resolver.resolve(name)
            if found.mentions:
                drugs += [m.drug_id for m in found.mentions if m.drug_id not in drugs]
            elif fold(name) not in {fold(u) for u in unknown}:
                unknown.append(name)
        updates = {field: getattr(model, field) for field in _MODEL_FIELDS
                   if getattr(model, field) not in (None, False) and getattr(frame, field) in (None, False)}
        frame = frame.model_copy(update={**updates, "drugs": drugs, "unknown_drugs": unknown})
        return finish_frame(ev, frame, prior_frame, self.entities)
