"""The answer's text from its blocks (duocthu.agent.render), and the dispatch of every action."""

from __future__ import annotations

from duocthu.agent.actions import HANDLERS
from duocthu.agent.answer import Answer, abstained
from duocthu.agent.messages import DEMO_NOTICE, GENERATED_NOTHING
from duocthu.agent.render import render_text
from duocthu.agent.routing import Action
from duocthu.types import (
    Chunk,
    ChunkKind,
    Closing,
    DrugSafety,
    Hit,
    Notice,
    Outcome,
    Passages,
    Prose,
    Quote,
    QuoteList,
    SafetyBlock,
    SafetyItem,
    ScoreKind,
    VerifyPdf,
)


def hit(section: str, title: str, text: str, part: int = 0, quarantined: bool = False) -> Hit:
    chunk = Chunk(Chunk.make_doc_id("thuoc_a", section, part), "thuoc_a", "Thuốc A", section, title, part,
                  ChunkKind.PROSE, text, text.lower(), (f"Thuốc A, tr. {10 + part}",), requires_visual_check=quarantined)
    return Hit(chunk, 1.0, ScoreKind.EXACT, "section")


CI = hit("chong_chi_dinh", "Chống chỉ định", "Loét dạ dày tiến triển.")
DOSE = hit("lieu_luong_va_cach_dung", "Liều lượng và cách dùng", "Người lớn: 500 mg.\n| Trẻ | 10 mg/kg |", part=1,
           quarantined=True)


def test_an_answer_about_the_book_reads_notices_warning_safety_heading_quotes_sources_notice():
    answer = Answer(
        outcome=Outcome.VERIFY_PDF, reason="visual_verification_required", evidence=(CI, DOSE),
        blocks=(
            Notice("(«thuoc a»: hiểu là Thuốc A.)"),
            VerifyPdf((DOSE.doc_id,)),
            SafetyBlock(("loét dạ dày", "70 tuổi"), (DrugSafety("Thuốc A", (SafetyItem(
                "Chống chỉ định", ("loét dạ dày",), "Loét dạ dày tiến triển.", CI.doc_id, True),), ("70 tuổi",)),)),
            Prose("Theo Dược thư (bản demo), mục «Liều lượng và cách dùng» của Thuốc A:"),
            QuoteList("Người lớn", (Quote("Người lớn: 500 mg.", (DOSE.doc_id,), heading="Uống:"),)),
            QuoteList(None, (Quote("| Trẻ | 10 mg/kg |", (DOSE.doc_id, "not_in_evidence")),)),
            QuoteList("Người lớn", (Quote("Lặp lại.", (CI.doc_id, DOSE.doc_id)),)),
        ),
        closing=Closing.SOURCES,
    )
    assert render_text(answer).split("\n") == [
        "(«thuoc a»: hiểu là Thuốc A.)",
        "⚠ Cần đối chiếu bản in: bằng chứng có bảng chưa được kiểm tra với bản PDF (Thuốc A — Liều lượng và cách "
        "dùng — Thuốc A, tr. 11). Không dùng số liệu trong bảng khi chưa kiểm tra.",
        "⚠ Lưu ý cho trường hợp này (loét dạ dày, 70 tuổi):",
        "- Chống chỉ định — Thuốc A (loét dạ dày): «Loét dạ dày tiến triển.» [1]",
        "- Thuốc A: không thấy trong Dược thư (bản demo) nội dung nào về 70 tuổi — điều này không có nghĩa là an toàn.",
        "Theo Dược thư (bản demo), mục «Liều lượng và cách dùng» của Thuốc A:",
        "Người lớn:",
        "- Uống: Người lớn: 500 mg. [2]",
        "- | Trẻ | 10 mg/kg | [2]",
        "- Lặp lại. [1][2]",  # the same group goes on: its heading is not written twice
        "Nguồn:",
        "[1] Thuốc A — Chống chỉ định, phần 1; Thuốc A, tr. 10",
        "[2] Thuốc A — Liều lượng và cách dùng, phần 2; Thuốc A, tr. 11 (bảng chưa đối chiếu bản in)",
        DEMO_NOTICE,
    ]


def test_numbers_follow_the_evidence_order_not_the_block_order():
    # A list answer numbers its quotes before the safety block above them (as the sources list reads).
    answer = Answer(outcome=Outcome.ANSWERABLE, reason="grounded_evidence_available", evidence=(DOSE, CI),
                    blocks=(SafetyBlock(("x",), (DrugSafety("Thuốc A", (SafetyItem("Thận trọng", ("x",), "q", CI.doc_id,
                                                                                   False),)),)),
                            QuoteList(None, (Quote("Người lớn: 500 mg.", (DOSE.doc_id,)),))))
    assert render_text(answer).split("\n") == ["⚠ Lưu ý cho trường hợp này (x):", "- Thận trọng — Thuốc A (x): «q» [2]",
                                               "- Người lớn: 500 mg. [1]"]


def test_messages_of_the_assistant_end_as_they_should():
    assert render_text(abstained("no_drug", "Chưa rõ.")) == "Chưa rõ."
    greeting = Answer(outcome=Outcome.ANSWERABLE, reason="smalltalk", blocks=(Prose("Xin chào!"),),
                      closing=Closing.INLINE)
    assert render_text(greeting) == f"Xin chào! {DEMO_NOTICE}"
    passages = Answer(outcome=Outcome.ANSWERABLE, reason="grounded_evidence_available", evidence=(CI,),
                      blocks=(Notice(GENERATED_NOTHING), Passages((CI.doc_id,))), closing=Closing.NOTICE)
    assert render_text(passages) == (f"{GENERATED_NOTHING}\n\n[1] Thuốc A — Chống chỉ định: Loét dạ dày tiến triển.\n"
                                     f"{DEMO_NOTICE}")


def test_every_action_of_the_routing_table_has_a_handler():
    assert set(HANDLERS) == set(Action)
