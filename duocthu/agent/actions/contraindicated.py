"""Contraindicated: the book contraindicates the drug asked for this patient — that is the answer.

The contraindication is quoted first, no dose is given, and the drug's other sections are one
click away.
"""

from __future__ import annotations

from collections.abc import Sequence

from duocthu.agent import messages as msg
from duocthu.agent.actions.base import Request, Services, notices
from duocthu.agent.answer import Answer
from duocthu.agent.compose import cited_evidence, page, safety_block, safety_hits
from duocthu.retrieval.decision import decide
from duocthu.retrieval.safety import SafetyScreen
from duocthu.types import Closing, Outcome, Prose
from duocthu.understanding.frame import QueryFrame


def contraindicated(req: Request, ctx: Services) -> Answer:
    """The routing table found a contraindication for this patient before anything was retrieved."""
    return contraindication_answer(req.frame, req.screen, ctx)


def contraindication_answer(frame: QueryFrame, screen: SafetyScreen, ctx: Services, asked: Sequence[str] = (),
                            also: Sequence[str] = ()) -> Answer:
    """The contraindication as the answer. ``asked`` are the drugs it is about when others of the frame are
    only taken (default: all of them); ``also`` is said after it."""
    safety = safety_block(screen, ctx.display, frame.drugs)
    names = ", ".join(ctx.name(d) for d in (asked or frame.drugs))
    strictly = all(f.hit.chunk.section_key == "chong_chi_dinh" for f in screen.contraindicated())
    body = [Prose(msg.contraindicated_answer(names, strictly, frame.asks_dose)), *(Prose(a) for a in also)]
    outcome = Outcome.VERIFY_PDF if decide(list(screen.hits)).outcome is Outcome.VERIFY_PDF else Outcome.ANSWERABLE
    evidence = cited_evidence(safety_hits(safety, screen))
    # The reply's ``notices`` field stays empty here, as it always has; the notices are in the blocks.
    return Answer(
        outcome=outcome, reason="contraindicated_for_patient",
        blocks=page(notices(frame, ctx), safety, body, evidence, outcome), evidence=evidence,
        quick_replies=msg.other_sections(names, msg.CONTRAINDICATED_NEXT), route="safety", safety=screen.findings,
        steps=(f"safety screen → {len(screen.contraindicated())} contraindication(s) apply",), quotes_checked=True,
        closing=Closing.SOURCES,
    )
