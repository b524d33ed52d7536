"""Interaction: whether drugs of the book go together, from each one's "Tương tác thuốc" naming the others."""

from __future__ import annotations

from collections.abc import Sequence

from duocthu.agent import messages as msg
from duocthu.agent.actions.abstain import abstain_showing_safety
from duocthu.agent.actions.base import Request, Services, notices
from duocthu.agent.actions.contraindicated import contraindication_answer
from duocthu.agent.actions.quoted import Found, number_not_stated, quoted_answer, synthesize_query
from duocthu.agent.answer import Answer, abstained
from duocthu.agent.answering import GenerationRequest
from duocthu.retrieval.decision import decide
from duocthu.text import find_phrase, folded_words
from duocthu.types import Hit, Outcome

INTERACTION_SECTION = "tuong_tac_thuoc"


def interaction(req: Request, ctx: Services) -> Answer:
    """The parts of each drug's interaction section that name another drug of the question, quoted."""
    frame, screen = req.frame, req.screen
    query = synthesize_query(frame)
    pool, steps = _parts_naming_the_others(req, ctx, query)
    names = [ctx.name(d) for d in frame.drugs]
    if not pool:
        # "Chân tôi còn phù, furosemid có dùng được không?" from a patient allergic to sulfonamides who takes
        # hydroclorothiazid: the book says nothing of the pair, but forbids the drug asked for this patient.
        asked = [d for d in frame.drugs if d not in frame.patient.current_medications]
        if asked and all(screen.contraindicated(d) for d in asked):
            return contraindication_answer(frame, screen, ctx, asked, also=[msg.no_interaction_message(names)])
        return abstain_showing_safety("no_interaction_evidence", msg.no_interaction_message(names), frame, screen,
                                      ctx, "interaction", steps)
    decision = decide([*pool, *screen.hits])
    if decision.outcome is Outcome.ABSTAIN:
        return abstained(decision.reason, msg.abstain_message(decision.reason), route="interaction", steps=steps)
    reason = "contraindicated_for_patient" if screen.contraindicated() else decision.reason
    said = notices(frame, ctx)
    not_stated = number_not_stated(frame.asks_number, pool, frame.wording)
    if not_stated and decision.outcome is not Outcome.VERIFY_PDF:
        reason = "number_not_stated"
        said.append(not_stated)
    request = GenerationRequest(query, tuple(pool), focus_words=tuple(names), asked_unit=frame.asks_number)
    guarded = ctx.answers.answer_from_result(request, req.budget, prechecked=True)
    found = Found(tuple(pool), decision.outcome, reason, "interaction", tuple(steps))
    return quoted_answer(req, ctx, found, guarded, said)


def _parts_naming_the_others(req: Request, ctx: Services, query: str) -> tuple[list[Hit], list[str]]:
    """Each drug's interaction parts that name another drug of the question (or its class)."""
    drugs = req.frame.drugs
    pool: list[Hit] = []
    steps: list[str] = []
    for drug_id in drugs:
        others = [name for other in drugs if other != drug_id for name in ctx.names_and_classes(other)]
        result = ctx.retrieval.retrieve_framed(drug_id, INTERACTION_SECTION, query, policy=req.policy)
        steps += [f"[{drug_id}] {s}" for s in result.steps]
        if not result.hits:
            continue
        # Keep parts naming another drug of the question, and quarantined blocks (their text
        # cannot be trusted to say either way, so the VERIFY_PDF notice must surface).
        kept = [h for h in result.hits if _mentions_any(h, others) or h.chunk.requires_visual_check]
        steps.append(f"[{drug_id}] kept {len(kept)} of {len(result.hits)} parts naming the other drug(s)")
        pool += kept
    return pool, steps


def _mentions_any(hit: Hit, names: Sequence[str]) -> bool:
    tokens = folded_words(hit.chunk.text_folded)
    return any(find_phrase(tokens, folded_words(name)) >= 0 for name in names)
