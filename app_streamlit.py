"""duocthu demo: ask the grounded drug-information assistant, read the answer with its sources, browse the book.

A thin face: answers, routing, evidence and scores all come from ``duocthu`` (the runtime, its
``AgentReply`` and the helpers in ``duocthu.presentation``). Start it with ``make demo``
(127.0.0.1:8501); ``DUOCTHU_HOME`` chooses the index folder. Text from users and from the
formulary is always escaped: answers and cards are HTML built by ``duocthu.presentation.render``
around escaped text and shown with ``st.html``; everything else is plain or escaped Markdown.

Two modes: the demo (default) shows the conversation, the answers and their source cards; the
research mode (a toggle in the sidebar) adds the providers, the evidence policy and, under each
answer, how it was decided. The conversation id lives in the URL (``?c=…``): a reload or a shared
link shows the same conversation.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import streamlit as st

from duocthu import presentation as ui
from duocthu.agent.messages import DEMO_NOTICE
from duocthu.agent.reply import AgentReply
from duocthu.config import Settings
from duocthu.errors import DuocthuError
from duocthu.presentation import render
from duocthu.providers.embedding import Embedder
from duocthu.providers.embedding import get_embedder as embedder_for
from duocthu.retrieval.policy import EvidencePolicy

log = logging.getLogger("duocthu.app")

CHAT_PAGE, BROWSE_PAGE = "hoi-dap", "duoc-thu"
PAGE_LABELS = {CHAT_PAGE: ":material/forum: Hỏi đáp", BROWSE_PAGE: ":material/menu_book: Tra cứu Dược thư"}
BANNER = ("Bản demo: dữ liệu minh họa do dự án duocthu biên soạn, không phải văn bản Dược thư Quốc gia — "
          "không dùng cho quyết định lâm sàng.")
FOOTER = "duocthu · bản demo · không thay thế tư vấn của bác sĩ, dược sĩ."
PLACEHOLDER = "Hỏi về một thuốc…"
PAGE_CSS = """
<style>
[data-testid="stStatusWidget"], [data-testid="InputInstructions"] {display: none !important;}
</style>
"""

st.set_page_config(page_title="duocthu — tra cứu thuốc (bản demo)", page_icon=":material/medication:", layout="wide")


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


@st.cache_resource
def get_archive(home: str) -> ui.ReplyArchive:
    """The replies this process has shown, so a reload shows the same answers with their sources."""
    del home
    return ui.ReplyArchive()


@st.cache_resource(show_spinner=False)
def get_products(home: str, drugs: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    del home
    return ui.products_by_component(drugs)


def esc(text: object) -> str:
    return ui.escape_markdown(str(text))


# -- session: the conversation in the URL, the policy of this session -------------------------------------


def init_session(engine: ui.Engine | None) -> None:
    state = st.session_state
    if "conversation_id" not in state:
        wanted = st.query_params.get("c")
        state.turns = []
        if ui.valid_conversation_id(wanted) and engine is not None:
            state.conversation_id = wanted
            store = engine.runtime().conversations
            state.turns, problem = ui.restore_turns(wanted, archive(engine), store)
            if problem:
                state.restore_problem = problem
        else:
            state.conversation_id = ui.new_conversation_id()
    if st.query_params.get("c") != state.conversation_id:
        st.query_params["c"] = state.conversation_id


def archive(engine: ui.Engine) -> ui.ReplyArchive:
    return get_archive(str(engine.settings.home))


def new_conversation() -> None:
    st.session_state.conversation_id = ui.new_conversation_id()
    st.session_state.turns = []
    st.session_state.pop("pending", None)
    st.query_params["c"] = st.session_state.conversation_id


def queue_question(text: str) -> None:
    st.session_state.pending = text


def init_policy(engine: ui.Engine) -> None:
    """This session's knobs and providers start at the engine's defaults (kept while research mode is off)."""
    assert engine.base_policy is not None
    for name, value in ui.knob_defaults(engine.base_policy).items():
        st.session_state.setdefault(f"knob_{name}", value)
    for kind, (_options, current) in ui.available_providers(engine.settings).items():
        st.session_state.setdefault(f"provider_{kind}", current)


def reset_knobs(defaults: dict[str, float | int]) -> None:
    """Set every knob back to its default (setting, not popping: popped keys stay stale in a browser)."""
    for name, value in defaults.items():
        st.session_state[f"knob_{name}"] = value


def session_policy(engine: ui.Engine) -> EvidencePolicy:
    assert engine.base_policy is not None
    values = {k.name: st.session_state.get(f"knob_{k.name}") for k in ui.POLICY_KNOBS}
    return ui.policy_from_knobs(engine.base_policy, values)


def url_state(key: str, allowed: list[str], default: str) -> None:
    """A widget's first value from the URL (``?key=value``), when it is one of ``allowed``."""
    state = st.session_state
    if key not in state:
        wanted = st.query_params.get(key)
        state[key] = wanted if wanted in allowed else default
    elif state[key] not in allowed:
        state[key] = default


