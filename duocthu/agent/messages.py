"""What the user reads, in plain Vietnamese: every sentence the assistant writes, as constants and templates.

Clarify questions, abstentions and reason texts; the sentences an answer is built around (notices,
headings, the safety block's titles and notes, the sources list); the input checks. Code elsewhere in
``duocthu.agent`` builds typed blocks and calls these; it writes no Vietnamese of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from duocthu.retrieval.safety import FindingKind
from duocthu.sections import SECTION_TITLES
from duocthu.text import fold
from duocthu.types import Hit
from duocthu.understanding.frame import Population, QueryFrame

DEMO_NOTICE = (
    "Dữ liệu minh họa do dự án duocthu biên soạn, không phải văn bản Dược thư Quốc gia, "
    "không dùng cho quyết định lâm sàng."
)

SMALLTALK_REPLY = (  # the demo notice follows it on the same line (``Closing.INLINE``)
    "Xin chào! Tôi là trợ lý tra cứu thuốc của duocthu — một chương trình máy tính, không phải bác sĩ hay dược sĩ. "
    "Bạn có thể hỏi về liều dùng, chống chỉ định, tác dụng phụ, tương tác thuốc… của một thuốc trong Dược thư "
    "(bản demo), hoặc hỏi thuốc nào có chỉ định cho một bệnh."
)

REASON_TEXT: dict[str, str] = {
    "grounded_evidence_available": "Có bằng chứng trong Dược thư (bản demo); câu trả lời trích nguyên văn.",
    "contraindicated_for_patient": "Dược thư (bản demo) chống chỉ định thuốc này với người bệnh được mô tả.",
    "crisis": "Có dấu hiệu bạn đang gặp khủng hoảng: không đưa liều hay số lượng thuốc; hãy gọi 115.",
    "emergency": "Dấu hiệu cấp cứu: cần gọi 115 hoặc đến cơ sở y tế ngay, không tự dùng thuốc.",
    "overdose_taken": "Đã dùng quá liều: gọi 115 hoặc đến cơ sở y tế ngay; kèm mục Quá liều và xử trí.",
    "medical_out_of_scope": "Câu hỏi y khoa không về một thuốc: duocthu chỉ trả lời về thuốc trong Dược thư (bản demo).",
    "ambiguous_drug_name": "Tên thuốc gần giống nhiều thuốc hoặc không đủ gần: cần bạn chọn.",
    "ambiguous_intent": "Chưa rõ bạn muốn biết mục nào của thuốc: cần bạn chọn.",
    "number_not_stated": "Mục liên quan không nêu con số được hỏi; không đưa con số khác thay thế.",
    "visual_verification_required": "Bằng chứng có bảng chưa được đối chiếu với bản in: cần kiểm tra trang PDF.",
    "smalltalk": "Lời chào hoặc câu hỏi về trợ lý — không cần tra cứu.",
    "out_of_scope": "Ngoài phạm vi: duocthu chỉ trả lời câu hỏi về thuốc trong Dược thư (bản demo).",
    "not_covered_by_book": "Dược thư (bản demo) không có thông tin này (giá, nơi bán, hàng hóa, thu hồi, biệt dược, "
                           "bảo hiểm): dược sĩ có thể giúp.",
    "drug_not_in_formulary": "Thuốc hoặc thành phần được hỏi không có trong Dược thư (bản demo).",
    "no_drug": "Chưa rõ bạn hỏi về thuốc nào.",
    "missing_attribute": "Chưa rõ bạn muốn biết thông tin gì về thuốc.",
    "missing_population": "Cần biết người dùng thuốc là người lớn hay trẻ em để chọn đúng liều.",
    "missing_pediatric_age_or_weight": "Liều cho trẻ phụ thuộc cả tuổi và cân nặng: cần đủ cả hai.",
    "needs_more_info": "Câu hỏi cần thêm thông tin.",
    "contraindication_undetermined": "Một chống chỉ định có thể áp dụng cho người bệnh; cần thêm một thông tin để biết.",
    "understanding_unavailable": "Lỗi hệ thống khi phân tích câu hỏi; không đoán thay bạn.",
    "ambiguous_condition": "Tên bệnh/triệu chứng quá rộng để tra chỉ định.",
    "unsupported_reverse_relation": "Chỉ hỗ trợ tra thuốc theo chỉ định, không theo chống chỉ định hay tác dụng gây bệnh.",
    "no_condition": "Chưa rõ triệu chứng cần tra.",
    "no_indication": "Chưa rõ bệnh cần tra.",
    "no_interaction_evidence": "Không thấy thông tin tương tác trong mục Tương tác thuốc của từng thuốc.",
    "no_indication_evidence": "Không thấy thuốc nào có chỉ định này trong Dược thư (bản demo).",
    "insufficient_safety_evidence": "Không có bằng chứng an toàn cho hoàn cảnh của người bệnh.",
    "parent_hydration_failed": "Không tìm thấy đoạn văn bằng chứng.",
    "missing_provenance": "Bằng chứng thiếu nguồn (trang sách) nên không dùng.",
    "insufficient_retrieval_score": "Không tìm thấy bằng chứng đủ liên quan.",
    "clarify_loop_exhausted": "Đã hỏi lại quá nhiều lần liên tiếp.",
    "numeric_grounding_failed": "Câu trả lời có con số không có trong bằng chứng: đã bị chặn.",
    "cited_unknown_evidence": "Câu trả lời trích dẫn bằng chứng không được cung cấp: đã bị chặn.",
    "uncited_claim": "Câu trả lời có ý không trích dẫn bằng chứng: đã bị chặn.",
    "drug_outside_candidates": "Câu trả lời nêu thuốc ngoài danh sách tìm được: đã bị chặn.",
    "entailment_failed": "Câu trả lời không được bằng chứng hỗ trợ: đã bị chặn.",
    "insufficient_evidence": "Mô hình báo bằng chứng không đủ để trả lời.",
    "generation_unavailable": "Dịch vụ tạo câu trả lời lỗi hoặc quá hạn; không trả lời thay bằng phỏng đoán.",
    "budget_exhausted": "Hết ngân sách thời gian/lượt gọi mô hình cho lượt này.",
    "backend_unavailable": "Kho chỉ mục (Qdrant) không phản hồi.",
    "index_missing": "Chưa có chỉ mục: hãy chạy `duocthu index`.",
    "invalid_input": "Dữ liệu vào không hợp lệ.",
    "empty_input": "Câu hỏi trống.",
    "input_too_long": "Câu hỏi quá dài.",
    "internal_error": "Lỗi hệ thống không mong đợi; lượt này không được trả lời.",
}

QUOTES_CHECKED_TEXT = "Có bằng chứng trong Dược thư (bản demo) và câu trả lời đã qua kiểm tra trích dẫn."
RETRIEVAL_ONLY_TEXT = "Chế độ chỉ truy xuất: không tạo câu trả lời, các đoạn Dược thư (bản demo) được trích nguyên văn."


def reason_text(reason: str, quotes_checked: bool = False, generated: bool = True) -> str:
    """The one-line reason shown with a reply; "đã qua kiểm tra trích dẫn" only when every quote was checked."""
    if not generated and reason in ("grounded_evidence_available", "visual_verification_required"):
        return RETRIEVAL_ONLY_TEXT
    if reason == "grounded_evidence_available" and quotes_checked:
        return QUOTES_CHECKED_TEXT
    return REASON_TEXT.get(reason, "")


_CONDITION_SUGGESTIONS = {
    "dau": ("Đau đầu", "Đau răng", "Đau bụng kinh", "Đau khớp"),
    "viem": ("Viêm họng", "Viêm phổi mắc phải cộng đồng", "Viêm khớp dạng thấp", "Viêm mũi dị ứng"),
    "nhiem khuan": ("Nhiễm khuẩn đường tiết niệu", "Viêm phổi mắc phải cộng đồng", "Nhiễm khuẩn da và mô mềm"),
    "nhiem trung": ("Nhiễm khuẩn đường tiết niệu", "Viêm phổi mắc phải cộng đồng", "Nhiễm khuẩn da và mô mềm"),
    "di ung": ("Viêm mũi dị ứng", "Mày đay", "Ngứa"),
    "nhiem nam": ("Nhiễm nấm Candida",),
}


def vi_number(value: float) -> str:
    """18.5 → "18,5" (Vietnamese decimal comma)."""
    return f"{value:g}".replace(".", ",")


def clarify_question(
    reason: str, frame: QueryFrame, drug_name: str | None, drug_names: Mapping[str, str] | None = None
) -> tuple[str, tuple[str, ...]]:
    drug = drug_name or "thuốc này"
    drug_names = drug_names or {}
    if reason == "missing_population":
        return f"Bạn hỏi liều {drug} cho người lớn hay trẻ em?", ("Người lớn", "Trẻ em")
    if reason == "missing_pediatric_age_or_weight":
        if frame.weight_kg is not None and frame.age_text is None:
            return f"Bé nặng {vi_number(frame.weight_kg)} kg, vậy bé bao nhiêu tuổi?", ()
        if frame.age_text is not None and frame.weight_kg is None:
            return f"Bé {frame.age_text}, vậy bé nặng bao nhiêu kg?", ()
        return "Bé bao nhiêu tuổi và nặng bao nhiêu kg?", ()
    if reason == "missing_attribute":
        return (
            f"Bạn muốn biết thông tin gì về {drug}?",
            ("Liều dùng", "Tác dụng phụ", "Chống chỉ định", "Tương tác thuốc", "Dùng khi mang thai"),
        )
    if reason == "ambiguous_condition":
        condition = frame.condition or ""
        suggestions = _CONDITION_SUGGESTIONS.get(fold(condition), ())
        return f"«{condition}» khá rộng — bạn muốn tìm thuốc cho tình trạng cụ thể nào?", suggestions
    if reason in ("no_condition", "no_indication"):
        return "Bạn muốn tìm thuốc cho bệnh hoặc triệu chứng nào?", ("Tăng huyết áp", "Sốt", "Đau đầu")
    if reason == "no_drug":
        return "Bạn hỏi về thuốc nào? (ví dụ: paracetamol, amoxicilin, metformin)", ()
    if reason == "ambiguous_drug_name":
        mention = frame.ambiguous_names[0] if frame.ambiguous_names else None
        names = tuple(drug_names.get(d, d) for d in (mention.candidates if mention else [])[:4])
        typed = f"«{mention.surface}»" if mention else "tên thuốc này"
        if not names:
            return f"Không tìm thấy {typed} trong Dược thư (bản demo). Bạn kiểm tra lại tên thuốc giúp nhé?", ()
        return f"Không chắc {typed} là thuốc nào trong Dược thư (bản demo). Có phải bạn hỏi về một trong các thuốc sau?", names
    if reason == "ambiguous_intent":
        titles = tuple(SECTION_TITLES[k] for k in frame.section_candidates[:3])
        return f"Bạn muốn biết mục nào của {drug}?", titles
    if frame.clarify_reason == "unresolved_second_drug":
        return f"Bạn muốn hỏi {drug} dùng chung với thuốc nào? Hãy cho biết tên thuốc (hoạt chất hoặc biệt dược).", ()
    return f"Bạn có thể nói rõ hơn câu hỏi về {drug} không?", ()


CRISIS_REPLY = (
    "Mình rất tiếc khi bạn đang phải trải qua cảm giác này, và mình muốn bạn được an toàn ngay lúc này. "
    "Mình không thể đưa ra liều hay số lượng thuốc. Nếu bạn đã uống thuốc hoặc đang có ý định làm hại bản thân, "
    "hãy gọi ngay 115 hoặc đến khoa cấp cứu gần nhất. Ngay bây giờ, hãy gọi hoặc nhắn cho một người bạn tin "
    "tưởng — người thân, bạn bè, thầy cô — để họ ở cạnh bạn, và để thuốc xa tầm tay. Bạn không phải một mình "
    "vượt qua chuyện này; bác sĩ và chuyên gia tâm lý có thể giúp bạn."
)
EMERGENCY_REPLY = (
    "Những dấu hiệu bạn mô tả có thể là tình trạng cấp cứu. Hãy gọi ngay 115 hoặc đưa người bệnh đến khoa cấp "
    "cứu gần nhất. Trong lúc chờ, không tự dùng thêm thuốc trừ khi nhân viên y tế hướng dẫn; nếu có, mang theo "
    "các thuốc người bệnh đang dùng. duocthu không gợi ý thuốc cho tình huống cấp cứu."
)
OVERDOSE_FIRST_LINE = (
    "Nếu đã uống quá liều: gọi ngay 115 hoặc đến cơ sở y tế gần nhất, mang theo vỏ hộp/vỉ thuốc; không tự gây "
    "nôn nếu chưa được nhân viên y tế hướng dẫn."
)
MEDICAL_OUT_OF_SCOPE_REPLY = (
    "duocthu chỉ trả lời về các thuốc trong Dược thư (bản demo): liều dùng, chống chỉ định, tác dụng phụ, tương "
    "tác… Câu hỏi về triệu chứng, chẩn đoán, mức độ nặng, xét nghiệm hay chế độ ăn cần được bác sĩ khám và tư "
    "vấn. Nếu có dấu hiệu cấp cứu (khó thở, đau ngực, co giật, lơ mơ, nôn ra máu…) hãy gọi 115. Nếu bạn muốn "
    "biết thuốc nào có chỉ định cho một bệnh, hãy hỏi: «Thuốc nào trị …?»."
)


# Quick replies for the questions that decide a contraindication left open (retrieval/reasoning.py asks them).
_DECIDING_REPLIES: dict[str, tuple[str, ...]] = {
    "sinh đủ tháng hay sinh non": ("Sinh đủ tháng", "Sinh non"),
    "vàng da": ("Không vàng da", "Có vàng da"),
    "dị ứng với thuốc nào": ("Penicilin", "Cephalosporin", "Không nhớ tên thuốc"),
}


def undetermined_question(questions: Sequence[str | None], drug: str | None) -> tuple[str, tuple[str, ...]]:
    """The one question that decides a contraindication the patient's facts leave open, with its quick replies."""
    asked = next((q for q in questions if q), None)
    if asked is None:
        asked = f"Bạn cho biết thêm về tình trạng người bệnh để kiểm tra chống chỉ định của {drug or 'thuốc này'}?"
    replies = next((r for key, r in _DECIDING_REPLIES.items() if key in asked.lower()), ())
    lead = f"Trước khi nói về liều hay việc dùng {drug or 'thuốc này'}, cần biết thêm một điều: "
    return lead + asked, replies


