"""The research mode's view of a turn: the routing rule in words, the frame as rows, scores, budget, trace."""

from __future__ import annotations

import json
import re
from typing import Any

from duocthu.agent.reply import AgentReply, EvidenceView
from duocthu.sections import SECTION_TITLES

ROUTE_TEXT: dict[str, str] = {
    "section": "mục được hỏi (lọc chính xác)",
    "pooled": "gộp từ mục lân cận (từ khóa)",
    "drug": "toàn bộ thuốc, theo thứ tự sách",
    "overview": "tổng quan thuốc",
    "free_form": "câu hỏi tự do (xếp hạng lại)",
    "indication": "tra theo chỉ định",
    "reverse_lookup": "tra thuốc theo chỉ định",
    "safety": "kiểm tra an toàn cho người bệnh",
    "interaction": "tương tác giữa các thuốc",
    "interaction_name": "tìm tên thuốc ngoài sách trong mục Tương tác thuốc",
    "interaction_names": "tìm tên thuốc ngoài sách trong mục Tương tác thuốc",
    "retrieval_only": "chỉ truy xuất",
}

# The routing table (duocthu/agent/routing.py) row by row, in words a stakeholder reads.
RULE_WORDS: dict[int, str] = {
    1: "Câu nhập không giống câu hỏi (mã, ký hiệu, gõ bừa) hoặc cố đổi chỉ dẫn của trợ lý → từ chối.",
    17: "Có ý định tự hại, hoặc hỏi liều/số lượng sau dấu hiệu tự hại → không đưa liều hay số lượng; gọi 115.",
    18: "Mô tả dấu hiệu cấp cứu đang xảy ra → khuyên cấp cứu (115), không gợi ý thuốc.",
    19: "Đã dùng quá liều → «gọi 115» trước, rồi mục Quá liều và xử trí của thuốc.",
    20: "Hỏi liều một chế phẩm có thành phần không có trong sách → từ chối, nêu tên thành phần đó.",
    21: "Tên thuốc gần giống nhiều thuốc của sách, hoặc còn xa → hỏi lại, đưa các tên để chọn.",
    22: "Hỏi liều hoặc có dùng được không, mà mục Chống chỉ định áp dụng cho người bệnh → trả lời bằng chống "
        "chỉ định, không đưa liều.",
    2: "Hỏi liều nhưng chưa rõ người lớn hay trẻ em → hỏi lại đối tượng.",
    3: "Hỏi liều cho trẻ nhưng thiếu tuổi hoặc cân nặng → hỏi lại phần còn thiếu.",
    4: "Phần hiểu câu hỏi cần thêm thông tin → hỏi lại (từ chối nếu phần hiểu câu hỏi bị lỗi).",
    5: "Tìm thuốc theo bệnh nhưng tên bệnh quá rộng → hỏi lại bệnh cụ thể.",
    6: "Tìm thuốc theo chống chỉ định hoặc theo tác dụng gây bệnh → từ chối (chỉ tra theo chỉ định).",
    7: "Tìm thuốc theo bệnh, có tên bệnh → liệt kê các thuốc có chỉ định đó.",
    8: "Tìm thuốc theo bệnh nhưng không nêu bệnh → hỏi lại.",
    9: "Hỏi thuốc nào chống chỉ định hoặc gây ra một bệnh → từ chối (chưa hỗ trợ).",
    10: "Nêu thuốc nhưng không nói muốn biết gì → hỏi lại.",
    23: "Nêu thuốc nhưng chưa chắc hỏi mục nào → hỏi lại, đưa các mục có khả năng nhất.",
    11: "Lời chào, cảm ơn hoặc hỏi về trợ lý → chào lại.",
    12: "Không liên quan đến thuốc hay y khoa → từ chối.",
    24: "Câu hỏi sức khỏe không nêu thuốc và không hỏi thuốc → từ chối (chỉ trả lời về thuốc).",
    13: "Chỉ nêu thuốc không có trong sách → từ chối, nêu tên thuốc đó.",
    14: "Không nêu thuốc nào → hỏi lại thuốc nào.",
    15: "Hỏi tương tác của hai thuốc trở lên trong sách → trích mục Tương tác thuốc của từng thuốc.",
    25: "Hỏi tương tác với một thuốc ngoài sách → tìm tên đó trong mục Tương tác thuốc và Chống chỉ định.",
    26: "Hỏi điều Dược thư không nêu (giá, nơi bán, hết hàng, thu hồi, so sánh biệt dược, bảo hiểm) → nói sách không nêu, "
        "dược sĩ có thể giúp; trừ khi chuyên luận của thuốc tự nói đến (một lần rút khỏi thị trường).",
    27: "Hỏi liều hoặc có dùng được không, khi điều người bệnh nói chạm đến một chống chỉ định mà chưa đủ để quyết định "
        "(suy thận chưa có độ thanh thải, dị ứng chưa rõ thuốc, trẻ sơ sinh chưa rõ đủ tháng) → trích chống chỉ định, "
        "không nêu liều, hỏi đúng một câu quyết định.",
    16: "Các trường hợp còn lại (hỏi về một thuốc) → trích mục được hỏi, hoặc tổng quan khi chỉ nêu tên thuốc.",
}