def to_url(key: str, default: str | None = None) -> None:
    """Write a widget's value into the URL (left out when it is the default), so a link reopens it."""
    value = st.session_state.get(key)
    if value is None or value == default:
        st.query_params.pop(key, None)
    else:
        st.query_params[key] = str(value)


def research_mode() -> bool:
    return bool(st.session_state.get("nghien_cuu", False))


# -- index gate ----------------------------------------------------------------------------------------


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


# -- sidebar -------------------------------------------------------------------------------------------


def sidebar(engine: ui.Engine | None) -> str:
    with st.sidebar:
        st.title(":material/medication: duocthu")
        st.caption("Trợ lý tra cứu thuốc có dẫn chứng — bản demo")
        url_state("trang", [CHAT_PAGE, BROWSE_PAGE], CHAT_PAGE)
        page = st.radio("Trang", [CHAT_PAGE, BROWSE_PAGE], key="trang", label_visibility="collapsed",
                        format_func=PAGE_LABELS.__getitem__, on_change=to_url, args=("trang", CHAT_PAGE))
        st.button("Cuộc trò chuyện mới", key="new_conversation", on_click=new_conversation,
                  icon=":material/add_comment:", width="stretch")
        st.caption("Địa chỉ trang (có mã cuộc trò chuyện) mở lại đúng cuộc trò chuyện này: tải lại trang hay "
                   "gửi cho người khác đều được.")
        st.divider()
        st.toggle("Chế độ nghiên cứu", key="nghien_cuu", bind="query-params",
                  help="Hiện nhà cung cấp, chính sách bằng chứng và cách mỗi câu trả lời được quyết định.")
        if research_mode() and engine is not None and engine.base_policy is not None:
            provider_controls(engine)
            policy_controls(engine)
    return str(page or CHAT_PAGE)


def provider_controls(engine: ui.Engine) -> None:
    st.subheader("Nhà cung cấp")
    for kind, (options, _current) in ui.available_providers(engine.settings).items():
        st.radio(
            ui.PROVIDER_LABELS[kind], options, key=f"provider_{kind}", format_func=ui.provider_name,
            disabled=len(options) < 2 or kind == "embedding", help=ui.PROVIDER_HELP[kind],
            persist_state="session",
        )
    for note in engine.runtime().notes:
        st.caption(f":material/warning: {esc(note)}")


def policy_controls(engine: ui.Engine) -> None:
    assert engine.base_policy is not None
    st.subheader("Chính sách bằng chứng")
    defaults = ui.knob_defaults(engine.base_policy)
    for knob in ui.POLICY_KNOBS:
        st.number_input(
            knob.label, min_value=knob.min_value, max_value=knob.max_value, step=knob.step,
            key=f"knob_{knob.name}", help=knob.help, persist_state="session",
        )
    st.button("Khôi phục mặc định", key="reset_knobs", on_click=reset_knobs, args=(defaults,),
              icon=":material/restart_alt:")
    st.caption("Áp dụng cho lượt hỏi tiếp theo của phiên này; các phiên khác giữ mặc định.")


