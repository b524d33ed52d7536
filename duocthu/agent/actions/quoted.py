"""A quoted answer: the generation query, the answerer's verdict, and the blocks of an answer from quotes.

Shared by the actions that quote the book (single drug, interaction, condition → drug): what they
found is a ``Found``; the answerer's claims become quote lists under the safety block.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from duocthu.agent import messages as msg
from duocthu.agent.actions.base import Request, Services
from duocthu.agent.answer import Answer, spoken
from duocthu.agent.answering import GuardedAnswer, states_unit
from duocthu.agent.compose import (
    cited_evidence,
    page,
    quote_lists,
    quoted_hits,
    safety_block,
    safety_hits,
)
from duocthu.chunker import split_sentences
from duocthu.text import find_phrase, fold, folded_words
from duocthu.types import Block, Closing, Hit, Outcome, Prose
from duocthu.understanding.frame import Population, QueryFrame, TurnType, TurnWording


@dataclass(frozen=True)
class Found:
    """What an action found before generation: the evidence, the verdict on it, and how it was found."""

    hits: tuple[Hit, ...]
    outcome: Outcome
    reason: str
    route: str | None
    steps: tuple[str, ...] = ()
    failures: tuple[str, ...] = ()
    omitted: tuple[str, ...] = ()


def unanswered(frame: QueryFrame, guarded: GuardedAnswer, found: Found) -> Answer | None:
    """The answerer asked back, or its guard refused the answer: a clarify or an abstention (else None)."""
    steps = found.steps + guarded.steps
    if guarded.clarifying_question and not guarded.claims:
        return Answer(outcome=Outcome.CLARIFY, reason="needs_more_info", blocks=spoken(guarded.clarifying_question),
                      evidence=found.hits, omitted=found.omitted, quick_replies=guarded.quick_replies,
                      route=found.route, steps=steps, failures=found.failures)
    if not guarded.ok:
        return Answer(outcome=Outcome.ABSTAIN, reason=guarded.reason,
                      blocks=spoken(msg.abstain_message(guarded.reason, frame, guarded.detail)),
                      evidence=found.hits, omitted=found.omitted, route=found.route, steps=steps,
                      failures=found.failures + ((guarded.detail,) if guarded.detail else ()))
    return None


def quoted_answer(req: Request, ctx: Services, found: Found, guarded: GuardedAnswer, notices: Sequence[str]) -> Answer:
    """The answer from the answerer's quotes: notices, the safety block, the sections quoted, the quotes."""
    frame = req.frame
    refused = unanswered(frame, guarded, found)
    if refused is not None:
        return refused
    hits_by_id = {h.doc_id: h for h in found.hits}
    safety = safety_block(req.screen, ctx.display)
    body: list[Block] = []
    if frame.turn_type is TurnType.DOSING_CALC and frame.population is not None:
        facts = [x for x in (frame.age_text, f"{frame.weight_kg:g} kg" if frame.weight_kg else None) if x]
        body.append(Prose(msg.asked_for(frame.population, facts)))
    quotes = quote_lists(guarded.claims, hits_by_id)
    body += quotes
    evidence = cited_evidence(safety_hits(safety, req.screen), quoted_hits(quotes, hits_by_id), found.hits)
    sections = list(dict.fromkeys(msg.section_of(h.chunk.section_title, h.chunk.display_name) for h in found.hits))
    return Answer(
        outcome=found.outcome, reason=found.reason,
        blocks=page(notices, safety, body, evidence, found.outcome, heading=msg.quoted_sections(sections)),
        evidence=evidence, omitted=found.omitted, route=found.route, steps=found.steps + guarded.steps,
        failures=found.failures, safety=req.screen.findings, notices=tuple(notices),
        quotes_checked=_quotes_in_section(guarded, hits_by_id, frame), closing=Closing.SOURCES,
    )


def _quotes_in_section(guarded: GuardedAnswer, hits_by_id: Mapping[str, Hit], frame: QueryFrame) -> bool:
    """Every quoted sentence comes from the section asked (or from the pooled or safety evidence)."""
    if not guarded.claims:
        return False
    if frame.section_key is None:
        return True
    return all(
        hits_by_id[i].chunk.section_key == frame.section_key or hits_by_id[i].route in ("pooled", "safety")
        for c in guarded.claims for i in c.evidence_ids if i in hits_by_id
    )


