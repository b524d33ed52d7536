from __future__ import annotations

from pathlib import Path

import pytest

from duocthu.corpus import Table, load_formulary, parse_monograph
from duocthu.errors import CorpusValidationError
from duocthu.sections import SECTIONS

from .conftest import FIXTURE_FORMULARY

REQUIRED_BODY = "\n".join(
    f"## {s.title}\nNội dung mục {s.title}.\n" for s in SECTIONS if s.key not in ("tuong_ky", "thong_tin_quy_che")
)


def monograph_text(front: str = "", body: str = REQUIRED_BODY) -> str:
    front = front or "drug_id: thuoc_x\nname: Thuốc X\naliases: [X-Brand]\natc_codes: [A01AA01]\nsource_pages: [1, 2]"
    return f"---\n{front}\n---\n\n{body}"


def parse(text: str, name: str = "thuoc_x.md"):
    return parse_monograph(Path(name), text)


def errors_of(text: str, name: str = "thuoc_x.md") -> list[tuple[int, str]]:
    with pytest.raises(CorpusValidationError) as info:
        parse(text, name)
    return [(e.line, e.message) for e in info.value.errors]


def test_fixture_formulary_parses():
    monographs = load_formulary(FIXTURE_FORMULARY)
    assert [m.drug_id for m in monographs] == ["thuoc_a", "thuoc_b"]
    assert monographs[0].aliases == ("Alphadol", "Brand A")
    assert monographs[0].source_refs == ("Dược thư (bản demo duocthu), Thuốc A, tr. 10–12",)


@pytest.mark.parametrize("section", SECTIONS, ids=lambda s: s.key)
def test_every_heading_and_variant_is_recognised(section):
    for heading in (section.title, *section.heading_variants, section.title.upper()):
        body = REQUIRED_BODY
        if section.key in ("tuong_ky", "thong_tin_quy_che"):
            body = body + f"\n## {heading}\nNội dung.\n"
            if section.key == "tuong_ky":  # keep book order: tuong_ky sits before bao_quan
                body = REQUIRED_BODY.replace("## Độ ổn định và bảo quản", f"## {heading}\nNội dung.\n\n## Độ ổn định và bảo quản")
        else:
            body = body.replace(f"## {section.title}\n", f"## {heading}\n")
        mono = parse(monograph_text(body=body))
        assert section.key in [s.key for s in mono.sections]


@pytest.mark.parametrize(
    "aliases_yaml, expected",
    [("aliases: [A, B]", ("A", "B")), ("aliases:\n  - A\n  - B", ("A", "B")), ("aliases: []", ()), ("aliases:", ())],
)
def test_alias_forms(aliases_yaml, expected):
    front = f"drug_id: thuoc_x\nname: Thuốc X\n{aliases_yaml}\natc_codes: [A01AA01]\nsource_pages: [1, 2]"
    assert parse(monograph_text(front)).aliases == expected


def test_nfd_and_old_tone_placement_are_normalised():
    import unicodedata

    text = unicodedata.normalize("NFD", monograph_text(body=REQUIRED_BODY.replace("Nội dung mục Chỉ định.", "Hoà tan, khoẻ.")))
    mono = parse(text)
    assert "Hòa tan, khỏe." in mono.section("chi_dinh").text


def test_unknown_heading_names_its_line():
    body = REQUIRED_BODY + "\n## Công dụng thần kỳ\nabc\n"
    errors = errors_of(monograph_text(body=body))
    assert any("unknown section heading 'Công dụng thần kỳ'" in m and line > 5 for line, m in errors)


def test_missing_drug_id():
    front = "name: Thuốc X\naliases: []\natc_codes: []\nsource_pages: [1, 2]"
    assert any("missing front-matter key 'drug_id'" in m for _, m in errors_of(monograph_text(front)))


def test_drug_id_must_match_file_and_be_a_slug():
    front = "drug_id: Thuốc-X\nname: Thuốc X\naliases: []\natc_codes: []\nsource_pages: [1, 2]"
    assert any(line == 2 and "not an ASCII slug" in m for line, m in errors_of(monograph_text(front)))
    assert any("does not match the file name" in m for _, m in errors_of(monograph_text(), "khac.md"))


