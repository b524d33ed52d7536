"""What an action works on: the turn's request, the shared services, and the notices every answer starts with.

An action (``Handler``) takes the request — the frame (which carries everything the user said),
the routing decision, the safety screen, the turn's budget and evidence policy — and the services
shared by every turn. It never sees the user's text, and it returns an ``Answer``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

from duocthu.agent import messages as msg
from duocthu.agent.answer import Answer
from duocthu.agent.answering import GroundedAnswerService
from duocthu.agent.routing import RouteDecision
from duocthu.budget import RequestBudget
from duocthu.drug_classes import class_names
from duocthu.retrieval.policy import EvidencePolicy
from duocthu.retrieval.safety import SafetyScreen
from duocthu.retrieval.service import RetrievalService
from duocthu.understanding.conditions import ConditionLexicon
from duocthu.understanding.drugs import DrugResolver
from duocthu.understanding.frame import QueryFrame

MAX_DRUGS_PER_TURN = 3


@dataclass(frozen=True)
class Request:
    """One turn as an action sees it."""

    frame: QueryFrame
    route: RouteDecision
    screen: SafetyScreen
    budget: RequestBudget
    policy: EvidencePolicy


@dataclass(frozen=True)
class Services:
    """What every action may use: retrieval, the grounded answerer, the drug names, the condition lexicon."""

    retrieval: RetrievalService
    answers: GroundedAnswerService
    resolver: DrugResolver
    lexicon: ConditionLexicon

    @cached_property
    def display(self) -> dict[str, str]:
        """drug_id → the book's display name."""
        return {d: self.resolver.display_name(d) for d in self.resolver.catalogue}

    @cached_property
    def all_names(self) -> dict[str, tuple[str, ...]]:
        """drug_id → every name of the drug (a list answer may name no drug outside them)."""
        return {d: tuple(self.resolver.names_of(d)) for d in self.resolver.catalogue}

    @cached_property
    def screen_names(self) -> dict[str, Sequence[str]]:
        """drug_id → its names and classes, for the safety screen (built once, on first use)."""
        return {d: [*names, *class_names(self.resolver.catalogue[d].atc_codes)] for d, names in self.all_names.items()}

    def name(self, drug_id: str) -> str:
        return self.display.get(drug_id, drug_id)

    def names_and_classes(self, drug_id: str) -> list[str]:
        entry = self.resolver.catalogue.get(drug_id)
        return self.resolver.names_of(drug_id) + (class_names(entry.atc_codes) if entry else [])


Handler = Callable[[Request, Services], Answer]


def notices(frame: QueryFrame, ctx: Services) -> list[str]:
    """What the answer says before its quotes: how names were read, what is not in the book."""
    said = [msg.read_as(r.surface, ctx.name(r.drug_id)) for r in frame.readings]
    for product in frame.products:
        if product.uncovered and set(product.uncovered) <= set(frame.patient.allergies):
            continue  # what the patient reacted to: said in the safety block, not as a product asked
        if product.uncovered and not product.covered and len(product.uncovered) == 1:
            said.append(msg.product_not_in_book(product.name, product.uncovered[0]))
        elif product.uncovered:
            said.append(msg.product_partly_in_book(product.name, [ctx.name(d) for d in product.covered],
                                                   product.uncovered))
    if frame.unknown_drugs and frame.drugs:
        said.append(msg.not_in_book_message(frame.unknown_drugs, frame.suggestions, ctx.display))
    return said
