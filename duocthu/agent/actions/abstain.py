"""Abstain: the routing table declined the turn (out of scope, crisis, emergency, a drug not in the book…).

An abstention about drugs still shows what the book says against this patient, quoted and cited;
in an emergency, only the contraindications, after the call for urgent care.
"""

from __future__ import annotations

from collections.abc import Sequence

from duocthu.agent import messages as msg
from duocthu.agent.actions.base import Request, Services, notices
from duocthu.agent.answer import Answer, spoken
from duocthu.agent.compose import cited_evidence, page, safety_block, safety_hits
from duocthu.retrieval.safety import SafetyScreen
from duocthu.text import fold
from duocthu.types import Closing, Outcome, Prose
from duocthu.understanding.frame import QueryFrame


def abstain(req: Request, ctx: Services) -> Answer:
    """The refusal for the routing table's reason; "Có phải bạn hỏi về …?" for a name not in the book."""
    frame, screen = req.frame, req.screen
    reason = req.route.reason or "out_of_scope"
    text = msg.abstain_message(reason, frame, frame.understanding_error or "", ctx.display)
    offered = tuple(dict.fromkeys(msg.did_you_mean(ctx.display[d]) for d in frame.suggestions.values()
                                  if d in ctx.display)) if reason == "drug_not_in_formulary" else ()
    contraindications = screen.in_contraindications() if reason == "emergency" else ()
    if not contraindications:
        return Answer(outcome=Outcome.ABSTAIN, reason=reason, blocks=spoken(text), quick_replies=offered)
    # No drug is suggested in an emergency, but the book's contraindications of the drug named for this
    # patient are still said (after the call for urgent care, never instead of it).
    shown = SafetyScreen(screen.drugs, screen.facts, contraindications)
    safety = safety_block(shown, ctx.display, only_found=True)
    evidence = cited_evidence(safety_hits(safety, shown))
    return Answer(outcome=Outcome.ABSTAIN, reason=reason, blocks=(Prose(text), *([safety] if safety else [])),
                  evidence=evidence, quick_replies=offered, safety=contraindications, closing=Closing.SOURCES)


def abstain_showing_safety(reason: str, message: str, frame: QueryFrame, screen: SafetyScreen, ctx: Services,
                           route: str, steps: Sequence[str], said: Sequence[str] | None = None) -> Answer:
    """An abstention about drugs that still shows what the book says against this patient, quoted and cited.

    The notices (``said``; by default the frame's) are part of the reply. When the only "fact" is the
    medicine asked about (not in the book), the message already says it and no safety block is shown.
    """
    said = notices(frame, ctx) if said is None else said
    safety = safety_block(screen, ctx.display, frame.drugs)
    about_the_patient = screen.findings or {fold(f) for f in screen.facts} - {fold(u) for u in frame.unknown_drugs}
    evidence = cited_evidence(safety_hits(safety, screen))
    shown = safety is not None and bool(safety.drugs) and bool(about_the_patient)
    return Answer(
        outcome=Outcome.ABSTAIN, reason=reason,
        blocks=page(said, safety, [Prose(message)], evidence, Outcome.ABSTAIN) if shown else spoken(message, said),
        evidence=evidence, route=route, steps=tuple(steps), safety=screen.findings, notices=tuple(said),
        closing=Closing.SOURCES if shown else Closing.NONE,
    )
