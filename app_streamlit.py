"""duocthu demo: ask the grounded drug-information assistant, inspect every turn, browse the formulary.

A thin face: answers, routing, evidence and scores all come from ``duocthu`` (the runtime, its
``AgentReply`` and the helpers in ``duocthu.presentation``). Start it with ``make demo``
(127.0.0.1:8501); ``DUOCTHU_HOME`` chooses the index folder. Evidence and user text are always
shown escaped, never as HTML or live Markdown.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from typing import Any

import streamlit as st

from duocthu import presentation as ui
from duocthu.agent.messages import DEMO_NOTICE
from duocthu.agent.reply import AgentReply
from duocthu.agent.routing import rule_by_number
from duocthu.config import Settings
from duocthu.errors import DuocthuError
from duocthu.providers.embedding import Embedder
from duocthu.providers.embedding import get_embedder as embedder_for
from duocthu.retrieval.policy import EvidencePolicy

log = logging.getLogger("duocthu.app")

CHAT_PAGE = "Hỏi đáp"
BROWSE_PAGE = "Tra cứu Dược thư"
PAGE_ICONS = {CHAT_PAGE: ":material/forum:", BROWSE_PAGE: ":material/menu_book:"}

st.set_page_config(page_title="duocthu — tra cứu thuốc (demo)", page_icon=":material/medication:", layout="wide")


@st.cache_resource(show_spinner="Đang nạp mô hình embedding…")
def get_embedder(provider: str) -> Embedder:
    """One embedder per process and provider, shared by every index folder."""
    del provider  # the cache key
    return embedder_for(Settings.from_env())


@st.cache_resource(show_spinner="Đang mở chỉ mục…")
def get_engine(home: str, qdrant_url: str, embedding_provider: str) -> ui.Engine:
    """One Qdrant client per process and folder (local Qdrant admits no second one)."""
    del home, qdrant_url  # the cache key; the settings themselves come from the environment
    return ui.open_engine(Settings.from_env(), get_embedder(embedding_provider))


def esc(text: object) -> str:
    return ui.escape_markdown(str(text))


# -- session -------------------------------------------------------------------------------------


def init_session() -> None:
    st.session_state.setdefault("conversation_id", uuid.uuid4().hex)
    st.session_state.setdefault("turns", [])


def new_conversation() -> None:
    st.session_state.conversation_id = uuid.uuid4().hex
    st.session_state.turns = []
    st.session_state.pop("pending", None)


def queue_question(text: str) -> None:
    st.session_state.pending = text


def reset_knobs() -> None:
    for knob in ui.POLICY_KNOBS:
        st.session_state.pop(f"knob_{knob.name}", None)


# -- index gate ----------------------------------------------------------------------------------


def streamlit_progress(label: str, total: int) -> Callable[[int], None]:
    """A duocthu progress factory drawn as an ``st.progress`` bar."""
    text = ui.PROGRESS_LABELS.get(label, label)
    bar = st.progress(0.0, text=f"{text}: 0/{total}")
    done = 0

    def advance(n: int) -> None:
        nonlocal done
        done += n
        bar.progress(min(done / total, 1.0) if total else 1.0, text=f"{text}: {done}/{total}")

    return advance


def open_engine() -> ui.Engine | None:
    try:
        settings = Settings.from_env()
        return get_engine(str(settings.home), settings.qdrant_url or "", settings.embedding_provider)
    except DuocthuError as exc:
        st.error("Không mở được chỉ mục hoặc nhà cung cấp của duocthu.")
        st.text(str(exc))
    except Exception as exc:  # the page must explain itself, never show a traceback
        log.exception("engine failed to open")
        st.error(f"Lỗi không mong đợi khi khởi động: {type(exc).__name__}")
        st.text(str(exc))
    return None


def index_gate(engine: ui.Engine) -> bool:
    """True when the index is served; otherwise explain and offer to build it."""
    if engine.index_ready():
        engine.runtime()
        return True
    st.title(":material/medication: duocthu")
    st.warning(
        f"Chưa có chỉ mục Dược thư (bản demo) tại {esc(engine.settings.qdrant_path)}. "
        "Bấm nút dưới đây để xây dựng (vài giây đến một phút; embedding lấy từ bộ nhớ đệm đã commit)."
    )
    if st.button("Xây dựng chỉ mục", key="build_index", type="primary", icon=":material/build:"):
        try:
            with st.status("Đang xây dựng chỉ mục…", expanded=True) as status:
                report = engine.build_index(progress=streamlit_progress)
                status.update(label="Đã xây dựng chỉ mục", state="complete")
            st.session_state.index_report = (
                f"Đã xây dựng chỉ mục: {report.drugs} thuốc, {report.chunks} đoạn, {report.seconds:.1f} s."
            )
        except DuocthuError as exc:
            st.error("Xây dựng chỉ mục thất bại.")
            st.text(str(exc))
            return False
        st.rerun()
    return False


# -- sidebar -------------------------------------------------------------------------------------


def sidebar(engine: ui.Engine | None) -> str:
    with st.sidebar:
        st.title(":material/medication: duocthu")
        st.caption("Trợ lý tra cứu thuốc có dẫn chứng — bản demo")
        page = st.radio("Trang", [CHAT_PAGE, BROWSE_PAGE], key="page", label_visibility="collapsed",
                        format_func=lambda name: f"{PAGE_ICONS[name]} {name}")
        st.button("Cuộc trò chuyện mới", key="new_conversation", on_click=new_conversation,
                  icon=":material/add_comment:", width="stretch")
        st.caption(f"Mã hội thoại: {st.session_state.conversation_id[:12]}")
        if engine is not None and engine.base_policy is not None:
            provider_controls(engine)
            policy_controls(engine)
        st.warning(DEMO_NOTICE, icon=":material/warning:")
    return str(page)


def provider_controls(engine: ui.Engine) -> None:
    st.subheader("Nhà cung cấp")
    for kind, (options, current) in ui.available_providers(engine.settings).items():
        st.selectbox(
            ui.PROVIDER_LABELS[kind], options, index=options.index(current), key=f"provider_{kind}",
            disabled=len(options) < 2 or kind == "embedding",
            help="Chỉ liệt kê nhà cung cấp đã cấu hình. Embedding gắn với chỉ mục: đổi bằng "
                 "EMBEDDING_PROVIDER rồi chạy lại `duocthu index`.",
        )
    for note in engine.runtime().notes:
        st.caption(f":material/warning: {esc(note)}")


def policy_controls(engine: ui.Engine) -> None:
    st.subheader("Chính sách bằng chứng")
    defaults = ui.knob_defaults(engine.base_policy) if engine.base_policy else {}
    for knob in ui.POLICY_KNOBS:
        st.number_input(
            knob.label, min_value=knob.min_value, max_value=knob.max_value, value=defaults[knob.name],
            step=knob.step, key=f"knob_{knob.name}", help=knob.help,
        )
    st.button("Khôi phục mặc định", key="reset_knobs", on_click=reset_knobs, icon=":material/restart_alt:")
    st.caption("Áp dụng ngay cho lượt hỏi tiếp theo của phiên này (không ảnh hưởng phiên khác).")


def session_policy(engine: ui.Engine) -> EvidencePolicy:
    assert engine.base_policy is not None
    values = {k.name: st.session_state.get(f"knob_{k.name}") for k in ui.POLICY_KNOBS}
    return ui.policy_from_knobs(engine.base_policy, values)


# -- one turn ------------------------------------------------------------------------------------


def run_turn(engine: ui.Engine, question: str) -> dict[str, Any]:
    policy = session_policy(engine)
    st.session_state.policy = policy  # this session's copy; the shared runtime keeps its own
    providers = {
        "answer": st.session_state.get("provider_answer", engine.settings.answer_provider),
        "rerank": st.session_state.get("provider_rerank", engine.settings.rerank_provider),
        "embedding": engine.settings.embedding_provider,
    }
    turn: dict[str, Any] = {
        "question": question, "reply": None, "error": None,
        "policy": ui.knob_defaults(policy), "providers": providers,
    }
    try:
        turn["reply"] = engine.handle(
            question, st.session_state.conversation_id, policy, providers["answer"], providers["rerank"]
        )
    except Exception as exc:  # the chat keeps working; the message says what happened
        log.exception("turn failed")
        turn["error"] = f"{type(exc).__name__}: {exc}"
    return turn


def render_turn(index: int, turn: dict[str, Any], engine: ui.Engine | None = None) -> dict[str, Any]:
    with st.chat_message("user"):
        st.markdown(esc(turn["question"]))
    with st.chat_message("assistant"):
        if engine is not None:  # a fresh turn: answer it here, under a spinner
            with st.spinner("Đang tra cứu Dược thư…"):
                turn = run_turn(engine, turn["question"])
        if turn["error"] is not None:
            st.error("Đã xảy ra lỗi khi xử lý câu hỏi này; hãy thử lại hoặc hỏi câu khác. Ứng dụng vẫn hoạt động.")
            st.caption(esc(turn["error"]))
        else:
            render_reply(index, turn)
    return turn


def render_reply(index: int, turn: dict[str, Any]) -> None:
    reply: AgentReply = turn["reply"]
    badge = ui.badge_for(reply.outcome, reply.reason)
    st.badge(badge.label, icon=badge.icon, color=badge.color)
    if reply.reason_text:
        st.caption(esc(reply.reason_text))
    st.markdown(esc(reply.answer))
    failed = bool(reply.failures) or reply.reason in ui.SYSTEM_FAILURE_REASONS
    with st.status(f"Quy trình xử lý: {len(reply.steps)} bước", state="error" if failed else "complete"):
        for number, step in enumerate(reply.steps, start=1):
            st.text(f"{number}. {step}")
        if not reply.steps:
            st.caption("Không có bước truy xuất: bảng định tuyến quyết định ngay.")
        for failure in reply.failures:
            st.text(f"Lỗi: {failure}")
    with st.expander("Chi tiết kiểm tra lượt này", icon=":material/search:"):
        render_inspection(index, turn, reply)


def render_inspection(index: int, turn: dict[str, Any], reply: AgentReply) -> None:
    st.download_button(
        "Tải bản ghi lượt này (JSON)", icon=":material/download:",
        data=ui.trace_json_bytes(reply, {"question": turn["question"], "policy": turn["policy"],
                                         "providers": turn["providers"]}),
        file_name=ui.trace_file_name(reply, index + 1), mime="application/json",
        key=f"download_{index}", on_click="ignore",
    )
    decision, frame, evidence, budget = st.tabs(
        ["Quyết định", "QueryFrame", f"Bằng chứng ({len(reply.evidence)})", "Ngân sách & chính sách"]
    )
    with decision:
        badge = ui.badge_for(reply.outcome, reply.reason)
        st.markdown(f"**Kết quả:** :{badge.color}-badge[{esc(badge.label)}] `{reply.outcome}` / `{reply.reason}`")
        st.markdown(f"**Lý do:** {esc(reply.reason_text or reply.reason)}")
        if reply.rule is not None:
            row = rule_by_number(reply.rule)
            st.markdown(f"**Dòng định tuyến đã áp dụng:** quy tắc số {reply.rule}")
            st.code(f"điều kiện: {reply.rule_condition or row.condition}\nkết quả:   {row.outcome}", language=None)
        else:
            st.markdown(esc(ui.rule_line(reply)))
        st.markdown(f"**Tuyến truy xuất:** {esc(ui.ROUTE_TEXT.get(reply.route or '', reply.route or '—'))}")
        st.markdown(f"**Bộ nhớ hội thoại:** {esc(reply.memory)}")
    with frame:
        if reply.frame:
            st.json(reply.frame, expanded=True)
        else:
            st.caption("Không có QueryFrame cho lượt này.")
    with evidence:
        render_evidence(reply)
    with budget:
        left, right = st.columns(2)
        left.metric("Thời gian xử lý", f"{float(reply.budget.get('elapsed_ms', 0)):.0f} ms")
        right.metric("Lượt gọi LLM", int(reply.budget.get("llm_calls", 0)))
        st.markdown("**Chính sách bằng chứng dùng cho lượt này**")
        st.json(turn["policy"])
        st.markdown("**Nhà cung cấp**")
        st.json(turn["providers"])


def render_evidence(reply: AgentReply) -> None:
    if not reply.evidence:
        st.caption("Không có bằng chứng nào được dùng cho lượt này.")
    else:
        st.dataframe(ui.evidence_rows(reply.evidence), hide_index=True, width="stretch")
        for number, item in enumerate(reply.evidence, start=1):
            with st.container(border=True):
                st.markdown(f"**[{number}] {esc(item.drug_id)} — {esc(item.section_title)}, phần {item.part_index + 1}**")
                st.caption(
                    f"Điểm {esc(ui.score_meaning(item.score, item.score_kind, item.route))} · "
                    f"Nguồn: {esc('; '.join(item.source_refs))}"
                )
                if item.requires_visual_check:
                    st.warning("Đoạn này có bảng chưa đối chiếu với bản in: kiểm tra trang PDF trước khi dùng số liệu.",
                               icon=":material/warning:")
                st.markdown(esc(item.text))
    if reply.omitted_evidence_ids:
        st.markdown("**Bằng chứng bị bỏ (vượt ngân sách ngữ cảnh):**")
        st.code("\n".join(reply.omitted_evidence_ids), language=None)


# -- pages ---------------------------------------------------------------------------------------


def chat_page(engine: ui.Engine) -> None:
    st.title(":material/forum: Hỏi đáp về thuốc")
    st.caption(
        "Hỏi về một thuốc trong Dược thư (bản demo): mỗi câu trả lời kèm bằng chứng, trang nguồn và "
        "lý do quyết định — mở «Chi tiết kiểm tra» dưới mỗi câu trả lời."
    )
    st.info(DEMO_NOTICE, icon=":material/info:")
    if "index_report" in st.session_state:
        st.success(st.session_state.pop("index_report"))
    typed = st.chat_input("Hỏi về liều dùng, chống chỉ định, tác dụng phụ, tương tác thuốc…", key="chat_input")
    question = typed or st.session_state.pop("pending", None)
    turns: list[dict[str, Any]] = st.session_state.turns
    for index, turn in enumerate(turns):
        render_turn(index, turn)
    if question:
        turns.append(render_turn(len(turns), {"question": question}, engine))
    last = turns[-1]["reply"] if turns else None
    if last is not None and last.quick_replies:
        st.caption("Trả lời nhanh:")
        columns = st.columns(min(len(last.quick_replies), 5))
        for j, text in enumerate(last.quick_replies):
            columns[j % len(columns)].button(
                esc(text), key=f"quick_{len(turns)}_{j}", on_click=queue_question, args=(text,),
                width="stretch",
            )
    if not turns:
        st.markdown("#### Thử một câu hỏi mẫu")
        columns = st.columns(3)
        for j, text in enumerate(ui.EXAMPLE_QUESTIONS):
            columns[j % 3].button(esc(text), key=f"example_{j}", on_click=queue_question, args=(text,),
                                  width="stretch")


def browse_page(engine: ui.Engine) -> None:
    st.title(":material/menu_book: Tra cứu Dược thư (bản demo)")
    st.info(DEMO_NOTICE, icon=":material/info:")
    store = engine.runtime().store
    catalogue = {entry.drug_id: entry for entry in store.drug_catalogue()}
    if not catalogue:
        st.warning("Chỉ mục không có thuốc nào.")
        return
    drug_id = st.selectbox(
        "Chọn thuốc", list(catalogue), key="browse_drug",
        format_func=lambda d: catalogue[d].display_name,
    )
    entry = catalogue[drug_id]
    st.caption(
        f"Tên khác: {esc(', '.join(entry.aliases) or '—')} · ATC: {esc(', '.join(entry.atc_codes) or '—')}"
    )
    for section in ui.monograph_sections(store, drug_id):
        with st.container(border=True):
            st.markdown(f"#### {esc(section.title)}")
            for hit in section.parts:
                if hit.chunk.needs_visual_check:
                    st.warning(
                        f"Phần {hit.chunk.part_index + 1} có nội dung chưa đối chiếu với bản in (bảng): "
                        "kiểm tra trang PDF trước khi dùng số liệu.", icon=":material/warning:",
                    )
                st.markdown(esc(hit.chunk.text))
            st.caption(f"Nguồn: {esc('; '.join(section.source_refs))}")


def main() -> None:
    init_session()
    engine = open_engine()
    ready = False
    if engine is not None:
        try:
            ready = index_gate(engine)
        except DuocthuError as exc:  # e.g. a configured provider without its key or package
            st.error("Không khởi tạo được trợ lý với cấu hình hiện tại.")
            st.text(str(exc))
        except Exception as exc:
            log.exception("runtime failed to start")
            st.error(f"Lỗi không mong đợi khi khởi tạo trợ lý: {type(exc).__name__}")
            st.text(str(exc))
    page = sidebar(engine if ready else None)
    if not ready or engine is None:
        return
    try:
        (browse_page if page == BROWSE_PAGE else chat_page)(engine)
    except Exception as exc:  # keep the app alive and explain, never a traceback
        log.exception("page failed")
        st.error(f"Đã xảy ra lỗi khi hiển thị trang: {type(exc).__name__}. Hãy tải lại trang.")


main()
