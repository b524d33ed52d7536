"""RagAgent: one turn = understand → route (the table) → retrieve → grounded answer → remember.

A plain class with a hand-written branch table; no agent framework. Providers arrive as
protocols. The clarify streak and the last frame live in the conversation store, so several
app processes agree; a store outage only costs this turn its memory.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import ValidationError

from duocthu.agent import messages as msg
from duocthu.agent.answering import GenerationRequest, GroundedAnswerService, GuardedAnswer
from duocthu.agent.drug_classes import class_names
from duocthu.agent.drug_resolver import DrugResolver
from duocthu.agent.frame import Population, QueryFrame, TurnType
from duocthu.agent.reply import AgentReply, EvidenceView
from duocthu.agent.routing import Action, RouteDecision, route, rule_by_number
from duocthu.agent.understanding import QueryUnderstander
from duocthu.budget import RequestBudget
from duocthu.conversations import ConversationState, ConversationStore, TurnLine
from duocthu.errors import BackendUnavailableError, IndexMissingError
from duocthu.retrieval.decision import decide
from duocthu.retrieval.safety import CandidateStatus, assess_patient_candidates
from duocthu.retrieval.service import RetrievalService
from duocthu.text import find_phrase, folded_words, normalize
from duocthu.trace import TraceWriter
from duocthu.types import Hit, Outcome

log = logging.getLogger(__name__)

MAX_CONSECUTIVE_CLARIFY = 4
HISTORY_TURNS = 6  # recent(conversation_id, HISTORY_TURNS * 2 = 12 lines)
MAX_TURN_CHARS = 2000


@dataclass
class _TurnResult:
    outcome: str
    reason: str
    answer: str
    hits: tuple[Hit, ...] = ()
    omitted: tuple[str, ...] = ()
    quick_replies: tuple[str, ...] = ()
    route: str | None = None
    steps: tuple[str, ...] = ()
    failures: tuple[str, ...] = ()


class RagAgent:
    def __init__(
        self,
        understander: QueryUnderstander,
        retrieval: RetrievalService,
        answers: GroundedAnswerService,
        resolver: DrugResolver,
        store: ConversationStore,
        trace: TraceWriter | None = None,
        max_wall_clock_ms: int = 40_000,
        max_llm_calls: int = 8,
    ):
        self.understander = understander
        self.retrieval = retrieval
        self.answers = answers
        self.resolver = resolver
        self.store = store
        self.trace = trace
        self.max_wall_clock_ms = max_wall_clock_ms
        self.max_llm_calls = max_llm_calls
        self._all_drug_names = {d: tuple(resolver.names_of(d)) for d in resolver.catalogue}
        self._known_tokens = frozenset(
            t for entry in resolver.catalogue.values()
            for name in (entry.display_name, *entry.aliases) for t in folded_words(name)
        )

    # -- the turn ------------------------------------------------------------------------------
    def handle(self, turn: object, conversation_id: str | None = None) -> AgentReply:
        budget = RequestBudget(self.max_wall_clock_ms, self.max_llm_calls)
        cid = str(conversation_id) if conversation_id else uuid.uuid4().hex
        started = time.perf_counter()
        frame: QueryFrame | None = None
        decision: RouteDecision | None = None
        memory = "ok"
        try:
            text = self._validate_turn(turn)
            state, history, memory = self._recall(cid)
            prior = _frame_from_state(state)
            frame = self.understander.understand(text, history, budget, prior)
            decision = route(text, frame, self._known_tokens)
            result = self._execute(text, frame, decision, budget)
            result, streak = self._circuit_breaker(result, state.clarify_streak)
            if result.reason == "clarify_loop_exhausted":
                decision = RouteDecision(decision.rule, Action.ABSTAIN, "clarify_loop_exhausted")
            memory = self._remember(cid, text, result, frame, state, streak, memory)
        except _InvalidTurn as exc:
            result = _TurnResult("abstain", exc.reason, msg.abstain_message(exc.reason) + f" {exc}")
        except (IndexMissingError, BackendUnavailableError) as exc:
            reason = "index_missing" if isinstance(exc, IndexMissingError) else "backend_unavailable"
            result = _TurnResult("abstain", reason, f"{msg.REASON_TEXT[reason]} {exc}", failures=(str(exc),))
        except Exception as exc:  # a turn must end in a clear outcome, never a traceback
            log.exception("turn failed")
            result = _TurnResult(
                "abstain", "internal_error", msg.abstain_message("internal_error"),
                failures=(f"{type(exc).__name__}: {exc}",),
            )
        reply = AgentReply(
            conversation_id=cid, outcome=result.outcome, reason=result.reason,
            rule=decision.rule if decision else None,
            frame=frame.model_dump(mode="json") if frame else None, answer=result.answer,
            quick_replies=list(result.quick_replies), evidence=[EvidenceView.from_hit(h) for h in result.hits],
            omitted_evidence_ids=list(result.omitted), budget=budget.snapshot(),
            reason_text=msg.REASON_TEXT.get(result.reason, ""),
            rule_condition=rule_by_number(decision.rule).condition if decision else None,
            route=result.route, steps=list(result.steps), failures=list(result.failures), memory=memory,
        )
        if self.trace is not None:
            self.trace.write(reply, (time.perf_counter() - started) * 1000)
        return reply

    def _validate_turn(self, turn: object) -> str:
        if not isinstance(turn, str):
            raise _InvalidTurn("invalid_input", "Câu hỏi phải là văn bản.")
        text = normalize(turn).strip()
        if not text:
            raise _InvalidTurn("empty_input", "Hãy nhập câu hỏi về một thuốc.")
        if len(text) > MAX_TURN_CHARS:
            raise _InvalidTurn(
                "input_too_long", f"Câu hỏi dài {len(text):,} ký tự; giới hạn là {MAX_TURN_CHARS:,}. Hãy rút gọn."
            )
        return text

    def _recall(self, cid: str) -> tuple[ConversationState, list[str], str]:
        try:
            state = self.store.get_state(cid)
            history = [line.text for line in self.store.recent(cid, HISTORY_TURNS * 2)]
            return state, history, "ok"
        except Exception as exc:  # fail-open: this turn simply has no memory
            log.warning("conversation store unavailable: %s", exc)
            return ConversationState(), [], "unavailable"

    def _remember(
        self, cid: str, text: str, result: _TurnResult, frame: QueryFrame, state: ConversationState, streak: int,
        memory: str,
    ) -> str:
        if memory != "ok":
            return memory
        try:
            now = time.time()
            self.store.append(cid, [TurnLine("user", text, now), TurnLine("assistant", result.answer, now)])
            # A greeting or an off-topic turn does not erase what the conversation was about.
            keep = frame.turn_type not in (TurnType.SMALLTALK, TurnType.OUT_OF_SCOPE)
            last = frame.model_dump(mode="json") if keep else state.last_frame
            self.store.put_state(cid, ConversationState(last, streak))
        except Exception as exc:
            log.warning("conversation store unavailable on write: %s", exc)
            return "unavailable"
        return "ok"

    def _circuit_breaker(self, result: _TurnResult, streak: int) -> tuple[_TurnResult, int]:
        """At most MAX_CONSECUTIVE_CLARIFY clarify replies in a row; any other outcome resets."""
        if result.outcome != "clarify":
            return result, 0
        if streak + 1 > MAX_CONSECUTIVE_CLARIFY:
            return _TurnResult("abstain", "clarify_loop_exhausted", msg.abstain_message("clarify_loop_exhausted")), 0
        return result, streak + 1

    def _names_and_classes(self, drug_id: str) -> list[str]:
        entry = self.resolver.catalogue.get(drug_id)
        return self.resolver.names_of(drug_id) + (class_names(entry.atc_codes) if entry else [])

    # -- outcomes ------------------------------------------------------------------------------
    def _execute(self, text: str, frame: QueryFrame, decision: RouteDecision, budget: RequestBudget) -> _TurnResult:
        if decision.action is Action.CLARIFY:
            drug = self.resolver.display_name(frame.drugs[0]) if frame.drugs else None
            question, replies = msg.clarify_question(decision.reason or "", frame, drug)
            return _TurnResult("clarify", decision.reason or "needs_more_info", question, quick_replies=replies)
        if decision.action is Action.ABSTAIN:
            reason = decision.reason or "out_of_scope"
            return _TurnResult("abstain", reason, msg.abstain_message(reason, frame, frame.understanding_error or ""))
        if decision.action is Action.SMALLTALK:
            return _TurnResult("answerable", "smalltalk", msg.SMALLTALK_REPLY)
        if decision.action is Action.INTERACTION:
            return self._interaction(text, frame, budget)
        if decision.action is Action.CONDITION_TO_DRUG:
            return self._condition_to_drug(text, frame, budget)
        return self._single_drug(text, frame, budget)

    def _single_drug(self, text: str, frame: QueryFrame, budget: RequestBudget) -> _TurnResult:
        query = synthesize_query(text, frame)
        hits: list[Hit] = []
        omitted: list[str] = []
        steps: list[str] = []
        failures: list[str] = []
        route_name = None
        for drug_id in frame.drugs[:3]:
            result = self.retrieval.retrieve_framed(
                drug_id, frame.section_key, query, is_overview=frame.turn_type is TurnType.DRUG_OVERVIEW,
                drug_names=self.resolver.names_of(drug_id),
            )
            route_name = result.route
            steps += [f"[{drug_id}] {s}" for s in result.steps]
            failures += list(result.failures)
            if result.decision.outcome is not Outcome.ABSTAIN:
                hits += result.hits
                omitted += result.pack.omitted_evidence_ids
        decision = decide(hits)
        if decision.outcome is Outcome.ABSTAIN:
            return _TurnResult("abstain", decision.reason, msg.abstain_message(decision.reason),
                               route=route_name, steps=tuple(steps), failures=tuple(failures))
        request = GenerationRequest(query, tuple(hits), focus_words=_focus_words(frame),
                                    age_years=frame.age_years, weight_kg=frame.weight_kg)
        guarded = self.answers.answer_from_result(request, budget, prechecked=True)
        return self._compose(frame, guarded, hits, omitted, decision.outcome, decision.reason, route_name, steps, failures)

    def _interaction(self, text: str, frame: QueryFrame, budget: RequestBudget) -> _TurnResult:
        query = synthesize_query(text, frame)
        pool: list[Hit] = []
        steps: list[str] = []
        for drug_id in frame.drugs:
            others = [name for other in frame.drugs if other != drug_id for name in self._names_and_classes(other)]
            result = self.retrieval.retrieve_framed(drug_id, "tuong_tac_thuoc", query)
            steps += [f"[{drug_id}] {s}" for s in result.steps]
            if result.decision.outcome not in (Outcome.ANSWERABLE, Outcome.VERIFY_PDF):
                continue
            # Keep parts naming another drug of the question, and quarantined blocks (their text
            # cannot be trusted to say either way, so the VERIFY_PDF notice must surface).
            kept = [h for h in result.hits if _mentions_any(h, others) or h.chunk.requires_visual_check]
            steps.append(f"[{drug_id}] kept {len(kept)} of {len(result.hits)} parts naming the other drug(s)")
            pool += kept
        names = [self.resolver.display_name(d) for d in frame.drugs]
        if not pool:
            return _TurnResult("abstain", "no_interaction_evidence", msg.no_interaction_message(names),
                               route="interaction", steps=tuple(steps))
        decision = decide(pool)
        if decision.outcome is Outcome.ABSTAIN:
            return _TurnResult("abstain", decision.reason, msg.abstain_message(decision.reason), route="interaction",
                               steps=tuple(steps))
        request = GenerationRequest(query, tuple(pool), focus_words=tuple(names))
        guarded = self.answers.answer_from_result(request, budget, prechecked=True)
        return self._compose(frame, guarded, pool, [], decision.outcome, decision.reason, "interaction", steps, [])

    def _condition_to_drug(self, text: str, frame: QueryFrame, budget: RequestBudget) -> _TurnResult:
        indication = frame.indication or frame.condition or ""
        result = self.retrieval.retrieve_by_indication(indication)
        steps = list(result.steps)
        if not result.candidates:
            return _TurnResult("abstain", "no_indication_evidence", msg.abstain_message("no_indication_evidence"),
                               route="reverse_lookup", steps=tuple(steps))
        # The drugs actually found, from the matched chunk ids — never frame.drugs.
        matched = list(dict.fromkeys(h.doc_id.split("__")[0] for h in result.hits))
        evidence = list(result.hits)
        query = synthesize_query(text, frame)
        patient = frame.patient.context()
        if patient.requires_safety_review:
            assessments = assess_patient_candidates(
                self.retrieval.store, result.candidates, patient, self.retrieval.policy
            )
            steps.append("stage-2 safety: " + ", ".join(f"{a.drug_id}={a.status.value}" for a in assessments))
            found = [a for a in assessments if a.status is CandidateStatus.SAFETY_EVIDENCE_FOUND]
            if not found:
                return _TurnResult("abstain", "insufficient_safety_evidence",
                                   msg.abstain_message("insufficient_safety_evidence"), route="reverse_lookup",
                                   steps=tuple(steps))
            matched = [a.drug_id for a in found]
            evidence = [h for h in evidence if h.chunk.drug_id in matched] + [h for a in found for h in a.hits]
            query = patient_generation_query(indication)
        decision = decide(evidence)
        request = GenerationRequest(
            query, tuple(evidence), list_mode=True, candidate_drug_ids=tuple(matched),
            candidate_names=self._all_drug_names,
        )
        guarded = self.answers.answer_from_result(request, budget, prechecked=True)
        return self._compose(frame, guarded, evidence, [], decision.outcome, decision.reason, "reverse_lookup", steps, [],
                             list_heading=indication)

    def _compose(
        self, frame: QueryFrame, guarded: GuardedAnswer, hits: Sequence[Hit], omitted: Sequence[str],
        outcome: Outcome, reason: str, route_name: str | None, steps: Sequence[str], failures: Sequence[str],
        list_heading: str | None = None,
    ) -> _TurnResult:
        steps = tuple(steps) + guarded.steps
        if guarded.clarifying_question and not guarded.claims:
            return _TurnResult("clarify", "needs_more_info", guarded.clarifying_question, tuple(hits), tuple(omitted),
                               guarded.quick_replies, route_name, steps, tuple(failures))
        if not guarded.ok:
            return _TurnResult("abstain", guarded.reason, msg.abstain_message(guarded.reason, frame, guarded.detail),
                               tuple(hits), tuple(omitted), (), route_name, steps, tuple(failures) + ((guarded.detail,) if guarded.detail else ()))
        answer = render_answer(frame, guarded, list(hits), outcome, self.resolver, list_heading)
        return _TurnResult(outcome.value, reason, answer, tuple(hits), tuple(omitted), (), route_name, steps, tuple(failures))


class _InvalidTurn(Exception):
    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


def _frame_from_state(state: ConversationState) -> QueryFrame | None:
    if not state.last_frame:
        return None
    try:
        return QueryFrame.model_validate(state.last_frame)
    except ValidationError:
        return None


def _mentions_any(hit: Hit, names: Sequence[str]) -> bool:
    tokens = folded_words(hit.chunk.text_folded)
    return any(find_phrase(tokens, folded_words(name)) >= 0 for name in names)


def _focus_words(frame: QueryFrame) -> tuple[str, ...]:
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


def synthesize_query(turn: str, frame: QueryFrame) -> str:
    """Fold the resolved frame into one self-contained question for generation.

    Generation has no conversation history: without this a reply like "Uống" three turns into
    a dose conversation would reach generation as just "Uống".
    """
    parts = [turn.rstrip(". ")]
    population = {"pediatric": "trẻ em", "adult": "người lớn", "elderly": "người cao tuổi"}
    if frame.population is not None:
        parts.append(f"Đối tượng: {population[frame.population.value]}")
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


def render_answer(
    frame: QueryFrame, guarded: GuardedAnswer, hits: list[Hit], outcome: Outcome, resolver: DrugResolver,
    list_heading: str | None = None,
) -> str:
    index = {h.doc_id: i for i, h in enumerate(hits, start=1)}
    lines: list[str] = []
    if outcome is Outcome.VERIFY_PDF:
        pages = sorted({ref for h in hits if h.chunk.needs_visual_check for ref in h.chunk.source_refs})
        lines.append(
            "⚠ Cần đối chiếu bản in: bằng chứng có bảng chưa được kiểm tra với bản PDF ("
            + "; ".join(pages) + "). Không dùng số liệu trong bảng khi chưa kiểm tra."
        )
    if list_heading is not None:
        lines.append(
            f"Các thuốc trong Dược thư (bản demo) có nêu chỉ định «{list_heading}» (theo thứ tự tìm thấy, "
            "không phải xếp hạng điều trị):"
        )
    else:
        sections = list(dict.fromkeys(f"«{h.chunk.section_title}» của {h.chunk.display_name}" for h in hits))
        lines.append("Theo Dược thư (bản demo), mục " + ", ".join(sections[:4]) + (" …" if len(sections) > 4 else "") + ":")
    if frame.turn_type is TurnType.DOSING_CALC and frame.population is not None:
        facts = ", ".join(x for x in (frame.age_text, f"{frame.weight_kg:g} kg" if frame.weight_kg else None) if x)
        lines.append(
            f"(Bạn hỏi cho: {'trẻ em' if frame.population is Population.PEDIATRIC else 'người lớn'}"
            + (f", {facts}" if facts else "") + ". duocthu không tự tính liều: hãy đối chiếu với mức liều dưới đây.)"
        )
    for claim in guarded.claims:
        refs = "".join(f"[{index[i]}]" for i in claim.evidence_ids if i in index)
        lines.append(f"- {claim.text} {refs}")
    sources = []
    for h in hits:
        sources.append(f"[{index[h.doc_id]}] {h.chunk.display_name} — {h.chunk.section_title}, phần {h.chunk.part_index + 1}; "
                       + "; ".join(h.chunk.source_refs))
    lines.append("Nguồn:\n" + "\n".join(sources))
    lines.append(msg.DEMO_NOTICE)
    return "\n".join(lines)
