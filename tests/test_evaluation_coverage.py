"""Loud mismatches: what an evaluation set names that the formulary lacks, in every set format."""

from __future__ import annotations

import pytest

from duocthu.evaluation.coverage import (
    FormularyContents,
    MostlyMissingError,
    check_coverage,
    find_missing,
)
from duocthu.evaluation.data import load_jsonl
from duocthu.evaluation.labelled import LabelledTurn

from .conftest import DEMO_FORMULARY, FIXTURE_FORMULARY, ROOT

BOOK = FormularyContents(
    sections={"paracetamol": frozenset({"chi_dinh", "chong_chi_dinh", "lieu_luong_va_cach_dung"}),
              "ibuprofen": frozenset({"chi_dinh", "chong_chi_dinh"})},
    lowered_text={"paracetamol": "suy gan nặng. sốt. đau đầu", "ibuprofen": "loet da day ta trang. sot"},
)


def _turn(expected: dict, turn_id: str = "t") -> LabelledTurn:
    return LabelledTurn(turn_id, turn_id, 1, "…", expected, None, 1)


def test_drugs_sections_and_conditions_the_book_lacks():
    coverage = find_missing([
        _turn({"drugs": ["paracetamol"], "section_key": "lieu_luong_va_cach_dung"}),
        _turn({"drugs": ["ibuprofen"], "section_key": "lieu_luong_va_cach_dung"}),  # the drug lacks the section
        _turn({"drugs_include": ["warfarin"], "section_key": "tuong_ky"}),  # no monograph has it
        _turn({"section_key": "lieu_dung"}),  # not a section key at all
        _turn({"safety_shows": [{"drug_id": "ibuprofen", "phrase": "Loét dạ dày tá tràng"},
                                {"drug_id": "paracetamol", "phrase": "thiếu men G6PD"}]}),
        _turn({"not_drugs": ["diclofenac"], "evidence_drugs_include": ["aspirin"]}),
    ], BOOK)
    assert coverage.labelled_drugs == ("aspirin", "ibuprofen", "paracetamol", "warfarin")
    assert coverage.missing_drugs == ("aspirin", "warfarin")  # not_drugs are meant to be absent
    assert coverage.missing_sections == ("lieu_dung (not a section key: see docs/formulary-format.md)",
                                         "lieu_luong_va_cach_dung of ibuprofen", "tuong_ky (no monograph has it)")
    assert coverage.missing_conditions == ("'thiếu men G6PD' in paracetamol",)  # accents and case do not matter
    assert coverage.missing_share == 0.5 and not coverage.mostly_missing
    assert [line.split(" ")[0] for line in coverage.lines()] == ["the", "sections", "conditions"]


def test_every_set_format_is_read():
    rows = [
        {"id": "sr", "question": "…", "drug_id": "digoxin", "section_key": "chi_dinh"},
        {"id": "pl", "question": "…", "drug_id": "paracetamol", "section_key": "than_trong",
         "expected_pooled_sections": ["chong_chi_dinh"]},
        {"id": "ind", "condition": "gút", "kind": "real", "expected_drugs": ["colchicin", "allopurinol"]},
        {"id": "ag", "turns": [{"text": "…", "expected": {"drugs": ["paracetamol"], "section_key": "chi_dinh"}}]},
    ]
    coverage = find_missing(rows, BOOK)
    assert coverage.missing_drugs == ("allopurinol", "colchicin", "digoxin")
    assert coverage.missing_sections == ("than_trong (no monograph has it)",)
    assert coverage.missing_conditions == ("'gút' (every labelled drug absent: colchicin, allopurinol)",)


def test_a_mostly_absent_set_is_refused_unless_allowed():
    rows = [_turn({"drugs": [drug]}) for drug in ("paracetamol", "warfarin", "digoxin")]
    printed: list[str] = []
    with pytest.raises(MostlyMissingError, match="2 of the 3 drugs.*--allow-missing"):
        check_coverage(rows, BOOK, echo=printed.append)
    assert printed and printed[0].startswith("⚠ the formulary lacks 2 of the 3 labelled drugs (67%): digoxin, warfarin")
    allowed = check_coverage(rows, BOOK, allow_missing=True, echo=None)
    assert allowed.mostly_missing


def test_the_shipped_sets_name_nothing_the_demo_book_lacks():
    contents = FormularyContents.from_folder(DEMO_FORMULARY)
    for name in ("agent/dev.jsonl", "safety/dev.jsonl", "section_routing/dev.jsonl", "pooling/dev.jsonl",
                 "indications/dev.jsonl"):
        assert find_missing(load_jsonl(ROOT / "data" / "eval" / name), contents).complete, name


def test_the_fixture_book_lacks_most_of_the_shipped_agent_set(fixture_store):
    rows = load_jsonl(ROOT / "data" / "eval" / "agent" / "dev.jsonl")
    from_store = find_missing(rows, FormularyContents.from_store(fixture_store))
    assert from_store == find_missing(rows, FormularyContents.from_folder(FIXTURE_FORMULARY))
    assert from_store.mostly_missing and "paracetamol" in from_store.missing_drugs
