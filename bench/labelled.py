"""A small labelled fallback, used only when ``data/eval/*.jsonl`` is missing (the report says so)."""

from __future__ import annotations

from typing import Any


def _sr(n: int, question: str, drug: str, section: str) -> dict[str, Any]:
    return {"id": f"bench-sr-{n:03d}", "question": question, "drug_id": drug, "section_key": section, "tags": []}


SECTION_ROUTING: tuple[dict[str, Any], ...] = (
    _sr(1, "Chống chỉ định của ibuprofen là gì?", "ibuprofen", "chong_chi_dinh"),
    _sr(2, "Tác dụng phụ của amoxicilin?", "amoxicilin", "tac_dung_khong_mong_muon"),
    _sr(3, "Liều dùng paracetamol cho người lớn?", "paracetamol", "lieu_luong_va_cach_dung"),
    _sr(4, "Metformin tương tác với thuốc nào?", "metformin", "tuong_tac_thuoc"),
    _sr(5, "Quá liều paracetamol xử trí thế nào?", "paracetamol", "qua_lieu_va_xu_tri"),
    _sr(6, "Omeprazol bảo quản như thế nào?", "omeprazol", "do_on_dinh_va_bao_quan"),
    _sr(7, "Cơ chế tác dụng của losartan?", "losartan", "duoc_ly_va_co_che_tac_dung"),
    _sr(8, "Chỉ định của azithromycin là gì?", "azithromycin", "chi_dinh"),
    _sr(9, "Thận trọng khi dùng warfarin?", "warfarin", "than_trong"),
    _sr(10, "Phụ nữ có thai dùng cetirizin được không?", "cetirizin", "thoi_ky_mang_thai"),
    _sr(11, "chong chi dinh cua diclofenac", "diclofenac", "chong_chi_dinh"),
    _sr(12, "Dược động học của digoxin?", "digoxin", "duoc_dong_hoc"),
)

POOLING: tuple[dict[str, Any], ...] = (
    {"id": "bench-pl-001", "question": "Thận trọng gì khi người bị loét dạ dày tá tràng dùng ibuprofen?",
     "drug_id": "ibuprofen", "section_key": "than_trong", "kind": "cross_section",
     "expected_pooled_sections": ["chong_chi_dinh"]},
    {"id": "bench-pl-002", "question": "Thận trọng khi dùng paracetamol?", "drug_id": "paracetamol",
     "section_key": "than_trong", "kind": "leak", "expected_pooled_sections": []},
    {"id": "bench-pl-003", "question": "Lưu ý khi dùng warfarin cho người cao tuổi?", "drug_id": "warfarin",
     "section_key": "than_trong", "kind": "leak", "expected_pooled_sections": []},
)
