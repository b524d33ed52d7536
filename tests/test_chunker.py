from __future__ import annotations

from pathlib import Path

from duocthu.chunker import MAX_CHUNK_TOKENS, chunk_monograph, chunk_section, split_sentences
from duocthu.corpus import load_formulary, parse_monograph
from duocthu.text import count_tokens, fold
from duocthu.types import Chunk, ChunkKind

from .conftest import DEMO_FORMULARY, FIXTURE_FORMULARY
from .test_corpus import REQUIRED_BODY, monograph_text


def _long_monograph(sentences: int = 60):
    paragraph = " ".join(f"Câu số {i} nói về liều dùng của thuốc X ở người lớn và trẻ em." for i in range(sentences))
    body = REQUIRED_BODY.replace("Nội dung mục Liều lượng và cách dùng.", paragraph + "\n\nĐoạn cuối cùng.")
    return parse_monograph(Path("thuoc_x.md"), monograph_text(body=body))


def test_doc_ids_payload_and_point_ids():
    mono = load_formulary(FIXTURE_FORMULARY)[0]
    chunks = chunk_monograph(mono)
    first = chunks[0]
    assert first.doc_id == "thuoc_a__ten_chung_quoc_te__0"
    assert first.text_folded == fold(first.text)
    payload = first.payload()
    for key in ("doc_id", "drug_id", "display_name", "section_key", "section_title", "part_index", "chunk_kind",
                "text", "text_folded", "source_refs", "requires_visual_check", "has_quarantined_content",
                "parent_id", "atc_codes", "aliases"):
        assert key in payload
    assert payload["parent_id"] is None
    assert Chunk.from_payload(payload) == first
    assert first.point_id == chunk_monograph(mono)[0].point_id  # deterministic


def test_long_section_splits_at_sentence_boundaries_and_loses_nothing():
    mono = _long_monograph()
    section = mono.section("lieu_luong_va_cach_dung")
    parts = chunk_section(mono, section)
    assert len(parts) >= 2
    assert [p.part_index for p in parts] == list(range(len(parts)))
    assert " ".join(p.text for p in parts).split() == section.text.split()
    sentences = set(split_sentences(section.text.replace("\n\n", "\n")))
    for part in parts:
        assert count_tokens(part.text) <= MAX_CHUNK_TOKENS
        assert part.text.rstrip().endswith(".")
        for sentence in split_sentences(part.text):
            assert sentence in sentences  # never a cut sentence


def test_single_oversized_sentence_is_kept_whole():
    mono = _long_monograph()
    section = mono.section("lieu_luong_va_cach_dung")
    parts = chunk_section(mono, section, max_tokens=5)
    assert all(len(split_sentences(p.text)) == 1 for p in parts)


def test_tables_become_blocks_and_quarantine_flags_spread_over_the_section():
    mono = load_formulary(FIXTURE_FORMULARY)[1]
    parts = chunk_section(mono, mono.section("tuong_tac_thuoc"))
    assert [p.chunk_kind for p in parts] == [ChunkKind.PROSE, ChunkKind.BLOCK, ChunkKind.PROSE]
    assert [p.requires_visual_check for p in parts] == [False, True, False]
    assert all(p.has_quarantined_content for p in parts)
    assert parts[1].text.startswith("Bảng: Thuốc cần theo dõi")


def test_demo_formulary_has_the_measured_cases():
    monographs = {m.drug_id: m for m in load_formulary(DEMO_FORMULARY)}
    assert len(monographs) >= 60
    chunks = [c for m in monographs.values() for c in chunk_monograph(m)]
    quarantined_drugs = {c.drug_id for c in chunks if c.requires_visual_check}
    assert len(quarantined_drugs) >= 3
    multi_part = {c.drug_id for c in chunks if c.part_index >= 1 and c.chunk_kind is ChunkKind.PROSE}
    assert len(multi_part) >= 5
    dosage = monographs["paracetamol"].section("lieu_luong_va_cach_dung").text
    assert "mg/kg" in dosage and "tuổi" in dosage
    for drug in ("ibuprofen", "diclofenac", "meloxicam"):
        assert "loét dạ dày" in monographs[drug].section("chong_chi_dinh").text.lower()
        assert "loét" not in monographs[drug].section("than_trong").text.lower()


def test_every_required_drug_id_is_in_the_demo_formulary():
    required = ["paracetamol", "ibuprofen", "acid_acetylsalicylic", "diclofenac", "meloxicam", "tramadol", "morphin", "amoxicilin", "azithromycin", "ciprofloxacin", "metronidazol", "cefuroxim", "ceftriaxon", "doxycyclin", "omeprazol", "ranitidin", "domperidon", "metformin", "gliclazid", "amlodipin", "nifedipin", "enalapril", "captopril", "losartan", "atorvastatin", "simvastatin", "warfarin", "heparin", "clopidogrel", "digoxin", "furosemid", "spironolacton", "isosorbid_dinitrat", "amiodaron", "propranolol", "salbutamol", "prednisolon", "dexamethason", "loratadin", "cetirizin", "diazepam", "carbamazepin", "phenytoin", "levothyroxin", "methotrexat", "allopurinol", "colchicin", "fluconazol", "aciclovir"]
    present = {m.drug_id for m in load_formulary(DEMO_FORMULARY)}
    assert set(required) <= present and len(required) == 49


def test_a_dosing_line_declining_all_children_is_an_under_18_limit():
    from duocthu.chunker import _section_limits

    limits = _section_limits("lieu_luong_va_cach_dung", "Người lớn: 5 mg/ngày. Trẻ em: chưa có dữ liệu, không khuyến cáo.")
    assert [(l.kind, l.max_age_years, l.conditional) for l in limits] == [("age", 18.0, False)]


def test_a_weight_limit_is_parsed_with_the_age_limit():
    from duocthu.chunker import _section_limits

    limits = _section_limits("lieu_luong_va_cach_dung", "Trẻ dưới 6 tuổi hoặc cân nặng dưới 20 kg: không dùng.")
    assert {(l.kind, l.max_age_years, l.max_weight_kg) for l in limits} == {("age", 6.0, None), ("weight", None, 20.0)}


def test_a_form_the_book_withholds_from_children_is_a_limit_for_that_route():
    from duocthu.chunker import _section_limits

    limits = _section_limits("lieu_luong_va_cach_dung", "Trẻ em: 1 mg/kg/ngày. Dạng tiêm không dùng cho trẻ em.")
    assert [(l.max_age_years, l.route, l.conditional) for l in limits] == [(18.0, "tiêm", True)]