def rule_words(reply: AgentReply) -> str:
    """The routing row that decided this turn, in words."""
    if reply.rule is None:
        return "Không qua bảng định tuyến: kiểm tra đầu vào hoặc chế độ chỉ truy xuất quyết định trước."
    return f"Quy tắc số {reply.rule}: {RULE_WORDS.get(reply.rule, reply.rule_condition or '')}"


def score_meaning(score: float, score_kind: str, route: str = "") -> str:
    """What a score means in words: scores of different kinds are never comparable."""
    if score_kind == "exact":
        if route == "drug":
            return f"{score:.1f} theo cấu trúc (lấy theo thuốc, thứ tự sách — không phải độ tương đồng)"
        return f"{score:.1f} theo cấu trúc (khớp mục chính xác)"
    if score_kind == "similarity":
        return f"{score:.3f} độ tương đồng cosin (e5) — chỉ so được với điểm cùng loại"
    if score_kind == "lexical_count":
        return f"{score:g} số từ khóa khác nhau của câu hỏi khớp trong đoạn (gộp từ khóa)"
    if score_kind == "bm25":
        return f"{score:.2f} điểm BM25 (từ khóa có trọng số)"
    if score_kind == "rrf":
        return f"{score:.4f} hợp hạng RRF (vector + BM25)"
    if score_kind == "phrase":
        return f"{score:.3f} khớp cụm từ chỉ định: 1 + 1/(1+vị trí) + 1/(1+số từ/40)"
    if score_kind == "rerank":
        return f"{score:.3f} điểm xếp hạng lại (chỉ để sắp thứ tự)"
    return f"{score:g} ({score_kind})"


def evidence_rows(evidence: list[EvidenceView]) -> list[dict[str, Any]]:
    """One row per evidence item for the research table (the text itself is on the source cards)."""
    return [
        {
            "#": i,
            "Thuốc": e.drug_id,
            "Mục": e.section_title,
            "Phần": e.part_index + 1,
            "Điểm": e.score,
            "Ý nghĩa điểm": score_meaning(e.score, e.score_kind, e.route),
            "Tuyến": ROUTE_TEXT.get(e.route, e.route),
            "Nguồn": "; ".join(e.source_refs),
            "Cần đối chiếu PDF": "có — xem PDF" if e.requires_visual_check else "không",
        }
        for i, e in enumerate(evidence, start=1)
    ]


_TURN_TYPES = {
    "drug_attribute": "hỏi một mục của thuốc", "drug_overview": "tổng quan thuốc", "dosing_calc": "hỏi liều",
    "interaction": "tương tác thuốc", "condition_to_drug": "tìm thuốc theo bệnh",
    "symptom_to_drug": "tìm thuốc theo triệu chứng", "condition_relation": "thuốc chống chỉ định/gây bệnh",
    "smalltalk": "chào hỏi", "out_of_scope": "ngoài phạm vi", "medical_question": "câu hỏi y khoa không về thuốc",
    "crisis": "khủng hoảng", "emergency": "cấp cứu", "overdose_taken": "đã dùng quá liều",
}
_POPULATIONS = {"adult": "người lớn", "pediatric": "trẻ em", "elderly": "người cao tuổi"}


def _join(values: Any) -> str:
    return ", ".join(str(v) for v in values) if values else ""


