"""RagAgent: one turn = recall → understand → screen the patient → route (the table) → act → remember.

A plain class with a hand-written branch table; no agent framework. Providers arrive as
protocols. The routing table picks an action (``duocthu.agent.actions``, one module each), which
returns an ``Answer`` of typed blocks. The clarify streak and the last frame live in the
conversation store, so several app processes agree; a store outage only costs this turn its memory.
The evidence policy travels with the request (``handle(..., policy=…)``): nothing per-session is
written onto shared objects.
"""

from __future__ import annotations

import logging
import time

from pydantic import ValidationError

from duocthu.agent import messages as msg
from duocthu.agent.actions import HANDLERS
from duocthu.agent.actions.base import MAX_DRUGS_PER_TURN, Request, Services
from duocthu.agent.answer import Answer, abstained
from duocthu.agent.answering import GroundedAnswerService
from duocthu.agent.render import render_text
from duocthu.agent.reply import AgentReply
from duocthu.agent.routing import Action, RouteDecision, route
from duocthu.agent.turn import TurnRecord, run_turn
from duocthu.budget import RequestBudget
from duocthu.conversations import ConversationState, ConversationStore, TurnLine
from duocthu.retrieval.policy import EvidencePolicy
from duocthu.retrieval.safety import SafetyScreen, screen_patient
from duocthu.retrieval.service import RetrievalService
from duocthu.trace import TraceWriter
from duocthu.types import Outcome
from duocthu.understanding.base import QueryUnderstander
from duocthu.understanding.conditions import ConditionLexicon
from duocthu.understanding.drugs import DrugResolver
from duocthu.understanding.frame import QueryFrame, TurnType
from duocthu.understanding.profile import patient_profile
from duocthu.understanding.wording import WordingReader

log = logging.getLogger(__name__)

MAX_CONSECUTIVE_CLARIFY = 4
HISTORY_TURNS = 6  # recent(conversation_id, HISTORY_TURNS * 2 = 12 lines)


class RagAgent:
    """The assistant: one turn of a conversation in, one reply out (``handle``)."""

    def __init__(
        self,
        understander: QueryUnderstander,
        retrieval: RetrievalService,
        answers: GroundedAnswerService,
        resolver: DrugResolver,
        store: ConversationStore,
        trace: TraceWriter | None = None,
        lexicon: ConditionLexicon | None = None,
        max_wall_clock_ms: int = 40_000,
        max_llm_calls: int = 8,
    ):
        from duocthu.understanding.conditions import build_lexicon

        self.understander = understander
        self.retrieval = retrieval
        self.answers = answers
        self.resolver = resolver
        self.store = store
        self.trace = trace
        self.lexicon = lexicon or build_lexicon([])
        self.max_wall_clock_ms = max_wall_clock_ms
        self.max_llm_calls = max_llm_calls
        self.services = Services(retrieval, answers, resolver, self.lexicon)
        self.wording = WordingReader(resolver, self.lexicon)

    # -- the turn ------------------------------------------------------------------------------
    def handle(self, turn: object, conversation_id: str | None = None, policy: EvidencePolicy | None = None) -> AgentReply:
        """Answer one turn of a conversation; never raises — a failure is an honest abstention."""
        budget = RequestBudget(self.max_wall_clock_ms, self.max_llm_calls)
        return run_turn(turn, conversation_id, budget, self.trace,
                        lambda text, record: self._turn(text, record, policy or self.retrieval.policy))

    def _turn(self, text: str, record: TurnRecord, policy: EvidencePolicy) -> Answer:
        state, lines, record.memory = self._recall(record.conversation_id)
        history = [line.text for line in lines]
        prior = _frame_from_state(state)
        frame = self.understander.understand(text, history, record.budget, prior)
        frame = self.wording.read(frame, text, [line.text for line in lines if line.role == "user"])
        record.frame = frame
        screen = self.screen(frame)
        decision = route(frame, screen)
        record.decision = decision
        answer = HANDLERS[decision.action](Request(frame, decision, screen, record.budget, policy), self.services)
        answer, streak = self._circuit_breaker(answer, state.clarify_streak)
        if answer.reason == "clarify_loop_exhausted":
            record.decision = RouteDecision(decision.rule, Action.ABSTAIN, "clarify_loop_exhausted")
        record.memory = self._remember(record.conversation_id, text, answer, frame, state, streak, record.memory)
        return answer

    def screen(self, frame: QueryFrame) -> SafetyScreen:
        """The safety screen of the frame's drugs against the conversation's patient facts and what the
        user wrote (the conversation's user turns, ``frame.wording.stated``)."""
        asked = [d for d in frame.drugs if d not in frame.patient.current_medications]
        drugs = asked or frame.drugs
        if frame.turn_type is TurnType.INTERACTION:
            # the drug asked first: with several medicines taken, the cap must not drop it
            drugs = [*asked, *(d for d in frame.drugs if d not in asked)]
        profile = patient_profile(frame, self.lexicon, self.resolver)
        return screen_patient(self.retrieval.store, drugs[:MAX_DRUGS_PER_TURN], profile, self.services.screen_names,
                              frame.wording.stated)

    def _recall(self, cid: str) -> tuple[ConversationState, list[TurnLine], str]:
        try:
            state = self.store.get_state(cid)
            return state, list(self.store.recent(cid, HISTORY_TURNS * 2)), "ok"
        except Exception as exc:  # fail-open: this turn simply has no memory
            log.warning("conversation store unavailable: %s", exc)
            return ConversationState(), [], "unavailable"

    def _remember(
        self, cid: str, text: str, answer: Answer, frame: QueryFrame, state: ConversationState, streak: int,
        memory: str,
    ) -> str:
        if memory != "ok":
            return memory
        try:
            now = time.time()
            self.store.append(cid, [TurnLine("user", text, now), TurnLine("assistant", render_text(answer), now)])
            # A greeting or an off-topic turn does not erase what the conversation was about —
            # but a self-harm signal is always kept.
            keep = frame.turn_type not in (TurnType.SMALLTALK, TurnType.OUT_OF_SCOPE)
            last = frame.model_dump(mode="json") if keep else state.last_frame
            if not keep and frame.patient.crisis and last is not None:
                last = {**last, "patient": {**last.get("patient", {}), "crisis": True}}
            self.store.put_state(cid, ConversationState(last, streak))
        except Exception as exc:
            log.warning("conversation store unavailable on write: %s", exc)
            return "unavailable"
        return "ok"

    def _circuit_breaker(self, answer: Answer, streak: int) -> tuple[Answer, int]:
        """At most MAX_CONSECUTIVE_CLARIFY clarify replies in a row; any other outcome resets."""
        if answer.outcome is not Outcome.CLARIFY:
            return answer, 0
        if streak + 1 > MAX_CONSECUTIVE_CLARIFY:
            return abstained("clarify_loop_exhausted", msg.abstain_message("clarify_loop_exhausted")), 0
        return answer, streak + 1


def _frame_from_state(state: ConversationState) -> QueryFrame | None:
    if not state.last_frame:
        return None
    try:
        return QueryFrame.model_validate(state.last_frame)
    except ValidationError:
        return None
