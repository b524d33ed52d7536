"""One front door for both agents: input validation, the reply from the answer, and the trace.

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
from duocthu.agent.answer import Answer, abstained
from duocthu.agent.render import render_text
from duocthu.agent.reply import AgentReply, ClaimView, EvidenceView, SafetyView
from duocthu.agent.routing import RouteDecision, rule_by_number
from duocthu.budget import RequestBudget
from duocthu.errors import BackendUnavailableError, IndexMissingError
from duocthu.retrieval.policy import EvidencePolicy
from duocthu.retrieval.safety import SafetyFinding
from duocthu.text import normalize
from duocthu.trace import TraceWriter
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
        raise InvalidTurn("invalid_input", msg.NOT_TEXT)
    text = normalize(turn).strip()
    if not text:
        raise InvalidTurn("empty_input", msg.EMPTY_TURN)
    if len(text) > MAX_TURN_CHARS:
        raise InvalidTurn("input_too_long", msg.too_long(len(text), MAX_TURN_CHARS))
    return text


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
    body: Callable[[str, TurnRecord], Answer], generated: bool = True,
) -> AgentReply:
    """Validate, run ``body``, turn any failure into a clear abstention, assemble and trace the reply."""
    record = TurnRecord(str(conversation_id) if conversation_id else uuid.uuid4().hex, budget, generated=generated)
    try:
        answer = body(validate_turn(turn), record)
    except InvalidTurn as exc:
        answer = abstained(exc.reason, msg.abstain_message(exc.reason) + f" {exc}")
    except (IndexMissingError, BackendUnavailableError) as exc:
        reason = "index_missing" if isinstance(exc, IndexMissingError) else "backend_unavailable"
        answer = abstained(reason, f"{msg.REASON_TEXT[reason]} {exc}", failures=(str(exc),))
    except Exception as exc:  # a turn must end in a clear outcome, never a traceback
        log.exception("turn failed")
        answer = abstained("internal_error", msg.abstain_message("internal_error"),
                           failures=(f"{type(exc).__name__}: {exc}",))
    reply = assemble_reply(record, answer)
    if trace is not None:
        trace.write(reply, (time.perf_counter() - record.started) * 1000)
    return reply


def safety_views(findings: Sequence[SafetyFinding]) -> list[SafetyView]:
    return [
        SafetyView(
            drug_id=f.drug_id, kind=f.kind.value, matched=f.matched, doc_id=f.doc_id, quote=f.quote, applies=f.applies,
            status=f.status, question=f.question, decided_by=list(f.decided_by),
            section_title=f.hit.chunk.section_title, source_refs=list(f.hit.chunk.source_refs),
            requires_visual_check=f.hit.chunk.needs_visual_check,
        )
        for f in findings
    ]


def assemble_reply(record: TurnRecord, answer: Answer) -> AgentReply:
    """The reply of a turn: the answer as text and as blocks, and the record of how it was found."""
    decision = record.decision
    return AgentReply(
        conversation_id=record.conversation_id, outcome=answer.outcome.value, reason=answer.reason,
        rule=decision.rule if decision else None,
        frame=record.frame.model_dump(mode="json") if record.frame else None, answer=render_text(answer),
        blocks=list(answer.blocks),
        quick_replies=list(answer.quick_replies), evidence=[EvidenceView.from_hit(h) for h in answer.evidence],
        omitted_evidence_ids=list(answer.omitted), budget=record.budget.snapshot(),
        reason_text=msg.reason_text(answer.reason, answer.quotes_checked, record.generated),
        rule_condition=rule_by_number(decision.rule).condition if decision else None,
        route=answer.route, steps=list(answer.steps), failures=list(answer.failures), memory=record.memory,
        safety=safety_views(answer.safety), claims=claim_views(answer), notices=list(answer.notices),
        quotes_checked=answer.quotes_checked, generated=record.generated,
    )


def claim_views(answer: Answer) -> list[ClaimView]:
    """The quoted sentences of the answer, with what they are cited from."""
    return [ClaimView(text=q.text, evidence_ids=list(q.doc_ids), drug_id=q.drug_id, heading=q.heading, group=group)
            for q, group in answer.quotes]
