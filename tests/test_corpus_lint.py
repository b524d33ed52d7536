"""The style lint: one row of the rule table per case; the shipped formulary passes clean."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest
from qdrant_client import QdrantClient

from duocthu.corpus_lint import RULES, TERMS, lint_files, lint_text
from duocthu.embedding_cache import EmbeddingCache
from duocthu.indexing import build_index

from .conftest import DEMO_FORMULARY, FIXTURE_FORMULARY
from .fakes import HashEmbedder


@pytest.mark.parametrize("line, found, preferred", [
    ("Liều tối đa 1 000 mg/ngày.", "1 000", "1000"),
    ("Liều tối đa 1.000 mg/ngày.", "1.000", "1000"),
    ("Gây block nhĩ thất.", "block", "blốc"),
    ("Nồng độ 2 mg/l trong huyết tương.", "/l", "/lít"),
    ("Liều 100 mg/m2 da.", "m2", "m²"),
    ("Tiêm vaccin sống giảm độc lực.", "vaccin", "vắc xin"),
    ("Tiêm vắc-xin sống.", "vắc-xin", "vắc xin"),
    ("So với placebo.", "placebo", "giả dược"),
    ("Bạch cầu trung tính < 1,5 × 10^9/lít.", "10^9", "10⁹, 10⁻⁸ (superscripts)"),
    ("Bạch cầu trung tính < 1,5 x 10⁹/lít.", "x", "×"),
    ("Mục tiêu AUC 400–600 mg.giờ/lít.", "mg.giờ/lít", "mg·giờ/lít"),
    ("Mục tiêu AUC 400–600 mg × giờ/lít.", "mg × giờ/lít", "mg·giờ/lít"),
])
def test_each_rule_flags_its_form(line, found, preferred):
    warnings = lint_text(Path("x.md"), f"---\nname: X\n---\n{line}\n")
    assert [(w.line, w.found, w.preferred) for w in warnings] == [(4, found, preferred)]
    assert str(warnings[0]).startswith("x.md:4: ")


# One line per variant of the term table: every spelling a new monograph might bring back is caught.
TERM_VARIANTS = [
    ("Thuốc ức chế monoamin oxydase.", "monoamin oxydase", "monoamin oxidase"),
    ("Thuốc ức chế MAO.", "ức chế MAO", "ức chế monoamin oxidase (IMAO)"),
    ("Trong vòng 14 ngày sau khi ngừng MAOI.", "MAOI", "ức chế monoamin oxidase (IMAO)"),
    ("Cholestyramin làm giảm hấp thu.", "Cholestyramin", "colestyramin"),
    ("Colestiramin làm giảm hấp thu.", "Colestiramin", "colestyramin"),
    ("Tăng tác dụng của sulfonylure.", "sulfonylure", "sulfonylurê"),
    ("Nhóm sulphonylurea.", "sulphonylurea", "sulfonylurê"),
    ("Rifampicin, cỏ ban Âu làm giảm nồng độ.", "cỏ ban Âu", "cỏ St John"),
    ("Rifampicin, St John's wort làm giảm nồng độ.", "St John's wort", "cỏ St John"),
    ("Trimethoprim và co-trimoxazol.", "co-trimoxazol", "cotrimoxazol"),
    ("Thuốc ức chế tái thu hồi serotonin.", "tái thu hồi serotonin", "tái hấp thu serotonin"),
    ("Thuốc ức chế tái hấp thụ serotonin.", "tái hấp thụ serotonin", "tái hấp thu serotonin"),
    ("Tiêm dưới da 5000 đơn vị heparin.", "5000 đơn vị heparin", "đvqt"),
    ("Heparin: liều nạp 80 IU/kg.", "Heparin: liều nạp 80 IU", "đvqt"),
    ("Nguy cơ hạ glucose huyết.", "hạ glucose huyết", "hạ đường huyết"),
    ("Nguy cơ hạ glucose máu.", "hạ glucose máu", "hạ đường huyết"),
    ("Nguy cơ hạ đường máu.", "hạ đường máu", "hạ đường huyết"),
    ("Làm tăng glucose máu.", "tăng glucose máu", "tăng đường huyết"),
    ("Nhũ dịch lipid tĩnh mạch.", "Nhũ dịch", "nhũ tương"),
    ("Thận trọng với trẻ đẻ non.", "đẻ non", "sinh non"),
    ("Nhất là trẻ sơ sinh non tháng.", "sơ sinh non tháng", "sinh non"),
]


@pytest.mark.parametrize("line, found, preferred", TERM_VARIANTS)
def test_each_term_variant_is_caught(line, found, preferred):
    warnings = lint_text(Path("x.md"), line)
    assert [(w.found, w.preferred) for w in warnings] == [(found, preferred)]


def test_every_term_row_has_a_variant_above():
    rows = {preferred for _, preferred, _ in TERMS}
    assert rows == {preferred for *_, preferred in TERM_VARIANTS if preferred in rows}
    assert all(rule.name for rule in RULES)  # each row says why


@pytest.mark.parametrize("line", [
    "Liều 1000 mg/ngày, 0,5 mg/kg, 2,5 mmol/lít, 1,73 m², vắc xin, giả dược, blốc nhĩ thất.",
    "Uống 2 lần, mỗi lần 500 mg.", "Thuốc chẹn beta (beta-blocker).",
    "Thuốc ức chế monoamin oxidase (IMAO); colestyramin; sulfonylurê; cỏ St John; cotrimoxazol.",
    "Thuốc ức chế tái hấp thu serotonin; nhũ tương lipid; trẻ sinh non; hạ đường huyết, tăng đường huyết.",
    "Heparin 5000 đvqt; chuỗi heparin phải đủ dài (ít nhất 18 đơn vị đường); insulin 10 đơn vị.",
    "Bạch cầu < 1,5 × 10⁹/lít; nồng độ dưới 10⁻⁸ mol/lít; AUC 400–600 mg·giờ/lít; 30 mg × 2 lần/ngày.",
    "Theo dõi glucose máu; giảm glucose huyết lúc đói; hội chứng Stevens-Johnson.",
])
def test_preferred_forms_pass(line):
    assert lint_text(Path("x.md"), line) == []


def test_front_matter_is_not_linted():
    assert lint_text(Path("x.md"), "---\naliases: [Vaccin X]\n---\nVăn bản.\n") == []


def test_shipped_formulary_is_clean():
    warnings = lint_files(sorted(DEMO_FORMULARY.glob("*.md")))
    assert not warnings, "\n".join(map(str, warnings[:20]))


def test_index_reports_warnings_with_file_and_line(tmp_path, caplog):
    source = tmp_path / "f"
    shutil.copytree(FIXTURE_FORMULARY, source)
    path = source / "thuoc_a.md"
    path.write_text(path.read_text(encoding="utf-8").replace("Sốt.", "Sốt; so với placebo."), encoding="utf-8")
    client = QdrantClient(":memory:")
    try:
        with caplog.at_level(logging.WARNING, logger="duocthu.indexing"):
            report = build_index(client, "a", source, HashEmbedder(), EmbeddingCache(tmp_path / "c", "hash"))
    finally:
        client.close()
    assert report.lint_warnings == 1 and "1 style warnings" in report.summary()
    assert any("thuoc_a.md:" in r.getMessage() and "'placebo' → 'giả dược'" in r.getMessage() for r in caplog.records)
