"""Clarify: the routing table needs one more fact (who, which drug, which section…) — ask for it.

A contraindication or an interaction the book states for this patient does not wait for the
answer to the question: it is quoted above it.
"""

from __future__ import annotations

from duocthu.agent import messages as msg
from duocthu.agent.actions.base import Request, Services, notices
from duocthu.agent.answer import Answer, spoken
from duocthu.agent.compose import cited_evidence, page, safety_block, safety_hits
from duocthu.retrieval.safety import FindingKind, SafetyScreen
from duocthu.types import Closing, Outcome, Prose

WARNING_KINDS = frozenset({FindingKind.CONTRAINDICATION, FindingKind.AGE_LIMIT, FindingKind.INTERACTION})


def clarify(req: Request, ctx: Services) -> Answer:
    """The question for the routing table's reason, with its quick replies, after any warning for the patient."""
    frame, screen = req.frame, req.screen
    drug = ctx.display.get(frame.drugs[0]) if frame.drugs else None
    if req.route.reason == "contraindication_undetermined":
        question, replies = msg.undetermined_question([f.question for f in screen.undetermined_for()], drug)
    else:
        question, replies = msg.clarify_question(req.route.reason or "", frame, drug, ctx.display)
    said = notices(frame, ctx)
    conditions = set(frame.patient.conditions)
    # A caution about a condition the patient stated is what the book says against them, too.
    warnings = tuple(f for f in screen.findings if f.kind in WARNING_KINDS
                     or (f.kind is FindingKind.CAUTION and f.matched in conditions))
    reason = req.route.reason or "needs_more_info"
    if not warnings:
        return Answer(outcome=Outcome.CLARIFY, reason=reason, blocks=spoken(question, said), quick_replies=replies,
                      notices=tuple(said))
    shown = SafetyScreen(screen.drugs, screen.facts, warnings)
    safety = safety_block(shown, ctx.display, only_found=True)
    evidence = cited_evidence(safety_hits(safety, shown))
    return Answer(outcome=Outcome.CLARIFY, reason=reason,
                  blocks=page(said, safety, [Prose(question)], evidence, Outcome.ANSWERABLE), evidence=evidence,
                  quick_replies=replies, safety=warnings, notices=tuple(said), closing=Closing.SOURCES)