# -- one turn ------------------------------------------------------------------------------------------


def run_turn(engine: ui.Engine, question: str) -> ui.ShownTurn:
    policy = session_policy(engine)
    providers = {
        "answer": st.session_state.get("provider_answer", engine.settings.answer_provider),
        "rerank": st.session_state.get("provider_rerank", engine.settings.rerank_provider),
        "embedding": engine.settings.embedding_provider,
    }
    turn = ui.ShownTurn(question, policy=dict(ui.knob_defaults(policy)), providers=providers)
    try:
        turn.reply = engine.handle(
            question, st.session_state.conversation_id, policy, providers["answer"], providers["rerank"]
        )
    except Exception as exc:  # the chat keeps working; the message says what happened
        log.exception("turn failed")
        turn.error = f"{type(exc).__name__}: {exc}"
    return turn


def render_turn(index: int, turn: ui.ShownTurn, engine: ui.Engine) -> ui.ShownTurn:
    with st.chat_message("user"):
        st.markdown(esc(turn.question))
    with st.chat_message("assistant"):
        if turn.reply is None and turn.error is None and turn.stored_answer is None:  # a fresh turn
            with st.spinner("Đang tra cứu Dược thư…"):
                turn = run_turn(engine, turn.question)
        if turn.error is not None:
            st.error("Đã xảy ra lỗi khi xử lý câu hỏi này; hãy thử lại hoặc hỏi câu khác. Ứng dụng vẫn hoạt động.")
            if research_mode():
                st.caption(esc(turn.error))
        elif turn.reply is not None:
            render_reply(index, turn, turn.reply, engine)
        else:
            render_stored(turn)
    return turn


def render_stored(turn: ui.ShownTurn) -> None:
    """A turn read back from the conversation store: its text only (the sources stayed with the old process)."""
    st.caption(":material/history: Khôi phục từ lịch sử hội thoại — chỉ còn nội dung chữ, không còn thẻ nguồn.")
    lines = [line for line in (turn.stored_answer or "").split("\n") if line.strip() and line != DEMO_NOTICE]
    st.markdown(esc("\n".join(lines)))


def render_reply(index: int, turn: ui.ShownTurn, reply: AgentReply, engine: ui.Engine) -> None:
    badge = ui.badge_for(reply.outcome, reply.reason, reply.generated)
    st.badge(badge.label, icon=badge.icon, color=badge.color)
    if reply.reason_text:
        st.caption(esc(reply.reason_text))
    doc = ui.build_document(reply, engine.drug_names())
    key = f"t{index}"
    st.html(render.document_html(doc, key))
    pages = {card.number: page_view(engine, card) for card in doc.cards if card.needs_pdf}
    if doc.cards:
        notes = {n: render.page_reference(doc.card(n), view.page, view.image is not None) for n, view in pages.items()}
        st.html(render.cards_html(doc, key, render.page_notes(notes)))
    for number, view in pages.items():
        show_page(view, f"[{number}] {doc.card(number).drug_name} — {doc.card(number).section_title}",
                  f"{key}-page-{number}")
    if research_mode():
        with st.expander("Cách câu trả lời này được quyết định", icon=":material/science:"):
            render_research(index, turn, reply)


def page_view(engine: ui.Engine, card: ui.SourceCard) -> ui.PageView:
    return ui.card_page(card, engine.runtime().store, engine.settings.book_pdf_path)


def show_page(view: ui.PageView, title: str, key: str) -> None:
    """The printed page of a table not yet checked: a thumbnail, and the full page under «Xem trang N»."""
    if view.image is None:
        return
    with st.container(border=True, key=key):
        st.markdown(f"**{esc(title)}** — bảng cần đối chiếu, khung đỏ trên trang {view.page} của sách:")
        st.image(str(view.image), width=320)
        with st.expander(view.label, icon=":material/open_in_full:"):
            st.image(str(view.image), width="stretch")


