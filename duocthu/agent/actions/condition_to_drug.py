"""Condition → drug: the drugs of the book indicated for a condition, listed in the order found.

With a patient, every candidate is screened (stage 2): a drug the book contraindicates for them is
listed under its own heading, never among the others, and for each other drug the answer says
whether a contraindication was found — "không thấy … không có nghĩa là an toàn".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from duocthu.agent import messages as msg
from duocthu.agent.actions.base import Request, Services, notices
from duocthu.agent.actions.quoted import (
    Found,
    patient_generation_query,
    quotes_name,
    synthesize_query,
    unanswered,
)
from duocthu.agent.answer import Answer, abstained
from duocthu.agent.answering import Claim, GenerationRequest, GuardedAnswer
from duocthu.agent.compose import (
    cited_evidence,
    page,
    quote_lists,
    quoted_hits,
    safety_block,
    safety_hits,
)
from duocthu.retrieval.decision import decide
from duocthu.retrieval.policy import EvidencePolicy
from duocthu.retrieval.safety import CandidateStatus, SafetyScreen, assess_patient_candidates
from duocthu.retrieval.service import IndicationResult
from duocthu.types import Block, Closing, Prose, Quote, QuoteList
from duocthu.understanding.frame import ConditionRef, QueryFrame
from duocthu.understanding.profile import PatientProfile, patient_profile

ROUTE = "reverse_lookup"


@dataclass(frozen=True)
class _Lookup:
    """The condition looked up (perhaps another one of the same question) and the drugs found for it."""

    frame: QueryFrame
    indication: str
    result: IndicationResult
    profile: PatientProfile
    notices: tuple[str, ...]
    steps: tuple[str, ...]


def condition_to_drug(req: Request, ctx: Services) -> Answer:
    """The drugs indicated for the condition, each quoted where the book names it, screened for the patient."""
    lookup = _look_up(req, ctx)
    if isinstance(lookup, Answer):
        return lookup
    frame, indication, result, profile = lookup.frame, lookup.indication, lookup.result, lookup.profile
    policy = req.policy
    candidates = list(result.candidates[: policy.indication_candidate_limit])
    steps = list(lookup.steps)
    screen = SafetyScreen((), profile.facts())
    contraindicated: list[str] = []
    query = synthesize_query(frame)
    if not profile.is_empty:
        assessments = assess_patient_candidates(ctx.retrieval.store, result.candidates, profile, policy,
                                                ctx.screen_names)
        flagged = [a.drug_id for a in assessments if a.status is CandidateStatus.CONTRAINDICATED]
        # A drug contraindicated for this patient is named even when it ranks past the shown cap.
        candidates += [c for c in result.candidates[policy.indication_candidate_limit :] if c.drug_id in flagged]
        kept = {c.drug_id for c in candidates}
        assessments = [a for a in assessments if a.drug_id in kept]
        steps.append("stage-2 safety: " + ", ".join(f"{a.drug_id}={a.status.value}" for a in assessments))
        screen = SafetyScreen((), profile.facts(), tuple(f for a in assessments for f in a.findings))
        contraindicated = [d for d in flagged if d in kept]
        query = patient_generation_query(indication)
    evidence = tuple(h for c in candidates for h in c.hits)
    # The drugs actually found, from the matched chunk ids — never frame.drugs.
    matched = tuple(dict.fromkeys(h.doc_id.split("__")[0] for h in evidence))
    screen = SafetyScreen(matched, screen.facts, screen.findings)
    decision = decide([*evidence, *screen.hits])
    request = GenerationRequest(
        query, evidence, list_mode=True, candidate_drug_ids=matched, candidate_names=ctx.all_names,
        indication=indication,
        indication_forms=tuple(frame.indication_alternatives) if result.mode == "synonyms" else (),
    )
    guarded = ctx.answers.answer_from_result(request, req.budget, prechecked=True)
    found = Found(evidence, decision.outcome, decision.reason, ROUTE, tuple(steps))
    return unanswered(frame, guarded, found) or _listed(ctx, found, guarded, screen, lookup.notices, indication,
                                                       contraindicated)


def _look_up(req: Request, ctx: Services) -> _Lookup | Answer:
    """The drugs indicated for the condition asked — or for another condition of the same question when the
    book has none for it (that one then becomes the patient's state); an abstention when neither has any."""
    frame = req.frame
    indication = frame.indication or frame.condition or ""
    profile = patient_profile(frame, ctx.lexicon, ctx.resolver)
    policy = _screened_policy(req.policy, profile)
    result = ctx.retrieval.retrieve_by_indication(indication, policy=policy, alternatives=frame.indication_alternatives,
                                                  typed_with_accents=frame.wording.typed_with_accents)
    steps = list(result.steps)
    said = notices(frame, ctx)
    # "Tăng huyết áp và blốc nhĩ thất thì dùng thuốc gì?": two conditions read as one phrase the book does
    # not have are looked up one by one; the other is the patient's state, screened against.
    merged = frame.wording.indication_parts
    merged = merged if len(merged) >= 2 and result.mode not in ("keyword", "synonyms") else []
    swapped = indicated_instead(req, ctx, indication, policy, merged) if merged or not result.candidates else None
    if swapped is None and not result.candidates:
        return abstained("no_indication_evidence", msg.abstain_message("no_indication_evidence"), route=ROUTE,
                         steps=steps)
    if swapped is None:
        return _Lookup(frame, indication, result, profile, tuple(said), tuple(steps))
    frame, result, states = swapped
    steps += [f"no drug is indicated for {indication!r}; {frame.indication!r} of the same question is", *result.steps]
    said.append(msg.indication_instead(indication, frame.indication or "", states))
    return _Lookup(frame, frame.indication or indication, result, patient_profile(frame, ctx.lexicon, ctx.resolver),
                   tuple(said), tuple(steps))


def _screened_policy(policy: EvidencePolicy, profile: PatientProfile) -> EvidencePolicy:
    """With a patient, more candidates are screened than are shown: a drug the book contraindicates for this
    patient is named under "chống chỉ định" even when it ranks past the shown cap."""
    if profile.is_empty:
        return policy
    return policy.with_overrides(
        indication_candidate_limit=max(policy.patient_screened_candidate_limit, policy.indication_candidate_limit))


def indicated_instead(
    req: Request, ctx: Services, indication: str, policy: EvidencePolicy, merged: Sequence[ConditionRef] = (),
) -> tuple[QueryFrame, IndicationResult, list[str]] | None:
    """"Bị động kinh mà có blốc nhĩ thất thì uống thuốc gì?": when no drug of the book is indicated for
    the condition read as asked, another condition of the same question that some drug is indicated
    for is the one a drug is sought for; the first becomes the patient's state, screened against."""
    frame = req.frame
    for mention in merged or frame.wording.text_conditions:
        if mention.is_asked:
            continue
        if not merged and mention.inside_asked:
            # "đau đầu vú": the asked condition holds this one's words but is another condition.
            continue
        if not merged and mention.cause_of_asked:
            # "viêm gan do nhìn màn hình": the asked condition is this one with a cause the book does not
            # name; it is not another condition of the question, and the drugs for this one are not the answer.
            continue
        result = ctx.retrieval.retrieve_by_indication(mention.surface, policy=policy,
                                                      typed_with_accents=frame.wording.typed_with_accents)
        if result.candidates:
            states = [m.label for m in merged if m is not mention] if merged else [indication]
            conditions = [c for c in frame.patient.conditions if c != mention.label] + states
            patient = frame.patient.model_copy(update={"conditions": list(dict.fromkeys(conditions))})
            return frame.model_copy(update={"indication": mention.surface, "condition": mention.surface,
                                            "patient": patient}), result, states
    return None


def _contraindication_quotes(ctx: Services, screen: SafetyScreen, contraindicated: Sequence[str]) -> list[Block]:
    """Under "chống chỉ định với người bệnh này", each drug's own Chống chỉ định sentence that applies: the
    list's claims are its indication sentences, which say why the drug was found, not why it is forbidden."""
    quotes: list[Quote] = []
    for drug_id in contraindicated:
        sentences = dict.fromkeys((f.quote, f.doc_id) for f in screen.contraindicated(drug_id))
        quotes += [Quote(f"{ctx.name(drug_id)}: «{text}»", (doc_id,), None, drug_id) for text, doc_id in sentences]
    return [QuoteList(None, tuple(quotes))] if quotes else []


def _listed(ctx: Services, found: Found, guarded: GuardedAnswer, screen: SafetyScreen, said: Sequence[str],
            indication: str, contraindicated: Sequence[str]) -> Answer:
    """The list: the drugs not contraindicated, each with what was found against the patient; then those
    contraindicated for this patient, under their own heading; the safety block above it all."""
    hits_by_id = {h.doc_id: h for h in found.hits}
    claims_by_drug: dict[str | None, list[Claim]] = {}
    for claim in guarded.claims:
        drug_id = hits_by_id[claim.evidence_ids[0]].chunk.drug_id if claim.evidence_ids else None
        claims_by_drug.setdefault(drug_id, []).append(claim)
    allowed = quote_lists([c for d, cs in claims_by_drug.items() if d not in contraindicated for c in cs], hits_by_id)
    flagged: list[Block] = []
    body: list[Block] = [*allowed]
    safety = None
    if screen.facts:
        for drug_id in claims_by_drug:
            if drug_id in contraindicated or drug_id is None:
                continue
            if screen.in_contraindications(drug_id):
                # A contraindication that may concern the patient (a severe form, a circumstance): not
                # "not found", and not decided for them either.
                body.append(Prose(msg.contraindication_may_concern(ctx.name(drug_id)), indented=True))
            elif not screen.contraindicated(drug_id):
                body.append(Prose(msg.no_contraindication_found(ctx.name(drug_id), screen.facts), indented=True))
        flagged += _contraindication_quotes(ctx, screen, contraindicated)
        if flagged:
            body += [Prose(msg.CONTRAINDICATED_FOR_THIS_PATIENT), *flagged]
        safety = safety_block(screen, ctx.display, [d for d in claims_by_drug if d], only_found=True)
    # The list's quotes were numbered before the safety block: their numbers come first.
    hits_by_id.update({f.doc_id: f.hit for f in screen.findings})
    evidence = cited_evidence(quoted_hits(allowed, hits_by_id), quoted_hits(flagged, hits_by_id),
                              safety_hits(safety, screen), found.hits)
    return Answer(
        outcome=found.outcome, reason=found.reason,
        blocks=page(said, safety, body, evidence, found.outcome, heading=msg.indicated_for(indication)),
        evidence=evidence, route=ROUTE, steps=found.steps + guarded.steps, safety=screen.findings,
        notices=tuple(said), quotes_checked=quotes_name(guarded, indication), closing=Closing.SOURCES,
    )
