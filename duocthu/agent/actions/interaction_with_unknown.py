"""A drug of the book with a medicine not in it: is the other one named in the drug's own text?

Its "Chống chỉ định" and "Tương tác thuốc" sentences naming the other medicine are quoted; when none
does but a table there is not yet checked against the printed page, nothing can be concluded.
"""

from __future__ import annotations

from duocthu.agent import messages as msg
from duocthu.agent.actions.abstain import abstain_showing_safety
from duocthu.agent.actions.base import Request, Services
from duocthu.agent.answer import Answer
from duocthu.agent.answering import quote_units
from duocthu.agent.compose import cited_evidence, page, safety_block, safety_hits
from duocthu.retrieval.decision import decide
from duocthu.text import find_phrase, folded_words
from duocthu.types import Closing, Hit, Outcome, Prose, Quote, QuoteList

SEARCHED_SECTIONS = ("chong_chi_dinh", "tuong_tac_thuoc")
ROUTE = "interaction_name"


def interaction_with_unknown(req: Request, ctx: Services) -> Answer:
    """The sentences of the drug's contraindications and interactions that name the other medicine."""
    frame, screen = req.frame, req.screen
    drug_id, unknown = frame.drugs[0], frame.unknown_drugs
    found, unchecked = _sentences_naming(ctx, drug_id, ctx.resolver.other_drug_terms(unknown))
    name = ctx.name(drug_id)
    said = [msg.searched_other_name(unknown, name)]
    safety = safety_block(screen, ctx.display, frame.drugs)
    if not found and unchecked:
        evidence = cited_evidence(unchecked, safety_hits(safety, screen))
        body = [Prose(msg.unknown_not_in_unchecked(unknown, name))]
        return Answer(outcome=Outcome.VERIFY_PDF, reason="visual_verification_required",
                      blocks=page(said, safety, body, evidence, Outcome.VERIFY_PDF), evidence=evidence, route=ROUTE,
                      safety=screen.findings, notices=tuple(said), closing=Closing.SOURCES)
    if not found:
        return abstain_showing_safety("no_interaction_evidence", msg.unknown_not_named(unknown, name), frame, screen,
                                      ctx, ROUTE, (), said)
    quotes = QuoteList(None, tuple(Quote(sentence, (hit.doc_id,), drug_id=drug_id,
                                         source=f"{hit.chunk.section_title} — {name}") for hit, sentence in found))
    hits = [hit for hit, _ in found]
    decision = decide([*hits, *screen.hits])
    # The quotes were numbered before the safety block: their numbers come first.
    evidence = cited_evidence(hits, safety_hits(safety, screen))
    return Answer(
        outcome=decision.outcome, reason=decision.reason,
        blocks=page(said, safety, [quotes], evidence, decision.outcome, heading=msg.unknown_named_in(unknown, name)),
        evidence=evidence, route=ROUTE, safety=screen.findings, notices=tuple(said), quotes_checked=True,
        closing=Closing.SOURCES,
    )


def _sentences_naming(ctx: Services, drug_id: str, terms: list[str]) -> tuple[list[tuple[Hit, str]], list[Hit]]:
    """(hit, sentence) for each sentence naming one of ``terms``, and the parts holding an unchecked table
    (absence there proves nothing)."""
    found: list[tuple[Hit, str]] = []
    unchecked: list[Hit] = []
    for section in SEARCHED_SECTIONS:
        for hit in ctx.retrieval.store.find_by_section(drug_id, section):
            if hit.chunk.needs_visual_check:
                unchecked.append(hit)
            for unit in quote_units(hit.chunk.text):
                tokens = folded_words(unit.text)
                if any(find_phrase(tokens, folded_words(term)) >= 0 for term in terms):
                    found.append((Hit(hit.chunk, 1.0, hit.score_kind, ROUTE), unit.text))
    return found, unchecked