def render_research(index: int, turn: ui.ShownTurn, reply: AgentReply) -> None:
    st.markdown(f"**Kết quả:** {esc(ui.badge_for(reply.outcome, reply.reason, reply.generated).label)} — "
                f"{esc(reply.reason_text or reply.reason)}")
    st.markdown(f"**Bảng định tuyến:** {esc(ui.rule_words(reply))}")
    if reply.route:
        st.markdown(f"**Tuyến truy xuất:** {esc(ui.ROUTE_TEXT.get(reply.route, reply.route))}")
    st.markdown(f"**Bộ nhớ hội thoại:** {esc(ui.MEMORY_TEXT.get(reply.memory, reply.memory))}")
    rows = ui.frame_rows(reply.frame)
    if rows:
        st.markdown("**Câu hỏi được hiểu là**")
        st.table(rows)
    left, right = st.columns(2)
    for (label, value), column in zip(ui.budget_rows(reply), [left, right, left], strict=False):
        column.metric(label, value)
    st.markdown("**Chính sách bằng chứng của lượt này:** " + esc(", ".join(
        f"{k.label.lower()} {turn.policy.get(k.name)}" for k in ui.POLICY_KNOBS)))
    st.markdown("**Nhà cung cấp:** " + esc(", ".join(
        f"{ui.PROVIDER_LABELS[kind].lower()}: {ui.provider_name(name)}" for kind, name in turn.providers.items())))
    if reply.steps:
        st.markdown(f"**Các bước truy xuất ({len(reply.steps)})**")
        st.code("\n".join(f"{n}. {step}" for n, step in enumerate(reply.steps, start=1)), language=None)
    for failure in reply.failures:
        st.warning(f"Lỗi: {esc(failure)}")
    if reply.evidence:
        st.markdown(f"**Bằng chứng và điểm ({len(reply.evidence)})**")
        st.table(ui.evidence_rows(reply.evidence))
    if reply.omitted_evidence_ids:
        st.markdown("**Bằng chứng bị bỏ (vượt ngân sách bằng chứng):** " + esc(", ".join(reply.omitted_evidence_ids)))
    st.download_button(
        "Tải bản ghi lượt này (JSON)", icon=":material/download:",
        data=ui.trace_json_bytes(reply, {"question": turn.question, "policy": turn.policy,
                                         "providers": turn.providers}),
        file_name=ui.trace_file_name(reply, index + 1), mime="application/json",
        key=f"download_{index}", on_click="ignore",
    )


# -- pages ---------------------------------------------------------------------------------------------


def chat_page(engine: ui.Engine) -> None:
    st.title(":material/forum: Hỏi đáp về thuốc")
    st.warning(BANNER, icon=":material/info:")
    if "index_report" in st.session_state:
        st.success(st.session_state.pop("index_report"))
    if "restore_problem" in st.session_state:
        st.info(st.session_state.pop("restore_problem"))
    typed = st.chat_input(PLACEHOLDER, key="chat_input")
    question = typed or st.session_state.pop("pending", None)
    turns: list[ui.ShownTurn] = st.session_state.turns
    for index, turn in enumerate(turns):
        render_turn(index, turn, engine)
    if question:
        turns.append(render_turn(len(turns), ui.ShownTurn(question), engine))
        archive(engine).put(st.session_state.conversation_id, turns)
    last = turns[-1].reply if turns else None
    if last is not None and last.quick_replies:
        st.caption("Trả lời nhanh:")
        columns = st.columns(min(len(last.quick_replies), 4))
        for j, text in enumerate(last.quick_replies):
            columns[j % len(columns)].button(
                esc(text), key=f"quick_{len(turns)}_{j}", on_click=queue_question, args=(text,), width="stretch",
            )
    if not turns:
        st.markdown("#### Thử một câu hỏi mẫu")
        st.caption("Mỗi câu trả lời trích nguyên văn Dược thư (bản demo), kèm thẻ nguồn ghi mục và trang sách.")
        columns = st.columns(3)
        for j, text in enumerate(ui.EXAMPLE_QUESTIONS):
            columns[j % 3].button(esc(text), key=f"example_{j}", on_click=queue_question, args=(text,),
                                  width="stretch")
    st.caption(FOOTER)


