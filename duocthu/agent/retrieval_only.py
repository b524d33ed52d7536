"""Retrieval-only mode (ANSWER_PROVIDER=disabled): the spec's single-turn path, evidence quoted verbatim.

No understanding call, no routing table, no memory: the drug resolver and the keyword section
router pick the route, and the answer is the evidence itself — the reply says that nothing was
generated. It shares input validation and reply assembly with the RAG agent (``turn.py``).
"""

from __future__ import annotations

from duocthu.agent import messages as msg
from duocthu.agent.reply import AgentReply
from duocthu.agent.turn import TurnRecord, TurnResult, run_turn
from duocthu.budget import RequestBudget
from duocthu.retrieval.decision import decide_result
from duocthu.retrieval.policy import EvidencePolicy
from duocthu.retrieval.service import RetrievalService
from duocthu.trace import TraceWriter
from duocthu.types import Outcome
from duocthu.understanding.drugs import DrugResolver

GENERATED_NOTHING = (
    "Chế độ chỉ truy xuất: duocthu không tạo câu trả lời, chỉ trích nguyên văn các đoạn tìm được. "
    "Hãy tự đọc và đối chiếu."
)


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

    def _turn(self, text: str, record: TurnRecord, policy: EvidencePolicy | None) -> TurnResult:
        record.memory = "none"
        resolution = self.resolver.resolve(text)
        if not resolution.mentions:
            reason = "drug_not_in_formulary" if resolution.unknown else "no_drug"
            return TurnResult("abstain", reason, msg.REASON_TEXT[reason], route="retrieval_only")
        drug_id = resolution.mentions[0].drug_id
        result = self.retrieval.retrieve(text, drug_id, drug_names=self.resolver.names_of(drug_id), policy=policy)
        decision = decide_result(result)
        outcome = decision.outcome
        if outcome is Outcome.ABSTAIN:
            answer = msg.abstain_message(decision.reason)
        else:
            answer = GENERATED_NOTHING + "\n\n" + "\n\n".join(
                f"[{i}] {h.chunk.display_name} — {h.chunk.section_title}: {h.chunk.text}"
                for i, h in enumerate(result.hits, start=1)
            ) + "\n" + msg.DEMO_NOTICE
        return TurnResult(
            outcome.value, decision.reason, answer, result.hits, result.pack.omitted_evidence_ids,
            route=result.route, steps=result.steps, failures=result.failures, notices=(GENERATED_NOTHING,),
        )
