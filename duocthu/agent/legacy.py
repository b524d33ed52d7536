"""Retrieval-only mode (ANSWER_PROVIDER=disabled): single turn, evidence quoted verbatim.

No understanding call, no routing table, no memory: the fuzzy drug resolver and the keyword
section router pick the route, and the answer is the evidence itself.
"""

from __future__ import annotations

import time
import uuid

from duocthu.agent import messages as msg
from duocthu.agent.drug_resolver import DrugResolver
from duocthu.agent.reply import AgentReply, EvidenceView
from duocthu.budget import RequestBudget
from duocthu.retrieval.service import RetrievalService
from duocthu.text import normalize
from duocthu.trace import TraceWriter
from duocthu.types import Outcome


class RetrievalOnlyAgent:
    def __init__(self, retrieval: RetrievalService, resolver: DrugResolver, trace: TraceWriter | None = None):
        self.retrieval = retrieval
        self.resolver = resolver
        self.trace = trace

    def handle(self, turn: object, conversation_id: str | None = None) -> AgentReply:
        started = time.perf_counter()
        budget = RequestBudget()
        cid = str(conversation_id) if conversation_id else uuid.uuid4().hex
        text = normalize(turn).strip() if isinstance(turn, str) else ""
        mentions, unknown = self.resolver.find(text) if text else ([], [])
        if not mentions:
            reason = "drug_not_in_formulary" if unknown else "no_drug"
            reply = AgentReply(
                conversation_id=cid, outcome="abstain", reason=reason, rule=None, frame=None,
                answer=msg.REASON_TEXT[reason], budget=budget.snapshot(), reason_text=msg.REASON_TEXT[reason],
                route="retrieval_only",
            )
        else:
            drug_id = mentions[0].drug_id
            result = self.retrieval.retrieve(text, drug_id, drug_names=self.resolver.names_of(drug_id))
            outcome = result.decision.outcome
            if outcome is Outcome.ABSTAIN:
                answer = msg.abstain_message(result.decision.reason)
            else:
                answer = "\n\n".join(
                    f"[{i}] {h.chunk.display_name} — {h.chunk.section_title}: {h.chunk.text}"
                    for i, h in enumerate(result.hits, start=1)
                ) + "\n" + msg.DEMO_NOTICE
            reply = AgentReply(
                conversation_id=cid, outcome=outcome.value, reason=result.decision.reason, rule=None, frame=None,
                answer=answer, evidence=[EvidenceView.from_hit(h) for h in result.hits],
                omitted_evidence_ids=list(result.pack.omitted_evidence_ids), budget=budget.snapshot(),
                reason_text=msg.REASON_TEXT.get(result.decision.reason, ""), route=result.route,
                steps=list(result.steps), failures=list(result.failures), memory="none",
            )
        if self.trace is not None:
            self.trace.write(reply, (time.perf_counter() - started) * 1000)
        return reply
