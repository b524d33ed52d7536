"""The actions of the routing table, one module each, dispatched by ``HANDLERS``."""

from __future__ import annotations

from duocthu.agent.actions.abstain import abstain
from duocthu.agent.actions.base import Handler
from duocthu.agent.actions.clarify import clarify
from duocthu.agent.actions.condition_to_drug import condition_to_drug
from duocthu.agent.actions.contraindicated import contraindicated
from duocthu.agent.actions.interaction import interaction
from duocthu.agent.actions.interaction_with_unknown import interaction_with_unknown
from duocthu.agent.actions.not_covered import not_covered
from duocthu.agent.actions.single_drug import overdose, single_drug
from duocthu.agent.actions.smalltalk import smalltalk
from duocthu.agent.routing import Action

HANDLERS: dict[Action, Handler] = {
    Action.CLARIFY: clarify,
    Action.ABSTAIN: abstain,
    Action.SMALLTALK: smalltalk,
    Action.SINGLE_DRUG: single_drug,
    Action.OVERDOSE: overdose,
    Action.INTERACTION: interaction,
    Action.INTERACTION_WITH_UNKNOWN: interaction_with_unknown,
    Action.CONDITION_TO_DRUG: condition_to_drug,
    Action.CONTRAINDICATED: contraindicated,
    Action.NOT_COVERED: not_covered,
}