def frame_rows(frame: dict[str, Any] | None) -> list[dict[str, str]]:
    """The QueryFrame as (field in words, value) rows; empty fields are left out."""
    if not frame:
        return []
    patient = frame.get("patient") or {}
    rows: list[tuple[str, str]] = [
        ("Loại câu hỏi", _TURN_TYPES.get(frame.get("turn_type") or "", frame.get("turn_type") or "")),
        ("Thuốc trong sách", _join(frame.get("drugs"))),
        ("Thuốc không có trong sách", _join(frame.get("unknown_drugs"))),
        ("Cách hiểu tên thuốc", _join(f"«{r.get('surface')}» → {r.get('drug_id')}" for r in frame.get("readings") or [])),
        ("Mục được hỏi", SECTION_TITLES.get(frame.get("section_key") or "", "")),
        ("Mục có thể được hỏi", _join(SECTION_TITLES.get(k, k) for k in frame.get("section_candidates") or [])),
        ("Điều muốn biết", frame.get("attribute") or ""),
        ("Con số được hỏi (đơn vị)", frame.get("asks_number") or ""),
        ("Đối tượng", _POPULATIONS.get(frame.get("population") or "", "")),
        ("Tuổi", frame.get("age_text") or ""),
        ("Cân nặng", f"{frame['weight_kg']:g} kg" if frame.get("weight_kg") else ""),
        ("Đường dùng", frame.get("route") or ""),
        ("Bệnh / triệu chứng", frame.get("indication") or frame.get("condition") or ""),
        ("Bệnh nền", _join(patient.get("conditions"))),
        ("Thuốc đang dùng", _join([*patient.get("current_medications", []), *patient.get("other_medications", [])])),
        ("Mang thai", ("có" + (f", 3 tháng thứ {patient['trimester']}" if patient.get("trimester") else ""))
         if patient.get("pregnant") else ""),
        ("Cho con bú", "có" if patient.get("breastfeeding") else ""),
        ("Cần hỏi lại", frame.get("clarify_reason") or ""),
        ("Độ tin cậy của mô hình ý định", f"{frame['intent_confidence']:.2f}"
         if isinstance(frame.get("intent_confidence"), int | float) else ""),
        ("Lấy từ lượt trước", _join(frame.get("inherited"))),
        ("Lỗi phần hiểu câu hỏi", frame.get("understanding_error") or ""),
    ]
    return [{"Trường": name, "Giá trị": value} for name, value in rows if value]


def budget_rows(reply: AgentReply) -> list[tuple[str, str]]:
    """The turn's time and model-call budget, in words."""
    budget = reply.budget
    rows = [("Thời gian xử lý", f"{float(budget.get('elapsed_ms', 0)):.0f} ms")]
    if "llm_calls" in budget:
        rows.append(("Lượt gọi mô hình ngôn ngữ", f"{int(budget['llm_calls'])}"
                     + (f" / {int(budget['max_llm_calls'])}" if "max_llm_calls" in budget else "")))
    if "max_wall_clock_ms" in budget:
        rows.append(("Giới hạn thời gian", f"{float(budget['max_wall_clock_ms']) / 1000:.0f} s"))
    return rows


MEMORY_TEXT = {"ok": "đã ghi vào kho hội thoại", "unavailable": "kho hội thoại không phản hồi — lượt này không được nhớ",
               "none": "không dùng (chế độ chỉ truy xuất)"}


def trace_json_bytes(reply: AgentReply, extra: dict[str, Any] | None = None) -> bytes:
    """The turn's full record as UTF-8 JSON (Vietnamese kept readable)."""
    record = reply.to_json_dict()
    if extra:
        record = {**record, **extra}
    return json.dumps(record, ensure_ascii=False, indent=2).encode("utf-8")


def trace_file_name(reply: AgentReply, turn_number: int) -> str:
    return f"duocthu-{reply.conversation_id[:8]}-luot-{turn_number}.json"


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=&^])")


def escape_markdown(text: str) -> str:
    r"""Text that Streamlit's Markdown shows literally: no emphasis, links, HTML, LaTeX or directives.

    Line breaks are kept (a hard break per newline).

    >>> escape_markdown("**x** <b>")
    '\\*\\*x\\*\\* \\<b\\>'
    """
    escaped = _MARKDOWN_SPECIAL.sub(r"\\\1", text)
    return "  \n".join(escaped.splitlines()) if "\n" in escaped else escaped
