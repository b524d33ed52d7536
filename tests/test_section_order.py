from __future__ import annotations

from duocthu.sections import INTRO_SECTIONS, SECTION_ORDER, SECTION_TITLES, section_for_heading


def test_book_order_and_titles():
    assert SECTION_ORDER[0] == "ten_chung_quoc_te" and SECTION_ORDER[-1] == "thong_tin_quy_che"
    assert len(SECTION_ORDER) == 19
    assert SECTION_ORDER.index("chong_chi_dinh") == SECTION_ORDER.index("chi_dinh") + 1
    assert SECTION_TITLES["tac_dung_khong_mong_muon"] == "Tác dụng không mong muốn (ADR)"


def test_intro_sections():
    assert INTRO_SECTIONS == {"ten_chung_quoc_te", "loai_thuoc", "chi_dinh", "duoc_ly_va_co_che_tac_dung"}


def test_find_by_drug_returns_book_order_with_display_prefix(fixture_store):
    hits = fixture_store.find_by_drug("thuoc_b")
    keys = [h.chunk.section_key for h in hits]
    assert keys == sorted(keys, key=SECTION_ORDER.index)
    assert all(h.chunk.chunk_kind.value == "prose" for h in hits)
    firsts = {}
    for hit in hits:
        firsts.setdefault(hit.chunk.section_key, hit)
    for hit in hits:
        prefixed = hit.text.startswith("【Thuốc B】")
        assert prefixed == (firsts[hit.chunk.section_key] is hit)


def test_heading_lookup_ignores_case_and_diacritics():
    assert section_for_heading("CHONG CHI DINH") == "chong_chi_dinh"
    assert section_for_heading("Quá liều và cách xử trí") == "qua_lieu_va_xu_tri"
    assert section_for_heading("Công dụng") is None