def not_in_book_message(names: Sequence[str], suggestions: Mapping[str, str], drug_names: Mapping[str, str]) -> str:
    listed = ", ".join(f"«{n}»" for n in names)
    text = (
        f"{listed} không có trong Dược thư (bản demo) của duocthu, nên duocthu không trả lời thay bằng một "
        "thuốc khác. Hãy kiểm tra lại tên thuốc (hoạt chất hoặc biệt dược), hoặc hỏi dược sĩ."
    )
    offered = [drug_names.get(d, d) for name, d in suggestions.items() if name in names]
    if offered:
        text += " Tên gần giống trong Dược thư: " + ", ".join(dict.fromkeys(offered)) + " (là thuốc khác)."
    return text


def abstain_message(
    reason: str, frame: QueryFrame | None = None, detail: str = "", drug_names: Mapping[str, str] | None = None
) -> str:
    if reason == "drug_not_in_formulary" and frame is not None:
        names = list(frame.unknown_drugs) + [n for p in frame.products for n in p.uncovered]
        return not_in_book_message(list(dict.fromkeys(names)), frame.suggestions, drug_names or {})
    if reason == "crisis":
        return CRISIS_REPLY
    if reason == "emergency":
        return EMERGENCY_REPLY
    if reason == "overdose_taken":
        return OVERDOSE_FIRST_LINE + " duocthu không nhận ra thuốc đã uống trong Dược thư (bản demo)."
    if reason == "medical_out_of_scope":
        return MEDICAL_OUT_OF_SCOPE_REPLY
    if reason == "out_of_scope":
        return (
            "Xin lỗi, tôi chỉ trả lời câu hỏi về thuốc trong Dược thư (bản demo), ví dụ liều dùng, chống chỉ "
            "định, tác dụng phụ hay tương tác thuốc."
        )
    if reason == "not_covered_by_book":
        return not_covered_message(frame.uncovered_topic if frame else None,
                                   [(drug_names or {}).get(d, d) for d in (frame.drugs if frame else [])])
    if reason == "clarify_loop_exhausted":
        return (
            "Tôi đã hỏi lại nhiều lần mà vẫn chưa đủ thông tin. Hãy viết lại toàn bộ câu hỏi trong một tin "
            "nhắn (tên thuốc, người dùng, tuổi, cân nặng…) hoặc bắt đầu cuộc trò chuyện mới."
        )
    if reason == "unsupported_reverse_relation":
        return (
            "duocthu chỉ tra được thuốc theo chỉ định (thuốc nào được chỉ định cho một bệnh). Câu hỏi thuốc nào "
            "chống chỉ định, cần thận trọng hay gây ra một tình trạng chưa được hỗ trợ — hãy hỏi theo từng thuốc."
        )
    if reason == "insufficient_safety_evidence":
        return (
            "Có thuốc được chỉ định cho tình trạng này, nhưng không tìm thấy bằng chứng về an toàn trong hoàn "
            "cảnh của người bệnh. Không suy ra thuốc là phù hợp/an toàn. Hãy hỏi bác sĩ hoặc dược sĩ."
        )
    text = REASON_TEXT.get(reason, "Không thể trả lời câu hỏi này.")
    if reason in ("parent_hydration_failed", "insufficient_retrieval_score", "no_indication_evidence"):
        text += " Điều này không có nghĩa là không có thông tin hay thuốc là an toàn; hãy hỏi dược sĩ."
    return text + (f" ({detail})" if detail and reason in ("understanding_unavailable", "backend_unavailable") else "")


