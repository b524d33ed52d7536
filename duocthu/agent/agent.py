"""RagAgent: one turn = understand → screen the patient → route (the table) → retrieve → answer → remember.

A plain class with a hand-written branch table; no agent framework. Providers arrive as
protocols. The clarify streak and the last frame live in the conversation store, so several app
processes agree; a store outage only costs this turn its memory. The evidence policy travels with
the request (``handle(..., policy=…)``): nothing per-session is written onto shared objects.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import replace

from pydantic import ValidationError

from duocthu.agent import messages as msg
from duocthu.agent.answering import (
    Claim,
    GenerationRequest,
    GroundedAnswerService,
    GuardedAnswer,
    quote_units,
    states_dose,
    states_unit,
)
from duocthu.agent.compose import Citations, assemble, claim_lines, safety_block
from duocthu.agent.reply import ClaimView
from duocthu.agent.routing import Action, RouteDecision, route
from duocthu.agent.turn import TurnRecord, TurnResult, run_turn
from duocthu.budget import RequestBudget
from duocthu.chunker import split_sentences
from duocthu.conversations import ConversationState, ConversationStore, TurnLine
from duocthu.drug_classes import class_names
from duocthu.retrieval.decision import decide
from duocthu.retrieval.policy import EvidencePolicy
from duocthu.retrieval.safety import (
    CandidateStatus,
    FindingKind,
    SafetyFinding,
    SafetyScreen,
    assess_patient_candidates,
    screen_patient,
)
from duocthu.retrieval.service import IndicationResult, RetrievalService
from duocthu.sections import SECTION_TITLES
from duocthu.text import find_phrase, fold, folded_words
from duocthu.trace import TraceWriter
from duocthu.types import Hit, Outcome
from duocthu.understanding.base import QueryUnderstander
from duocthu.understanding.conditions import ConditionLexicon
from duocthu.understanding.drugs import DrugResolver
from duocthu.understanding.frame import ConditionRef, Population, QueryFrame, TurnType, TurnWording
from duocthu.understanding.profile import patient_profile
from duocthu.understanding.wording import WordingReader

log = logging.getLogger(__name__)

MAX_CONSECUTIVE_CLARIFY = 4
HISTORY_TURNS = 6  # recent(conversation_id, HISTORY_TURNS * 2 = 12 lines)
MAX_DRUGS_PER_TURN = 3
CLARIFY_WARNING_KINDS = frozenset({FindingKind.CONTRAINDICATION, FindingKind.AGE_LIMIT, FindingKind.INTERACTION})


class RagAgent:
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
        self._all_drug_names = {d: tuple(resolver.names_of(d)) for d in resolver.catalogue}
        self._screen_names: dict[str, Sequence[str]] | None = None
        self._display = {d: resolver.display_name(d) for d in resolver.catalogue}
        self.wording = WordingReader(resolver, self.lexicon)

    # -- the turn ------------------------------------------------------------------------------
    def handle(self, turn: object, conversation_id: str | None = None, policy: EvidencePolicy | None = None):  # noqa: ANN201
        budget = RequestBudget(self.max_wall_clock_ms, self.max_llm_calls)
        return run_turn(turn, conversation_id, budget, self.trace,
                        lambda text, record: self._turn(text, record, policy or self.retrieval.policy))

    def _turn(self, text: str, record: TurnRecord, policy: EvidencePolicy) -> TurnResult:
        state, lines, record.memory = self._recall(record.conversation_id)
        history = [line.text for line in lines]
        prior = _frame_from_state(state)
        frame = self.understander.understand(text, history, record.budget, prior)
        frame = self.wording.read(frame, text, [line.text for line in lines if line.role == "user"])
        record.frame = frame
        screen = self.screen(frame)
        decision = route(frame, screen)
        record.decision = decision
        result = self._execute(frame, decision, screen, record.budget, policy)
        result, streak = self._circuit_breaker(result, state.clarify_streak)
        if result.reason == "clarify_loop_exhausted":
            record.decision = RouteDecision(decision.rule, Action.ABSTAIN, "clarify_loop_exhausted")
        record.memory = self._remember(record.conversation_id, text, result, frame, state, streak, record.memory)
        return result

    def screen(self, frame: QueryFrame) -> SafetyScreen:
        """The safety screen of the frame's drugs against the conversation's patient facts and what the
        user wrote (the conversation's user turns, ``frame.wording.stated``)."""
        asked = [d for d in frame.drugs if d not in frame.patient.current_medications]
        drugs = asked or frame.drugs
        if frame.turn_type is TurnType.INTERACTION:
            # the drug asked first: with several medicines taken, the cap must not drop it
            drugs = [*asked, *(d for d in frame.drugs if d not in asked)]
        profile = patient_profile(frame, self.lexicon, self.resolver)
        return screen_patient(self.retrieval.store, drugs[:MAX_DRUGS_PER_TURN], profile, self._names_for_screen(),
                              frame.wording.stated)

    def _names_for_screen(self) -> dict[str, Sequence[str]]:
        if self._screen_names is None:  # built once: names and classes of every drug of the book
            self._screen_names = {d: [*names, *class_names(self.resolver.catalogue[d].atc_codes)]
                                  for d, names in self._all_drug_names.items()}
        return self._screen_names

    def _recall(self, cid: str) -> tuple[ConversationState, list[TurnLine], str]:
        try:
            state = self.store.get_state(cid)
            return state, list(self.store.recent(cid, HISTORY_TURNS * 2)), "ok"
        except Exception as exc:  # fail-open: this turn simply has no memory
            log.warning("conversation store unavailable: %s", exc)
            return ConversationState(), [], "unavailable"

    def _remember(
        self, cid: str, text: str, result: TurnResult, frame: QueryFrame, state: ConversationState, streak: int,
        memory: str,
    ) -> str:
        if memory != "ok":
            return memory
        try:
            now = time.time()
            self.store.append(cid, [TurnLine("user", text, now), TurnLine("assistant", result.answer, now)])
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

    def _circuit_breaker(self, result: TurnResult, streak: int) -> tuple[TurnResult, int]:
        """At most MAX_CONSECUTIVE_CLARIFY clarify replies in a row; any other outcome resets."""
        if result.outcome != "clarify":
            return result, 0
        if streak + 1 > MAX_CONSECUTIVE_CLARIFY:
            return TurnResult("abstain", "clarify_loop_exhausted", msg.abstain_message("clarify_loop_exhausted")), 0
        return result, streak + 1

    # -- outcomes ------------------------------------------------------------------------------
    def _execute(
        self, frame: QueryFrame, decision: RouteDecision, screen: SafetyScreen, budget: RequestBudget,
        policy: EvidencePolicy,
    ) -> TurnResult:
        action = decision.action
        if action is Action.CLARIFY:
            drug = self._display.get(frame.drugs[0]) if frame.drugs else None
            question, replies = msg.clarify_question(decision.reason or "", frame, drug, self._display)
            notices = self._notices(frame)
            conditions = set(frame.patient.conditions)
            # A caution about a condition the patient stated is what the book says against them, too.
            warnings = [f for f in screen.findings if f.kind in CLARIFY_WARNING_KINDS
                        or (f.kind is FindingKind.CAUTION and f.matched in conditions)]
            if warnings:
                # A contraindication or an interaction does not wait for the answer to the question.
                citations = Citations()
                lines = safety_block(SafetyScreen(screen.drugs, screen.facts, tuple(warnings)), self._display,
                                     citations, only_found=True)
                question = assemble(notices, lines, None, [question], citations, Outcome.ANSWERABLE)
            elif notices:
                question = "\n".join([*notices, question])  # "(«montelucast»: hiểu là Montelukast.)"
            return TurnResult("clarify", decision.reason or "needs_more_info", question, quick_replies=replies,
                              notices=tuple(notices), safety=tuple(warnings),
                              hits=tuple({f.hit.doc_id: f.hit for f in warnings}.values()))
        if action is Action.ABSTAIN:
            reason = decision.reason or "out_of_scope"
            answer = msg.abstain_message(reason, frame, frame.understanding_error or "", self._display)
            replies = tuple(f"Có phải bạn hỏi về {self._display[d]}?" for d in frame.suggestions.values()
                            if d in self._display) if reason == "drug_not_in_formulary" else ()
            contraindications = screen.in_contraindications() if reason == "emergency" else ()
            if contraindications:
                # No drug is suggested in an emergency, but the book's contraindications of the drug named
                # for this patient are still said (after the call for urgent care, never instead of it).
                citations = Citations()
                lines = safety_block(SafetyScreen(screen.drugs, screen.facts, contraindications), self._display, citations,
                                     only_found=True)
                answer = assemble([answer], lines, None, [], citations, Outcome.ABSTAIN)
            return TurnResult("abstain", reason, answer, quick_replies=tuple(dict.fromkeys(replies)), safety=contraindications,
                              hits=tuple({f.hit.doc_id: f.hit for f in contraindications}.values()))
        if action is Action.SMALLTALK:
            return TurnResult("answerable", "smalltalk", msg.SMALLTALK_REPLY)
        if action is Action.INTERACTION:
            return self._interaction(frame, screen, budget, policy)
        if action is Action.INTERACTION_WITH_UNKNOWN:
            return self._interaction_with_unknown(frame, screen)
        if action is Action.CONDITION_TO_DRUG:
            return self._condition_to_drug(frame, budget, policy)
        if action is Action.CONTRAINDICATED:
            return self._contraindicated(frame, screen)
        return self._single_drug(frame, screen, budget, policy, overdose=action is Action.OVERDOSE)

    def _notices(self, frame: QueryFrame) -> list[str]:
        """What the answer says before its quotes: how names were read, what is not in the book."""
        notices = [f"(«{r.surface}»: hiểu là {self._display.get(r.drug_id, r.drug_id)}.)" for r in frame.readings]
        for product in frame.products:
            covered = ", ".join(self._display.get(d, d) for d in product.covered) or "không thành phần nào"
            if product.uncovered and set(product.uncovered) <= set(frame.patient.allergies):
                continue  # what the patient reacted to: said in the safety block, not as a product asked
            if product.uncovered and not product.covered and len(product.uncovered) == 1:
                notices.append(f"«{product.name}» ({product.uncovered[0]}) không có trong Dược thư (bản demo) nên không "
                               "được trả lời ở đây.")
            elif product.uncovered:
                notices.append(
                    f"«{product.name}» gồm nhiều thành phần: Dược thư (bản demo) có {covered}; "
                    f"{', '.join(product.uncovered)} không có trong Dược thư (bản demo) nên không được trả lời ở đây."
                )
        if frame.unknown_drugs and frame.drugs:
            notices.append(msg.not_in_book_message(frame.unknown_drugs, frame.suggestions, self._display))
        return notices

    def _single_drug(
        self, frame: QueryFrame, screen: SafetyScreen, budget: RequestBudget, policy: EvidencePolicy,
        overdose: bool = False,
    ) -> TurnResult:
        query = synthesize_query(frame)
        section = "qua_lieu_va_xu_tri" if overdose else frame.section_key
        hits: list[Hit] = []
        omitted: list[str] = []
        steps: list[str] = []
        failures: list[str] = []
        route_name = None
        contraindicated = bool(screen.contraindicated())
        for drug_id in frame.drugs[:MAX_DRUGS_PER_TURN]:
            result = self.retrieval.retrieve_framed(
                drug_id, section, query, is_overview=frame.turn_type is TurnType.DRUG_OVERVIEW and not overdose,
                drug_names=self.resolver.names_of(drug_id), policy=policy,
            )
            route_name = result.route
            steps += [f"[{drug_id}] {s}" for s in result.steps]
            failures += list(result.failures)
            if result.hits:
                kept = list(result.hits)
                if screen.contraindicated(drug_id):
                    # No dose lines for a patient the book contraindicates the drug for.
                    kept = [h for h in kept if h.chunk.section_key != "lieu_luong_va_cach_dung"]
                hits += kept
                omitted += result.pack.omitted_evidence_ids
        if screen.findings:
            steps.append(f"safety screen → {len(screen.findings)} findings ({len(screen.contraindicated())} apply)")
        if not hits and contraindicated:
            return self._contraindicated(frame, screen)
        decision = decide([*hits, *screen.hits])
        if decision.outcome is Outcome.ABSTAIN:
            missing = [d for d in frame.drugs[:MAX_DRUGS_PER_TURN] if not self.retrieval.store.find_by_section(d, section)] \
                if section and decision.reason == "parent_hydration_failed" else []
            if section and missing:
                # "Metformin tương kỵ với gì?": the monograph has no such section — say so, and offer its others.
                names = ", ".join(self._display.get(d, d) for d in missing)
                return TurnResult("abstain", decision.reason, msg.section_absent_message(names, SECTION_TITLES[section]),
                                  quick_replies=tuple(f"{title} của {names}" for title in msg.OTHER_SECTION_TITLES
                                                      if title != SECTION_TITLES[section]),
                                  route=route_name, steps=tuple(steps), failures=tuple(failures))
            return TurnResult("abstain", decision.reason, msg.abstain_message(decision.reason),
                              route=route_name, steps=tuple(steps), failures=tuple(failures))
        reason = "contraindicated_for_patient" if contraindicated else decision.reason
        notices = self._notices(frame)
        if overdose or section == "qua_lieu_va_xu_tri":
            notices.insert(0, msg.OVERDOSE_FIRST_LINE)
        unit = frame.asks_number
        if unit and not _states_unit_any(hits, unit, frame.wording) \
                and decision.outcome is not Outcome.VERIFY_PDF:
            reason = "number_not_stated"
            notices.append(_number_not_stated_notice(unit, hits))
        request = GenerationRequest(
            query, tuple(hits), focus_words=_focus_words(frame), age_years=frame.age_years,
            weight_kg=frame.weight_kg, pediatric=frame.population is Population.PEDIATRIC and frame.asks_dose,
            asked_unit=unit,
        )
        guarded = self.answers.answer_from_result(request, budget, prechecked=True)
        if contraindicated and guarded.claims:
            # No quantity is shown as if it applied to a patient the book contraindicates the drug for.
            kept_claims = tuple(c for c in guarded.claims if not states_dose(f"{c.heading or ''} {c.text}"))
            if len(kept_claims) < len(guarded.claims):
                notices.append(f"(Đã lược {len(guarded.claims) - len(kept_claims)} câu có liều lượng: Dược thư (bản demo) "
                               "chống chỉ định thuốc này cho trường hợp này.)")
                guarded = replace(guarded, claims=kept_claims)
        if overdose:
            reason = "overdose_taken"
        return self._compose(frame, guarded, hits, omitted, decision.outcome, reason, route_name, steps, failures,
                             screen, notices)

    def _contraindicated(
        self, frame: QueryFrame, screen: SafetyScreen, asked: Sequence[str] | None = None, also: Sequence[str] = (),
    ) -> TurnResult:
        """The contraindication is the answer: quoted first, no dose; the other sections one click away.

        ``asked`` are the drugs it is about when others of the frame are only taken; ``also`` is said after it.
        """
        citations = Citations()
        lines = safety_block(screen, self._display, citations, frame.drugs)
        names = ", ".join(self._display.get(d, d) for d in (asked or frame.drugs))
        in_contraindications = all(f.hit.chunk.section_key == "chong_chi_dinh" for f in screen.contraindicated())
        verb = "chống chỉ định" if in_contraindications else "chống chỉ định hoặc không khuyến cáo dùng"
        body = [f"Dược thư (bản demo) {verb} {names} cho trường hợp này"
                + (", nên duocthu không đưa liều." if frame.asks_dose else ".")
                + " Hãy hỏi bác sĩ hoặc dược sĩ về thuốc thay thế. Các mục khác của thuốc: chọn bên dưới.", *also]
        decision = decide(list(screen.hits))
        outcome = Outcome.VERIFY_PDF if decision.outcome is Outcome.VERIFY_PDF else Outcome.ANSWERABLE
        answer = assemble(self._notices(frame), lines, None, body, citations, outcome)
        replies = tuple(f"{title} của {names}" for title in ("Chống chỉ định", "Thận trọng", "Tương tác thuốc", "Chỉ định"))
        return TurnResult(outcome.value, "contraindicated_for_patient", answer, tuple(citations.hits),
                          quick_replies=replies, route="safety", safety=screen.findings,
                          steps=(f"safety screen → {len(screen.contraindicated())} contraindication(s) apply",),
                          quotes_checked=True)

    def _interaction(
        self, frame: QueryFrame, screen: SafetyScreen, budget: RequestBudget, policy: EvidencePolicy,
    ) -> TurnResult:
        query = synthesize_query(frame)
        pool: list[Hit] = []
        steps: list[str] = []
        for drug_id in frame.drugs:
            others = [name for other in frame.drugs if other != drug_id for name in self._names_and_classes(other)]
            result = self.retrieval.retrieve_framed(drug_id, "tuong_tac_thuoc", query, policy=policy)
            steps += [f"[{drug_id}] {s}" for s in result.steps]
            if not result.hits:
                continue
            # Keep parts naming another drug of the question, and quarantined blocks (their text
            # cannot be trusted to say either way, so the VERIFY_PDF notice must surface).
            kept = [h for h in result.hits if _mentions_any(h, others) or h.chunk.requires_visual_check]
            steps.append(f"[{drug_id}] kept {len(kept)} of {len(result.hits)} parts naming the other drug(s)")
            pool += kept
        names = [self._display.get(d, d) for d in frame.drugs]
        if not pool:
            # "Chân tôi còn phù, furosemid có dùng được không?" from a patient allergic to sulfonamides who takes
            # hydroclorothiazid: the book says nothing of the pair, but forbids the drug asked for this patient.
            asked = [d for d in frame.drugs if d not in frame.patient.current_medications]
            if asked and all(screen.contraindicated(d) for d in asked):
                return self._contraindicated(frame, screen, asked, also=[msg.no_interaction_message(names)])
            return self._abstain_showing_safety("no_interaction_evidence", msg.no_interaction_message(names), frame,
                                                screen, "interaction", steps)
        decision = decide([*pool, *screen.hits])
        if decision.outcome is Outcome.ABSTAIN:
            return TurnResult("abstain", decision.reason, msg.abstain_message(decision.reason), route="interaction",
                              steps=tuple(steps))
        reason = "contraindicated_for_patient" if screen.contraindicated() else decision.reason
        notices = self._notices(frame)
        if frame.asks_number and not _states_unit_any(pool, frame.asks_number, frame.wording) \
                and decision.outcome is not Outcome.VERIFY_PDF:
            reason = "number_not_stated"
            notices.append(_number_not_stated_notice(frame.asks_number, pool))
        request = GenerationRequest(query, tuple(pool), focus_words=tuple(names), asked_unit=frame.asks_number)
        guarded = self.answers.answer_from_result(request, budget, prechecked=True)
        return self._compose(frame, guarded, pool, [], decision.outcome, reason, "interaction", steps, [], screen,
                             notices)

    def _abstain_showing_safety(
        self, reason: str, message: str, frame: QueryFrame, screen: SafetyScreen, route: str, steps: Sequence[str],
        notices: list[str] | None = None,
    ) -> TurnResult:
        """An abstain about drugs still shows what the book says against this patient, quoted and cited.

        The notices (a component the book does not cover, a name read as another) are part of the reply.
        When the only "fact" is the medicine asked about (not in the book), the message already says it.
        """
        notices = self._notices(frame) if notices is None else notices
        citations = Citations()
        lines = safety_block(screen, self._display, citations, frame.drugs)
        about_the_patient = screen.findings or {fold(f) for f in screen.facts} - {fold(u) for u in frame.unknown_drugs}
        answer = assemble(notices, lines, None, [message], citations, Outcome.ABSTAIN) \
            if len(lines) > 1 and about_the_patient else "\n".join([*notices, message])
        return TurnResult("abstain", reason, answer, tuple(citations.hits), route=route, steps=tuple(steps),
                          safety=screen.findings, notices=tuple(notices))

    def _interaction_with_unknown(self, frame: QueryFrame, screen: SafetyScreen) -> TurnResult:
        """A drug of the book and a medicine not in it: is the other one named in the drug's own text?"""
        drug_id = frame.drugs[0]
        unknown = frame.unknown_drugs
        other = self.resolver.other_drug_terms(unknown)
        found: list[tuple[Hit, str]] = []
        unchecked: list[Hit] = []  # a table not yet checked against the printed page: absence there proves nothing
        for section in ("chong_chi_dinh", "tuong_tac_thuoc"):
            for hit in self.retrieval.store.find_by_section(drug_id, section):
                if hit.chunk.needs_visual_check:
                    unchecked.append(hit)
                for sentence in _sentences_of(hit):
                    tokens = folded_words(sentence)
                    if any(find_phrase(tokens, folded_words(term)) >= 0 for term in other):
                        found.append((Hit(hit.chunk, 1.0, hit.score_kind, "interaction_name"), sentence))
        name = self._display.get(drug_id, drug_id)
        missing = ", ".join(f"«{u}»" for u in unknown)
        notices = [f"{missing} không có trong Dược thư (bản demo); duocthu chỉ tìm tên này trong các mục Tương tác "
                   f"thuốc và Chống chỉ định của {name}."]
        if not found and unchecked:
            citations = Citations()
            for hit in unchecked:
                citations.number(hit)
            lines = safety_block(screen, self._display, citations, frame.drugs)
            body = [f"Không thấy {missing} trong phần chữ của mục Tương tác thuốc và Chống chỉ định của {name}, nhưng "
                    "mục này có bảng chưa được đối chiếu với bản in: chưa thể kết luận trước khi kiểm tra trang PDF "
                    "được dẫn. Điều này KHÔNG có nghĩa là an toàn khi phối hợp. Hãy hỏi dược sĩ hoặc bác sĩ."]
            answer = assemble(notices, lines, None, body, citations, Outcome.VERIFY_PDF)
            return TurnResult(Outcome.VERIFY_PDF.value, "visual_verification_required", answer, tuple(citations.hits),
                              route="interaction_name", safety=screen.findings, notices=tuple(notices))
        if not found:
            answer = (
                f"Không thấy {missing} được nhắc đến trong mục Tương tác thuốc và Chống chỉ định của {name} trong "
                "Dược thư (bản demo), và bản thân thuốc này không có trong Dược thư. Điều này KHÔNG có nghĩa là an "
                "toàn khi phối hợp. Hãy hỏi dược sĩ hoặc bác sĩ."
            )
            return self._abstain_showing_safety("no_interaction_evidence", answer, frame, screen, "interaction_name",
                                                (), notices)
        citations = Citations()
        body = []
        for hit, sentence in found:
            body.append(f"- {hit.chunk.section_title} — {name}: «{sentence}» [{citations.number(hit)}]")
        hits = [hit for hit, _ in found]
        decision = decide([*hits, *screen.hits])
        lines = safety_block(screen, self._display, citations, frame.drugs)
        answer = assemble(notices, lines, f"Dược thư (bản demo) nhắc đến {missing} trong các mục sau của {name}:",
                          body, citations, decision.outcome)
        claims = tuple(ClaimView(text=sentence, evidence_ids=[hit.doc_id], drug_id=drug_id) for hit, sentence in found)
        return TurnResult(decision.outcome.value, decision.reason, answer, tuple(citations.hits),
                          route="interaction_name", safety=screen.findings, claims=claims, notices=tuple(notices),
                          quotes_checked=True)

    def _condition_to_drug(self, frame: QueryFrame, budget: RequestBudget, policy: EvidencePolicy) -> TurnResult:
        indication = frame.indication or frame.condition or ""
        profile = patient_profile(frame, self.lexicon, self.resolver)
        # With a patient, more candidates are screened than are shown: a drug the book contraindicates
        # for this patient is named under "chống chỉ định" even when it ranks past the shown cap.
        screened_policy = policy if profile.is_empty else policy.with_overrides(
            indication_candidate_limit=max(policy.patient_screened_candidate_limit, policy.indication_candidate_limit))
        result = self.retrieval.retrieve_by_indication(indication, policy=screened_policy,
                                                       alternatives=frame.indication_alternatives,
                                                       typed_with_accents=frame.wording.typed_with_accents)
        steps = list(result.steps)
        notices = self._notices(frame)
        # "Tăng huyết áp và blốc nhĩ thất thì dùng thuốc gì?": two conditions read as one phrase the book does
        # not have are looked up one by one; the other is the patient's state, screened against.
        merged = frame.wording.indication_parts
        merged = merged if len(merged) >= 2 and result.mode not in ("keyword", "synonyms") else []
        swapped = self._indicated_instead(frame, indication, screened_policy, merged) \
            if merged or not result.candidates else None
        if swapped is None and not result.candidates:
            return TurnResult("abstain", "no_indication_evidence", msg.abstain_message("no_indication_evidence"),
                              route="reverse_lookup", steps=tuple(steps))
        if swapped is not None:
            frame, result, states = swapped
            others = ", ".join(f"«{c}»" for c in states)
            steps += [f"no drug is indicated for {indication!r}; {frame.indication!r} of the same question is",
                      *result.steps]
            notices = [*notices, f"Không thấy thuốc nào trong Dược thư (bản demo) có chỉ định «{indication}»; "
                                 f"dưới đây là các thuốc có chỉ định «{frame.indication}», đối chiếu với {others}."]
            indication = frame.indication or indication
            profile = patient_profile(frame, self.lexicon, self.resolver)
        candidates = list(result.candidates[: policy.indication_candidate_limit])
        query = synthesize_query(frame)
        findings: tuple[SafetyFinding, ...] = ()
        contraindicated: list[str] = []
        if not profile.is_empty:
            assessments = assess_patient_candidates(
                self.retrieval.store, result.candidates, profile, policy, self._names_for_screen())
            contraindicated = [a.drug_id for a in assessments if a.status is CandidateStatus.CONTRAINDICATED]
            candidates += [c for c in result.candidates[policy.indication_candidate_limit :]
                           if c.drug_id in contraindicated]
            kept = {c.drug_id for c in candidates}
            assessments = [a for a in assessments if a.drug_id in kept]
            steps.append("stage-2 safety: " + ", ".join(f"{a.drug_id}={a.status.value}" for a in assessments))
            findings = tuple(f for a in assessments for f in a.findings)
            contraindicated = [d for d in contraindicated if d in kept]
            query = patient_generation_query(indication)
        evidence = [h for c in candidates for h in c.hits]
        # The drugs actually found, from the matched chunk ids — never frame.drugs.
        matched = list(dict.fromkeys(h.doc_id.split("__")[0] for h in evidence))
        screen = SafetyScreen(tuple(matched), profile.facts(), findings)
        decision = decide([*evidence, *screen.hits])
        request = GenerationRequest(
            query, tuple(evidence), list_mode=True, candidate_drug_ids=tuple(matched),
            candidate_names=self._all_drug_names, indication=indication,
            indication_forms=tuple(frame.indication_alternatives) if result.mode == "synonyms" else (),
        )
        guarded = self.answers.answer_from_result(request, budget, prechecked=True)
        return self._compose(
            frame, guarded, evidence, [], decision.outcome, decision.reason, "reverse_lookup", steps, [], screen,
            notices, list_heading=indication, contraindicated=contraindicated,
        )

    def _indicated_instead(
        self, frame: QueryFrame, indication: str, policy: EvidencePolicy, merged: Sequence[ConditionRef] = (),
    ) -> tuple[QueryFrame, IndicationResult, list[str]] | None:
        """"Bị động kinh mà có blốc nhĩ thất thì uống thuốc gì?": when no drug of the book is indicated for
        the condition read as asked, another condition of the same question that some drug is indicated
        for is the one a drug is sought for; the first becomes the patient's state, screened against."""
        for mention in merged or frame.wording.text_conditions:
            if mention.is_asked:
                continue
            if not merged and mention.cause_of_asked:
                # "viêm gan do nhìn màn hình": the asked condition is this one with a cause the book does not
                # name; it is not another condition of the question, and the drugs for this one are not the answer.
                continue
            result = self.retrieval.retrieve_by_indication(mention.surface, policy=policy,
                                                           typed_with_accents=frame.wording.typed_with_accents)
            if result.candidates:
                states = [m.label for m in merged if m is not mention] if merged else [indication]
                conditions = [c for c in frame.patient.conditions if c != mention.label] + states
                patient = frame.patient.model_copy(update={"conditions": list(dict.fromkeys(conditions))})
                return frame.model_copy(update={"indication": mention.surface, "condition": mention.surface,
                                                "patient": patient}), result, states
        return None

    def _names_and_classes(self, drug_id: str) -> list[str]:
        entry = self.resolver.catalogue.get(drug_id)
        return self.resolver.names_of(drug_id) + (class_names(entry.atc_codes) if entry else [])

    def _compose(
        self, frame: QueryFrame, guarded: GuardedAnswer, hits: Sequence[Hit], omitted: Sequence[str],
        outcome: Outcome, reason: str, route_name: str | None, steps: Sequence[str], failures: Sequence[str],
        screen: SafetyScreen, notices: Sequence[str], list_heading: str | None = None,
        contraindicated: Sequence[str] = (),
    ) -> TurnResult:
        steps = tuple(steps) + guarded.steps
        if guarded.clarifying_question and not guarded.claims:
            return TurnResult("clarify", "needs_more_info", guarded.clarifying_question, tuple(hits), tuple(omitted),
                              guarded.quick_replies, route_name, steps, tuple(failures))
        if not guarded.ok:
            return TurnResult("abstain", guarded.reason, msg.abstain_message(guarded.reason, frame, guarded.detail),
                              tuple(hits), tuple(omitted), (), route_name, steps,
                              tuple(failures) + ((guarded.detail,) if guarded.detail else ()))
        citations = Citations()
        hits_by_id = {h.doc_id: h for h in hits}
        if list_heading is not None:
            lines, heading, body, views = self._list_answer(frame, guarded, hits_by_id, screen, citations,
                                                            list_heading, contraindicated)
        else:
            lines = safety_block(screen, self._display, citations)
            body, views = claim_lines(guarded.claims, citations, hits_by_id)
            sections = list(dict.fromkeys(f"«{h.chunk.section_title}» của {h.chunk.display_name}" for h in hits))
            heading = "Theo Dược thư (bản demo), mục " + ", ".join(sections[:4]) + (" …" if len(sections) > 4 else "") + ":"
            if frame.turn_type is TurnType.DOSING_CALC and frame.population is not None:
                facts = ", ".join(x for x in (frame.age_text, f"{frame.weight_kg:g} kg" if frame.weight_kg else None) if x)
                who = {Population.PEDIATRIC: "trẻ em", Population.ELDERLY: "người cao tuổi"}.get(frame.population, "người lớn")
                body.insert(0, f"(Bạn hỏi cho: {who}" + (f", {facts}" if facts else "")
                            + ". duocthu không tự tính liều: hãy đối chiếu với mức liều dưới đây.)")
        for hit in hits:  # every evidence chunk is listed, cited or not
            citations.number(hit)
        answer = assemble(notices, lines, heading, body, citations, outcome)
        checked = _quotes_cited_for(guarded, hits_by_id, frame, list_heading)
        return TurnResult(outcome.value, reason, answer, tuple(citations.hits), tuple(omitted), (), route_name, steps,
                          tuple(failures), safety=screen.findings, claims=tuple(views), notices=tuple(notices),
                          quotes_checked=checked)

    def _list_answer(
        self, frame: QueryFrame, guarded: GuardedAnswer, hits_by_id: dict[str, Hit], screen: SafetyScreen,
        citations: Citations, indication: str, contraindicated: Sequence[str],
    ) -> tuple[list[str], str, list[str], list[ClaimView]]:
        claims_by_drug: dict[str | None, list[Claim]] = {}
        for claim in guarded.claims:
            drug_id = hits_by_id[claim.evidence_ids[0]].chunk.drug_id if claim.evidence_ids else None
            claims_by_drug.setdefault(drug_id, []).append(claim)
        heading = (f"Các thuốc trong Dược thư (bản demo) có nêu chỉ định «{indication}» (theo thứ tự tìm thấy, "
                   "không phải xếp hạng điều trị):")
        allowed = [c for d, cs in claims_by_drug.items() if d not in contraindicated for c in cs]
        body, views = claim_lines(allowed, citations, hits_by_id)
        lines: list[str] = []
        if screen.facts:
            for drug_id in claims_by_drug:
                if drug_id in contraindicated or drug_id is None:
                    continue
                name = self._display.get(drug_id, drug_id)
                if screen.in_contraindications(drug_id):
                    # A contraindication that may concern the patient (a severe form, a circumstance): not
                    # "not found", and not decided for them either.
                    body.append(f"  {name}: Chống chỉ định có nêu trường hợp liên quan (xem «Lưu ý» ở trên) — "
                                "cần đối chiếu với tình trạng người bệnh.")
                elif not screen.contraindicated(drug_id):
                    body.append(f"  {name}: không thấy chống chỉ định với "
                                f"{', '.join(screen.facts)} trong Dược thư (bản demo) — không có nghĩa là an toàn.")
            flagged = [d for d in claims_by_drug if d in contraindicated]
            if flagged:
                body.append("Chống chỉ định với người bệnh này (theo Dược thư, bản demo):")
                more, more_views = claim_lines([c for d in flagged for c in claims_by_drug[d]], citations, hits_by_id)
                body += more
                views += more_views
            lines = safety_block(screen, self._display, citations, [d for d in claims_by_drug if d], only_found=True)
        return lines, heading, body, views


def _frame_from_state(state: ConversationState) -> QueryFrame | None:
    if not state.last_frame:
        return None
    try:
        return QueryFrame.model_validate(state.last_frame)
    except ValidationError:
        return None


def _sentences_of(hit: Hit) -> list[str]:
    return [u.text for u in quote_units(hit.chunk.text)]


def _mentions_any(hit: Hit, names: Sequence[str]) -> bool:
    tokens = folded_words(hit.chunk.text_folded)
    return any(find_phrase(tokens, folded_words(name)) >= 0 for name in names)


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


def _number_not_stated_notice(unit: str, hits: Sequence[Hit]) -> str:
    sections = ", ".join(dict.fromkeys(f"«{h.chunk.section_title}» của {h.chunk.display_name}" for h in hits))
    return (f"Mục {sections} trong Dược thư (bản demo) không nêu con số ({unit}) bạn hỏi. Các câu trích dưới đây là "
            "nội dung của mục, không phải câu trả lời cho con số đó.")


def _quotes_cited_for(guarded: GuardedAnswer, hits_by_id: dict[str, Hit], frame: QueryFrame,
                      indication: str | None) -> bool:
    """Every quoted sentence contains what it is cited for (the indication; the section asked)."""
    if not guarded.claims:
        return False
    if indication is not None:
        phrase = folded_words(indication)
        return all(find_phrase(folded_words(fold(c.text)), phrase) >= 0 for c in guarded.claims)
    if frame.section_key is None:
        return True
    return all(
        hits_by_id[i].chunk.section_key == frame.section_key or hits_by_id[i].route in ("pooled", "safety")
        for c in guarded.claims for i in c.evidence_ids if i in hits_by_id
    )


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


def synthesize_query(frame: QueryFrame) -> str:
    """Fold the resolved frame into one self-contained question for generation.

    Generation has no conversation history: without this a reply like "Uống" three turns into
    a dose conversation would reach generation as just "Uống".
    """
    parts = [frame.wording.text.rstrip(". ")]
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
