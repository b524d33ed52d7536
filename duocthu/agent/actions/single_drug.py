"""Single drug (and an overdose taken): the section asked of each drug, quoted under the safety block.

A section the monograph does not have is said as such, with its other sections offered; a drug the
book contraindicates for this patient gets no dose lines, and the contraindication is the answer
when nothing else is found.
"""

from __future__ import annotations

from dataclasses import replace

from duocthu.agent import messages as msg
from duocthu.agent.actions.base import MAX_DRUGS_PER_TURN, Request, Services, notices
from duocthu.agent.actions.contraindicated import contraindication_answer
from duocthu.agent.actions.quoted import (
    Found,
    focus_words,
    number_not_stated,
    quoted_answer,
    synthesize_query,
)
from duocthu.agent.answer import Answer, abstained
from duocthu.agent.answering import GenerationRequest, states_dose
from duocthu.retrieval.decision import decide
from duocthu.sections import SECTION_TITLES
from duocthu.types import Hit, Outcome, RetrievalResult
from duocthu.understanding.frame import Population, TurnType

DOSE_SECTION = "lieu_luong_va_cach_dung"
OVERDOSE_SECTION = "qua_lieu_va_xu_tri"


def single_drug(req: Request, ctx: Services) -> Answer:
    """The section asked of the drugs named (an overview when none is)."""
    return _answer(req, ctx, overdose=False)


def overdose(req: Request, ctx: Services) -> Answer:
    """An overdose already taken: call 115 first, then the book's "Quá liều và xử trí"."""
    return _answer(req, ctx, overdose=True)


def _answer(req: Request, ctx: Services, overdose: bool) -> Answer:
    frame, screen = req.frame, req.screen
    section = OVERDOSE_SECTION if overdose else frame.section_key
    found = _retrieve(req, ctx, section, overdose)
    if not found.hits and screen.contraindicated():
        return contraindication_answer(frame, screen, ctx)
    if found.outcome is Outcome.ABSTAIN:
        return _nothing_found(req, ctx, section, found)
    reason = "contraindicated_for_patient" if screen.contraindicated() else found.reason
    said = notices(frame, ctx)
    if overdose or section == OVERDOSE_SECTION:
        said.insert(0, msg.OVERDOSE_FIRST_LINE)
    unit = frame.asks_number
    not_stated = number_not_stated(unit, found.hits, frame.wording)
    if not_stated and found.outcome is not Outcome.VERIFY_PDF:
        reason = "number_not_stated"
        said.append(not_stated)
    request = GenerationRequest(
        synthesize_query(frame), found.hits, focus_words=focus_words(frame), age_years=frame.age_years,
        weight_kg=frame.weight_kg, pediatric=frame.population is Population.PEDIATRIC and frame.asks_dose,
        asked_unit=unit,
    )
    guarded = ctx.answers.answer_from_result(request, req.budget, prechecked=True)
    if screen.contraindicated() and guarded.claims:
        # No quantity is shown as if it applied to a patient the book contraindicates the drug for.
        kept = tuple(c for c in guarded.claims if not states_dose(f"{c.heading or ''} {c.text}"))
        if len(kept) < len(guarded.claims):
            said.append(msg.doses_left_out(len(guarded.claims) - len(kept)))
            guarded = replace(guarded, claims=kept)
    found = replace(found, reason="overdose_taken" if overdose else reason)
    return quoted_answer(req, ctx, found, guarded, said)


def _retrieve(req: Request, ctx: Services, section: str | None, overdose: bool) -> Found:
    """The section of each drug asked (at most three), decided on with the safety screen's evidence.

    No dose lines for a drug the book contraindicates for this patient."""
    frame, screen = req.frame, req.screen
    hits: list[Hit] = []
    omitted: list[str] = []
    steps: list[str] = []
    failures: list[str] = []
    result: RetrievalResult | None = None
    query = synthesize_query(frame)
    for drug_id in frame.drugs[:MAX_DRUGS_PER_TURN]:
        result = ctx.retrieval.retrieve_framed(
            drug_id, section, query, is_overview=frame.turn_type is TurnType.DRUG_OVERVIEW and not overdose,
            drug_names=ctx.resolver.names_of(drug_id), policy=req.policy,
        )
        steps += [f"[{drug_id}] {s}" for s in result.steps]
        failures += list(result.failures)
        if result.hits:
            kept = list(result.hits)
            if screen.contraindicated(drug_id):
                # No dose lines for a patient the book contraindicates the drug for.
                kept = [h for h in kept if h.chunk.section_key != DOSE_SECTION]
            hits += kept
            omitted += result.pack.omitted_evidence_ids
    if screen.findings:
        steps.append(f"safety screen → {len(screen.findings)} findings ({len(screen.contraindicated())} apply)")
    decision = decide([*hits, *screen.hits])
    return Found(tuple(hits), decision.outcome, decision.reason, result.route if result else None, tuple(steps),
                 tuple(failures), tuple(omitted))


def _nothing_found(req: Request, ctx: Services, section: str | None, found: Found) -> Answer:
    """No evidence: say which monograph has no such section (offering its others), else abstain."""
    reason = found.reason
    drugs = req.frame.drugs[:MAX_DRUGS_PER_TURN]
    missing = [d for d in drugs if not ctx.retrieval.store.find_by_section(d, section)] \
        if section and reason == "parent_hydration_failed" else []
    if section and missing:
        # "Metformin tương kỵ với gì?": the monograph has no such section — say so, and offer its others.
        names = ", ".join(ctx.name(d) for d in missing)
        title = SECTION_TITLES[section]
        absent = abstained(reason, msg.section_absent_message(names, title), route=found.route, steps=found.steps,
                           failures=found.failures)
        offered = msg.other_sections(names, [t for t in msg.OTHER_SECTION_TITLES if t != title])
        return replace(absent, quick_replies=offered)
    return abstained(reason, msg.abstain_message(reason), route=found.route, steps=found.steps,
                     failures=found.failures)