UNCOVERED_TOPICS = {
    "price": "giá thuốc", "where_to_buy": "nơi bán thuốc", "stock": "tình trạng còn hay hết hàng",
    "recall": "thông tin thu hồi hay thuốc giả", "brand_choice": "so sánh các hãng, biệt dược của cùng một thuốc",
    "insurance": "việc bảo hiểm y tế có chi trả hay không",
}


def not_covered_message(topic: str | None, drug_names: Sequence[str]) -> str:
    """What the book does not cover, said plainly, and who can help — no section stands in for it."""
    what = UNCOVERED_TOPICS.get(topic or "", "thông tin này")
    about = f" (câu hỏi về {', '.join(drug_names)})" if drug_names else ""
    return (
        f"Dược thư (bản demo) không nêu {what}{about}: sách chỉ nêu thông tin chuyên môn của thuốc (chỉ định, liều "
        "dùng, chống chỉ định, tác dụng phụ, tương tác…). Dược sĩ tại nhà thuốc, hoặc cơ sở y tế nơi bạn khám, "
        "có thể giúp bạn việc này."
    )


OTHER_SECTION_TITLES = ("Chỉ định", "Liều lượng và cách dùng", "Chống chỉ định", "Tác dụng không mong muốn (ADR)")


def section_absent_message(drug_names: str, section_title: str) -> str:
    return (
        f"Chuyên luận {drug_names} trong Dược thư (bản demo) không có mục «{section_title}». Điều này không có "
        "nghĩa là không có thông tin hay thuốc là an toàn; hãy hỏi dược sĩ. Các mục khác của thuốc: chọn bên dưới."
    )


