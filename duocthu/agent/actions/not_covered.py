"""What a formulary does not cover (price, where to buy, stock, recalls, brand choice, insurance).

The answer is that the book does not cover it and that a pharmacist can help — unless the monograph of the
drug asked about speaks of it itself (the book tells of ranitidine's withdrawal): then that section answers.
"""

from __future__ import annotations

from dataclasses import replace

from duocthu.agent.actions.abstain import abstain
from duocthu.agent.actions.base import Request, Services
from duocthu.agent.actions.single_drug import single_drug
from duocthu.agent.answer import Answer
from duocthu.agent.routing import Action, RouteDecision
from duocthu.lexicon import LEXICON
from duocthu.sections import SECTION_TITLES
from duocthu.text import phrase_set
from duocthu.understanding.frame import TurnType

_TOPICS = LEXICON.group("not_covered")


def not_covered(req: Request, ctx: Services) -> Answer:
    """The section of the drug's monograph that speaks of the topic, or the abstention that the book does not."""
    frame = req.frame
    words = phrase_set(_TOPICS.get(frame.uncovered_topic or "", ()))
    for drug_id in frame.drugs:
        said = next((h.chunk.section_key for h in ctx.retrieval.store.find_by_drug(drug_id)
                     if words.matches(h.chunk.text)), None)
        if said is not None:
            asked = frame.model_copy(update={
                "turn_type": TurnType.DRUG_ATTRIBUTE, "drugs": [drug_id], "section_key": said, "section_candidates": [],
                "attribute": SECTION_TITLES[said], "uncovered_topic": None, "out_of_scope_kind": None})
            return single_drug(replace(req, frame=asked, route=RouteDecision(req.route.rule, Action.SINGLE_DRUG)), ctx)
    return abstain(req, ctx)