def quotes_name(guarded: GuardedAnswer, indication: str) -> bool:
    """Every quoted sentence of a list answer names the indication it is cited for."""
    if not guarded.claims:
        return False
    phrase = folded_words(indication)
    return all(find_phrase(folded_words(fold(c.text)), phrase) >= 0 for c in guarded.claims)


def number_not_stated(unit: str | None, hits: Sequence[Hit], wording: TurnWording) -> str | None:
    """The notice that the sections found do not state the number asked (None when one does, or none was asked)."""
    if not unit or _states_unit_any(hits, unit, wording):
        return None
    sections = list(dict.fromkeys(msg.section_of(h.chunk.section_title, h.chunk.display_name) for h in hits))
    return msg.number_not_stated(unit, sections)


def _states_unit_any(hits: Sequence[Hit], unit: str, wording: TurnWording) -> bool:
    """Whether any evidence (outside quarantined tables) states a number in the asked unit — in a
    sentence about what was asked when the question says more than the drug and the unit
    ("trước bữa sáng bao nhiêu phút" is not answered by an infusion's "trong 20–30 phút"), and naming
    the organ failure asked about ("suy gan" is not answered by a line for "suy thận")."""
    topic = frozenset(wording.topic_words)
    impairments = wording.impairments
    for hit in hits:
        if hit.chunk.requires_visual_check:
            continue
        for sentence in split_sentences(hit.chunk.text):
            tokens = folded_words(sentence)
            # two topic words when there are two: "lái xe" is not met by the "lại" of "nhắc lại" alone
            if states_unit(sentence, unit) and len(topic & set(tokens)) >= min(2, len(topic)) \
                    and all(find_phrase(tokens, folded_words(i)) >= 0 for i in impairments):
                return True
    return False


def focus_words(frame: QueryFrame) -> tuple[str, ...]:
    """Words that pick the sentences about the person asked for (offline sentence selection)."""
    words: list[str] = []
    if frame.population is Population.PEDIATRIC:
        words += ["trẻ em", "trẻ", "tuổi", "mg/kg", "kg"]
    elif frame.population is Population.ADULT:
        words += ["người lớn"]
    elif frame.population is Population.ELDERLY:
        words += ["người cao tuổi", "người lớn"]
    if frame.route:
        words.append(frame.route)
    return tuple(words)


def synthesize_query(frame: QueryFrame) -> str:
    """Fold the resolved frame into one self-contained question for generation.

    Generation has no conversation history: without this a reply like "Uống" three turns into
    a dose conversation would reach generation as just "Uống".
    """
    parts = [frame.wording.text.rstrip(". ")]
    if frame.population is not None:
        parts.append(f"Đối tượng: {msg.POPULATION_WORDS[frame.population]}")
    if frame.age_text:
        parts.append(f"Tuổi: {frame.age_text}")
    if frame.weight_kg is not None:
        parts.append(f"Cân nặng: {frame.weight_kg:g} kg")
    if frame.route:
        parts.append(f"Đường dùng: {frame.route}")
    if frame.condition or frame.indication:
        parts.append(f"Chỉ định/triệu chứng: {frame.indication or frame.condition}")
    if frame.patient.conditions:
        parts.append(f"Bệnh nền: {', '.join(frame.patient.conditions)}")
    if frame.patient.current_medications:
        parts.append(f"Thuốc đang dùng: {', '.join(frame.patient.current_medications)}")
    return ". ".join(parts) + "."


def patient_generation_query(indication: str) -> str:
    """The list-mode query for a patient-specific candidate list.

    The raw patient values are withheld: they already selected the safety sections and are not
    formulary evidence, so restating them in a cited claim would (rightly) fail the numeric guard.
    """
    return f"Liệt kê các thuốc có chỉ định «{indication}» và các lưu ý an toàn liên quan được nêu trong bằng chứng."