def no_interaction_message(names: list[str]) -> str:
    joined = " và ".join(names)
    return (
        f"Không tìm thấy thông tin về tương tác giữa {joined} trong mục Tương tác thuốc của từng thuốc "
        "trong Dược thư (bản demo). Điều này KHÔNG có nghĩa là an toàn khi phối hợp. Hãy hỏi dược sĩ hoặc bác sĩ."
    )


# -- input checks ------------------------------------------------------------------------------------

NOT_TEXT = "Câu hỏi phải là văn bản."
EMPTY_TURN = "Hãy nhập câu hỏi về một thuốc."


def too_long(length: int, limit: int) -> str:
    return f"Câu hỏi dài {length:,} ký tự; giới hạn là {limit:,}. Hãy rút gọn."


# -- notices: what an answer says before its quotes ---------------------------------------------------


def quoted(names: Sequence[str]) -> str:
    """«a», «b»"""
    return ", ".join(f"«{n}»" for n in names)


def read_as(surface: str, drug_name: str) -> str:
    """How a name was read: "(«montelucast»: hiểu là Montelukast.)"."""
    return f"(«{surface}»: hiểu là {drug_name}.)"


def product_not_in_book(product: str, component: str) -> str:
    return f"«{product}» ({component}) không có trong Dược thư (bản demo) nên không được trả lời ở đây."


