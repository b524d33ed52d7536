"""One front door for both agents: input validation, the turn result, and reply/trace assembly.

:class:`Agent` is what the CLI, the app and the evaluation call. The RAG agent and the
retrieval-only agent both run their turn through :func:`run_turn`, so a bad input gets the same
clear answer, an unexpected error the same honest abstention, and every reply the same shape.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from duocthu.agent import messages as msg
from duocthu.agent.reply import AgentReply, ClaimView, EvidenceView, SafetyView
from duocthu.agent.routing import RouteDecision, rule_by_number
from duocthu.budget import RequestBudget
from duocthu.errors import BackendUnavailableError, IndexMissingError
from duocthu.retrieval.policy import EvidencePolicy
from duocthu.retrieval.safety import SafetyFinding
from duocthu.text import normalize
from duocthu.trace import TraceWriter
from duocthu.types import Hit
from duocthu.understanding.frame import QueryFrame

log = logging.getLogger(__name__)

MAX_TURN_CHARS = 2000


class Agent(Protocol):
    def handle(
        self, turn: object, conversation_id: str | None = None, policy: EvidencePolicy | None = None
    ) -> AgentReply:
        """Answer one turn of a conversation; never raises — a failure is an honest abstention."""
        ...


class InvalidTurn(Exception):
    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


def validate_turn(turn: object) -> str:
    """The turn as normalised text, or :class:`InvalidTurn` with a reason and a Vietnamese message."""
    if not isinstance(turn, str):
        raise InvalidTurn("invalid_input", "Câu hỏi phải là văn bản.")
    text = normalize(turn).strip()
    if not text:
        raise InvalidTurn("empty_input", "Hãy nhập câu hỏi về một thuốc.")
    if len(text) > MAX_TURN_CHARS:
        raise InvalidTurn(
            "input_too_long", f"Câu hỏi dài {len(text):,} ký tự; giới hạn là {MAX_TURN_CHARS:,}. Hãy rút gọn."
        )
    return text


@dataclass
class TurnResult:
    outcome: str
    reason: str
    answer: str
    hits: tuple[Hit, ...] = ()
    omitted: tuple[str, ...] = ()
    quick_replies: tuple[str, ...] = ()
    route: str | None = None
    steps: tuple[str, ...] = ()
    failures: tuple[str, ...] = ()
    safety: tuple[SafetyFinding, ...] = ()
    claims: tuple[ClaimView, ...] = ()
    notices: tuple[str, ...] = ()
    quotes_checked: bool = False


@dataclass
class TurnRecord:
    """What one turn produced, gathered while it runs (so a failure still reports what was known)."""

    conversation_id: str
    budget: RequestBudget
    frame: QueryFrame | None = None
    decision: RouteDecision | None = None
    memory: str = "ok"
    generated: bool = True
    started: float = field(default_factory=time.perf_counter)


def run_turn(
    turn: object, conversation_id: str | None, budget: RequestBudget, trace: TraceWriter | None,
    body: Callable[[str, TurnRecord], TurnResult], generated: bool = True,
) -> AgentReply:
    """Validate, run ``body``, turn any failure into a clear abstention, assemble and trace the reply."""
    record = TurnRecord(str(conversation_id) if conversation_id else uuid.uuid4().hex, budget, generated=generated)
    try:
        result = body(validate_turn(turn), record)
    except InvalidTurn as exc:
        result = TurnResult("abstain", exc.reason, msg.abstain_message(exc.reason) + f" {exc}")
    except (IndexMissingError, BackendUnavailableError) as exc:
        reason = "index_missing" if isinstance(exc, IndexMissingError) else "backend_unavailable"
        result = TurnResult("abstain", reason, f"{msg.REASON_TEXT[reason]} {exc}", failures=(str(exc),))
    except Exception as exc:  # a turn must end in a clear outcome, never a traceback
        log.exception("turn failed")
        result = TurnResult("abstain", "internal_error", msg.abstain_message("internal_error"),
                            failures=(f"{type(exc).__name__}: {exc}",))
    reply = assemble_reply(record, result)
    if trace is not None:
        trace.write(reply, (time.perf_counter() - record.started) * 1000)
    return reply


def safety_views(findings: Sequence[SafetyFinding]) -> list[SafetyView]:
    return [
        SafetyView(
            drug_id=f.drug_id, kind=f.kind.value, matched=f.matched, doc_id=f.doc_id, quote=f.quote, applies=f.applies,
            section_title=f.hit.chunk.section_title, source_refs=list(f.hit.chunk.source_refs),
            requires_visual_check=f.hit.chunk.needs_visual_check,
        )
        for f in findings
    ]


def assemble_reply(record: TurnRecord, result: TurnResult) -> AgentReply:
    decision = record.decision
    return AgentReply(
        conversation_id=record.conversation_id, outcome=result.outcome, reason=result.reason,
        rule=decision.rule if decision else None,
        frame=record.frame.model_dump(mode="json") if record.frame else None, answer=result.answer,
        quick_replies=list(result.quick_replies), evidence=[EvidenceView.from_hit(h) for h in result.hits],
        omitted_evidence_ids=list(result.omitted), budget=record.budget.snapshot(),
        reason_text=msg.reason_text(result.reason, result.quotes_checked, record.generated),
        rule_condition=rule_by_number(decision.rule).condition if decision else None,
        route=result.route, steps=list(result.steps), failures=list(result.failures), memory=record.memory,
        safety=safety_views(result.safety), claims=list(result.claims), notices=list(result.notices),
        quotes_checked=result.quotes_checked, generated=record.generated,
    )
