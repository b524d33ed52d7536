"""Retrieval-only mode (ANSWER_PROVIDER=disabled): the spec's single-turn path, evidence quoted verbatim.

No understanding call, no routing table, no memory: the drug resolver and the keyword section
router pick the route, and the answer is the evidence itself — the reply says that nothing was
generated. It shares input validation and reply assembly with the RAG agent (``turn.py``).
"""

from __future__ import annotations

from duocthu.agent import messages as msg
from duocthu.agent.answer import Answer, abstained, spoken
from duocthu.agent.reply import AgentReply
from duocthu.agent.turn import TurnRecord, run_turn
from duocthu.budget import RequestBudget
from duocthu.retrieval.decision import decide_result
from duocthu.retrieval.policy import EvidencePolicy
from duocthu.retrieval.service import RetrievalService
from duocthu.trace import TraceWriter
from duocthu.types import Closing, Notice, Outcome, Passages
from duocthu.understanding.drugs import DrugResolver


class RetrievalOnlyAgent:
    def __init__(self, retrieval: RetrievalService, resolver: DrugResolver, trace: TraceWriter | None = None):
        self.retrieval = retrieval
        self.resolver = resolver
        self.trace = trace

    def handle(
        self, turn: object, conversation_id: str | None = None, policy: EvidencePolicy | None = None
    ) -> AgentReply:
        return run_turn(turn, conversation_id, RequestBudget(), self.trace,
                        lambda text, record: self._turn(text, record, policy), generated=False)

    def _turn(self, text: str, record: TurnRecord, policy: EvidencePolicy | None) -> Answer:
        record.memory = "none"
        resolution = self.resolver.resolve(text)
        if not resolution.mentions:
            reason = "drug_not_in_formulary" if resolution.unknown else "no_drug"
            return abstained(reason, msg.REASON_TEXT[reason], route="retrieval_only")
        drug_id = resolution.mentions[0].drug_id
        result = self.retrieval.retrieve(text, drug_id, drug_names=self.resolver.names_of(drug_id), policy=policy)
        decision = decide_result(result)
        shown = decision.outcome is not Outcome.ABSTAIN
        return Answer(
            outcome=decision.outcome, reason=decision.reason,
            blocks=(Notice(msg.GENERATED_NOTHING), Passages(tuple(h.doc_id for h in result.hits))) if shown
            else spoken(msg.abstain_message(decision.reason)),
            evidence=result.hits, omitted=result.pack.omitted_evidence_ids, route=result.route, steps=result.steps,
            failures=result.failures, notices=(msg.GENERATED_NOTHING,), closing=Closing.NOTICE if shown else Closing.NONE,
        )