def product_partly_in_book(product: str, covered: Sequence[str], uncovered: Sequence[str]) -> str:
    return (
        f"«{product}» gồm nhiều thành phần: Dược thư (bản demo) có {', '.join(covered) or 'không thành phần nào'}; "
        f"{', '.join(uncovered)} không có trong Dược thư (bản demo) nên không được trả lời ở đây."
    )


def number_not_stated(unit: str, sections: Sequence[str]) -> str:
    return (f"Mục {', '.join(sections)} trong Dược thư (bản demo) không nêu con số ({unit}) bạn hỏi. Các câu trích "
            "dưới đây là nội dung của mục, không phải câu trả lời cho con số đó.")


def doses_left_out(count: int) -> str:
    return (f"(Đã lược {count} câu có liều lượng: Dược thư (bản demo) chống chỉ định thuốc này cho trường hợp "
            "này.)")


def indication_instead(asked: str, found: str, states: Sequence[str]) -> str:
    return (f"Không thấy thuốc nào trong Dược thư (bản demo) có chỉ định «{asked}»; dưới đây là các thuốc có chỉ "
            f"định «{found}», đối chiếu với {quoted(states)}.")


def searched_other_name(missing: Sequence[str], drug_name: str) -> str:
    return (f"{quoted(missing)} không có trong Dược thư (bản demo); duocthu chỉ tìm tên này trong các mục Tương tác "
            f"thuốc và Chống chỉ định của {drug_name}.")