def test_duplicate_drug_id_across_files(tmp_path):
    (tmp_path / "thuoc_x.md").write_text(monograph_text(), encoding="utf-8")
    front = "drug_id: thuoc_x\nname: Thuốc Y\naliases: []\natc_codes: []\nsource_pages: [3, 4]"
    sub = tmp_path / "b"
    sub.mkdir()
    (tmp_path / "thuoc_y.md").write_text(monograph_text(front), encoding="utf-8")
    with pytest.raises(CorpusValidationError) as info:
        load_formulary(tmp_path)
    messages = " ".join(str(e) for e in info.value.errors)
    assert "does not match the file name" in messages


def test_duplicate_drug_id_and_alias_collision(tmp_path):
    (tmp_path / "thuoc_x.md").write_text(monograph_text(), encoding="utf-8")
    front = "drug_id: thuoc_y\nname: Thuốc Y\naliases: [x-brand]\natc_codes: []\nsource_pages: [3, 4]"
    (tmp_path / "thuoc_y.md").write_text(monograph_text(front), encoding="utf-8")
    with pytest.raises(CorpusValidationError) as info:
        load_formulary(tmp_path)
    assert any("also names 'thuoc_x'" in e.message for e in info.value.errors)


def test_empty_section_names_its_line():
    body = REQUIRED_BODY.replace("## Thận trọng\nNội dung mục Thận trọng.\n", "## Thận trọng\n\n")
    errors = errors_of(monograph_text(body=body))
    line = next(line for line, m in errors if "section 'Thận trọng' is empty" in m)
    assert monograph_text(body=body).split("\n")[line - 1] == "## Thận trọng"


def test_malformed_front_matter_names_its_line():
    front = "drug_id: thuoc_x\nname: [unclosed\naliases: []"
    errors = errors_of(monograph_text(front))
    assert errors and errors[0][1].startswith("malformed front matter") and errors[0][0] >= 2


def test_unknown_front_matter_key_is_an_error():
    front = "drug_id: thuoc_x\nname: Thuốc X\nalias: [X]\naliases: []\natc_codes: []\nsource_pages: [1, 2]"
    assert (4, "unknown front-matter key 'alias'") in errors_of(monograph_text(front))


def test_missing_section_duplicate_section_and_order():
    body = REQUIRED_BODY.replace("## Chỉ định\nNội dung mục Chỉ định.\n", "")
    assert any("missing section 'Chỉ định'" in m for _, m in errors_of(monograph_text(body=body)))
    body = REQUIRED_BODY + "\n## Chỉ định\nLần hai.\n"
    messages = [m for _, m in errors_of(monograph_text(body=body))]
    assert any("duplicate section 'Chỉ định'" in m for m in messages)
    assert any("not in book order" in m for m in messages)


def test_text_outside_sections_and_missing_front_matter():
    assert any("text outside" in m for _, m in errors_of(monograph_text(body="Lạc chỗ.\n" + REQUIRED_BODY)))
    assert errors_of(REQUIRED_BODY)[0] == (1, "missing YAML front matter (the file must start with '---')")


def test_tables_and_quarantine():
    table = "<!-- table quarantined: Bảng liều -->\n| a | b |\n|---|---|\n| 1 | 2 |\n<!-- /table -->\n\nSau bảng."
    body = REQUIRED_BODY.replace("Nội dung mục Tương tác thuốc.", "Trước bảng.\n\n" + table)
    section = parse(monograph_text(body=body)).section("tuong_tac_thuoc")
    kinds = [type(s).__name__ for s in section.segments]
    assert kinds == ["Prose", "Table", "Prose"]
    assert isinstance(section.segments[1], Table) and section.segments[1].quarantined
    assert section.has_quarantined_content


def test_unclosed_table_is_an_error():
    body = REQUIRED_BODY.replace("Nội dung mục Tương tác thuốc.", "<!-- table: T -->\n| a |")
    assert any("is not closed" in m for _, m in errors_of(monograph_text(body=body)))


def test_missing_folder_is_a_clear_error(tmp_path):
    with pytest.raises(CorpusValidationError, match="does not exist"):
        load_formulary(tmp_path / "nope")