def browse_page(engine: ui.Engine) -> None:
    st.title(":material/menu_book: Tra cứu Dược thư (bản demo)")
    st.warning(BANNER, icon=":material/info:")
    store = engine.runtime().store
    entries = store.drug_catalogue()
    if not entries:
        st.info("Chỉ mục chưa có thuốc nào.")
        return
    catalogue = {entry.drug_id: entry for entry in entries}
    products = get_products(str(engine.settings.home), tuple(sorted(catalogue)))
    left, right = st.columns([1, 2.6], gap="large")
    with left:
        query = st.text_input("Tìm thuốc", key="tim", bind="query-params",
                              placeholder="Tên chung, tên khác hoặc biệt dược…",
                              help="Không phân biệt hoa thường và dấu: «panadol», «ibuprofen», «amoxicilin».")
        matches = ui.search_drugs(entries, query or "", products)
        if not matches:
            st.info(f"Không tìm thấy thuốc nào khớp «{esc(query)}». Thử tên chung (INN) hoặc một biệt dược khác.")
            return
        labels = {m.drug_id: m.display_name if m.matched == m.display_name else f"{m.display_name} — «{m.matched}»"
                  for m in matches}
        st.caption(f"{len(matches)} thuốc" + (" khớp" if query else " trong Dược thư (bản demo)"))
        url_state("thuoc", list(labels), next(iter(labels)))
        with st.container(height=420 if len(matches) > 8 else "content"):
            drug_id = st.radio("Thuốc", list(labels), key="thuoc", format_func=labels.__getitem__,
                               label_visibility="collapsed")
    if drug_id is None or drug_id not in catalogue:
        return
    if st.query_params.get("thuoc") != drug_id:  # the drug shown is in the link, however it was chosen
        st.query_params["thuoc"] = drug_id
    with right:
        render_monograph(engine, catalogue[drug_id])
    st.caption(FOOTER)


def render_monograph(engine: ui.Engine, entry) -> None:  # noqa: ANN001 - a DrugEntry
    sections = ui.monograph_sections(engine.runtime().store, entry.drug_id)
    st.subheader(esc(entry.display_name))
    refs = sections[0].source_refs if sections else ()
    st.caption(
        f"Tên khác và biệt dược: {esc(', '.join(entry.aliases) or '—')} · ATC: {esc(', '.join(entry.atc_codes) or '—')}"
        + (f" · {esc('; '.join(refs))}" if refs else "")
    )
    quarantined = [s for s in sections if s.needs_visual_check]
    if quarantined:
        st.warning("Bảng chưa đối chiếu với bản in ở mục: " + esc(", ".join(s.title for s in quarantined))
                   + " — kiểm tra trang sách trước khi dùng số liệu.", icon=":material/picture_as_pdf:")
        for section in quarantined:
            card = ui.SourceCard(0, entry.drug_id, entry.display_name, section.title, (), section.source_refs,
                                 section.key)
            view = page_view(engine, card)
            if view.image is not None:
                with st.expander(f"{view.label} — {section.title}", icon=":material/picture_as_pdf:"):
                    st.image(str(view.image), width="stretch")
    note = "bảng chưa đối chiếu với bản in: kiểm tra trang sách trước khi dùng số liệu."
    st.html("".join(
        render.section_html(s.title, ui.section_meta(s),
                            [(h.chunk.part_index, h.chunk.text, h.chunk.needs_visual_check) for h in s.parts], note,
                            records=ui.record_rows(s))
        for s in sections
    ))


def main() -> None:
    st.html(render.CSS + PAGE_CSS)
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
    init_session(engine if ready else None)
    if ready and engine is not None:
        init_policy(engine)
    page = sidebar(engine if ready else None)
    if not ready or engine is None:
        return
    try:
        (browse_page if page == BROWSE_PAGE else chat_page)(engine)
    except Exception as exc:  # keep the app alive and explain, never a traceback
        log.exception("page failed")
        st.error(f"Đã xảy ra lỗi khi hiển thị trang: {type(exc).__name__}. Hãy tải lại trang.")


main()