def did_you_mean(drug_name: str) -> str:
    return f"Có phải bạn hỏi về {drug_name}?"


# -- the answer's own sentences -------------------------------------------------------------------------

ADULT_GROUP = "Người lớn (không áp dụng cho trẻ; để đối chiếu)"  # adults' lines in a child's dose answer
POPULATION_WORDS = {Population.PEDIATRIC: "trẻ em", Population.ADULT: "người lớn", Population.ELDERLY: "người cao tuổi"}


def section_of(section_title: str, drug_name: str) -> str:
    """"«Liều lượng và cách dùng» của Paracetamol"."""
    return f"«{section_title}» của {drug_name}"


def quoted_sections(sections: Sequence[str]) -> str:
    """The heading of a quoted answer: at most four sections named."""
    return "Theo Dược thư (bản demo), mục " + ", ".join(sections[:4]) + (" …" if len(sections) > 4 else "") + ":"


def asked_for(population: Population, facts: Sequence[str]) -> str:
    """Who a dose was asked for, and that duocthu does not compute doses."""
    who = POPULATION_WORDS[population]
    return (f"(Bạn hỏi cho: {who}" + (f", {', '.join(facts)}" if facts else "")
            + ". duocthu không tự tính liều: hãy đối chiếu với mức liều dưới đây.)")


def indicated_for(indication: str) -> str:
    """The heading of a reverse lookup's list."""
    return (f"Các thuốc trong Dược thư (bản demo) có nêu chỉ định «{indication}» (theo thứ tự tìm thấy, "
            "không phải xếp hạng điều trị):")


def contraindication_may_concern(drug_name: str) -> str:
    return (f"{drug_name}: Chống chỉ định có nêu trường hợp liên quan (xem «Lưu ý» ở trên) — "
            "cần đối chiếu với tình trạng người bệnh.")


def no_contraindication_found(drug_name: str, facts: Sequence[str]) -> str:
    return (f"{drug_name}: không thấy chống chỉ định với {', '.join(facts)} trong Dược thư (bản demo) — "
            "không có nghĩa là an toàn.")


CONTRAINDICATED_FOR_THIS_PATIENT = "Chống chỉ định với người bệnh này (theo Dược thư, bản demo):"


def contraindicated_answer(drug_names: str, strictly: bool, asks_dose: bool) -> str:
    """The contraindication is the answer: no dose; ask for an alternative."""
    verb = "chống chỉ định" if strictly else "chống chỉ định hoặc không khuyến cáo dùng"
    return (f"Dược thư (bản demo) {verb} {drug_names} cho trường hợp này"
            + (", nên duocthu không đưa liều." if asks_dose else ".")
            + " Hãy hỏi bác sĩ hoặc dược sĩ về thuốc thay thế. Các mục khác của thuốc: chọn bên dưới.")


def other_sections(drug_names: str, titles: Sequence[str]) -> tuple[str, ...]:
    """Quick replies: "Chống chỉ định của Metformin", …"""
    return tuple(f"{title} của {drug_names}" for title in titles)


CONTRAINDICATED_NEXT = ("Chống chỉ định", "Thận trọng", "Tương tác thuốc", "Chỉ định")


def unknown_not_in_unchecked(missing: Sequence[str], drug_name: str) -> str:
    return (f"Không thấy {quoted(missing)} trong phần chữ của mục Tương tác thuốc và Chống chỉ định của {drug_name}, "
            "nhưng mục này có bảng chưa được đối chiếu với bản in: chưa thể kết luận trước khi kiểm tra trang PDF "
            "được dẫn. Điều này KHÔNG có nghĩa là an toàn khi phối hợp. Hãy hỏi dược sĩ hoặc bác sĩ.")


def unknown_not_named(missing: Sequence[str], drug_name: str) -> str:
    return (f"Không thấy {quoted(missing)} được nhắc đến trong mục Tương tác thuốc và Chống chỉ định của {drug_name} "
            "trong Dược thư (bản demo), và bản thân thuốc này không có trong Dược thư. Điều này KHÔNG có nghĩa là an "
            "toàn khi phối hợp. Hãy hỏi dược sĩ hoặc bác sĩ.")


def unknown_named_in(missing: Sequence[str], drug_name: str) -> str:
    return f"Dược thư (bản demo) nhắc đến {quoted(missing)} trong các mục sau của {drug_name}:"


# -- the safety block, the PDF warning, the sources ------------------------------------------------------

SAFETY_HEADING = "⚠ Lưu ý cho trường hợp này"
_FINDING_TITLES = {
    FindingKind.CONTRAINDICATION: "Chống chỉ định", FindingKind.AGE_LIMIT: "Chống chỉ định theo tuổi",
    FindingKind.CAUTION: "Thận trọng", FindingKind.INTERACTION: "Tương tác thuốc",
    FindingKind.PREGNANCY: "Thời kỳ mang thai", FindingKind.BREASTFEEDING: "Thời kỳ cho con bú",
}


def safety_heading(facts: Sequence[str]) -> str:
    """"⚠ Lưu ý cho trường hợp này (3 tuổi, mang thai)"."""
    return f"{SAFETY_HEADING} ({', '.join(facts)})"


def finding_title(kind: FindingKind, section_title: str) -> str:
    """What the book calls a finding: an age group the dosing section declines is not a "Chống chỉ định"."""
    if kind is FindingKind.AGE_LIMIT and section_title != SECTION_TITLES["chong_chi_dinh"]:
        return f"Giới hạn tuổi ({section_title})"
    return _FINDING_TITLES[kind]


def nothing_said_about(drug_name: str, facts: Sequence[str]) -> str:
    """The patient facts the book says nothing about for a drug."""
    return (f"{drug_name}: không thấy trong Dược thư (bản demo) nội dung nào về {', '.join(facts)} — "
            "điều này không có nghĩa là an toàn.")


def verify_pdf(tables: Sequence[str], pages: Sequence[str]) -> str:
    return (
        "⚠ Cần đối chiếu bản in: bằng chứng có bảng chưa được kiểm tra với bản PDF (" + "; ".join(tables)
        + (" — " + "; ".join(pages) if pages else "") + "). Không dùng số liệu trong bảng khi chưa kiểm tra."
    )


SOURCES_HEADING = "Nguồn:"


def source_line(number: int, hit: Hit) -> str:
    chunk = hit.chunk
    return (f"[{number}] {chunk.display_name} — {chunk.section_title}, phần {chunk.part_index + 1}; "
            + "; ".join(chunk.source_refs) + (" (bảng chưa đối chiếu bản in)" if chunk.needs_visual_check else ""))


def passage(number: int, hit: Hit) -> str:
    """Retrieval-only mode: a chunk shown whole."""
    return f"[{number}] {hit.chunk.display_name} — {hit.chunk.section_title}: {hit.chunk.text}"


GENERATED_NOTHING = (
    "Chế độ chỉ truy xuất: duocthu không tạo câu trả lời, chỉ trích nguyên văn các đoạn tìm được. "
    "Hãy tự đọc và đối chiếu."
)
