"""The book's contraindication sentences read into records (real sentences of data/formulary)."""

from __future__ import annotations

from pathlib import Path

import pytest

from duocthu.chunker import chunk_monograph
from duocthu.contraindications import (
    BookVocabulary,
    declined_target,
    parse_report,
    parse_sentence,
    vocabulary,
    with_records,
    without_asides,
)
from duocthu.corpus import load_formulary
from duocthu.types import Chunk, Threshold
from duocthu.understanding.conditions import LEXICON_SECTIONS, build_lexicon

DEMO = Path(__file__).resolve().parent.parent / "data" / "formulary"


@pytest.fixture(scope="module")
def book_chunks() -> list[Chunk]:
    return [c for m in load_formulary(DEMO) for c in chunk_monograph(m)]


@pytest.fixture(scope="module")
def vocab(book_chunks) -> BookVocabulary:
    lexicon = build_lexicon([(c.section_key, c.text) for c in book_chunks if c.section_key in LEXICON_SECTIONS])
    drugs = {c.drug_id: (c.drug_id, c.display_name, c.aliases, c.atc_codes) for c in book_chunks}
    return vocabulary(lexicon, drugs.values())


def parse(drug_id: str, sentence: str, vocab: BookVocabulary, section: str = "chong_chi_dinh"):
    return parse_sentence(drug_id, section, sentence, vocab)


def test_condition_with_its_threshold(vocab):
    [record] = parse("cetirizin", "Suy thận nặng với độ thanh thải creatinin < 10 ml/phút.", vocab)
    assert record.conditions == ("suy thận",) and record.severity == "nặng"
    assert record.thresholds == (Threshold("creatinine_clearance", "<", 10.0, "ml/phút"),)
    assert record.sentence == "Suy thận nặng với độ thanh thải creatinin < 10 ml/phút."


def test_threshold_belongs_to_the_condition_it_follows(vocab):
    records = parse("diclofenac", "Suy gan nặng, suy thận nặng (độ thanh thải creatinin dưới 30 ml/phút).", vocab)
    by_condition = {r.conditions: r.thresholds for r in records}
    assert by_condition[("suy gan",)] == ()
    assert by_condition[("suy thận",)][0].value == 30.0


def test_potassium_threshold(vocab):
    records = parse("spironolacton", "Tăng kali máu (kali huyết thanh > 5,0 mmol/lít).", vocab)
    assert Threshold("potassium", ">", 5.0, "mmol/l") in records[0].thresholds


def test_hypersensitivity_to_self_and_class(vocab):
    [record] = parse("ciprofloxacin", "Mẫn cảm với ciprofloxacin hoặc bất kỳ quinolon nào.", vocab)
    assert record.hypersensitivity == ("self", "quinolon") and not record.conditions


def test_history_of_allergy_to_a_class(vocab):
    [record] = parse("amoxicilin", "Người có tiền sử dị ứng với bất kỳ penicilin nào.", vocab)
    assert record.hypersensitivity == ("penicilin",)


def test_severe_reaction_to_related_classes(vocab):
    [record] = parse("cefalexin", "Tiền sử phản ứng quá mẫn tức thì nặng (sốc phản vệ, phù mạch) với penicilin hoặc "
                                  "các beta-lactam khác.", vocab)
    assert set(record.hypersensitivity) == {"penicilin", "beta_lactam"} and record.severity == "nặng"


def test_self_named_by_another_word(vocab):
    [record] = parse("acid_valproic", "Mẫn cảm với valproat.", vocab)
    assert record.hypersensitivity == ("self",)


def test_reaction_told_as_the_condition_it_caused(vocab):
    records = parse("ibuprofen", "Tiền sử hen, mày đay, viêm mũi hoặc phù mạch khi dùng acid acetylsalicylic hoặc "
                                 "thuốc chống viêm không steroid khác.", vocab)
    asthma = next(r for r in records if r.conditions == ("hen phế quản",))
    assert "nsaid" in asthma.hypersensitivity


def test_purpose(vocab):
    [record] = parse("levothyroxin", "Không dùng levothyroxin để điều trị béo phì hoặc giảm cân.", vocab)
    assert record.purposes == ("weight_loss",) and not record.conditions


def test_opioid_withdrawal_purpose(vocab):
    [record] = parse("tramadol", "Dùng để điều trị cai nghiện opioid.", vocab)
    assert record.purposes == ("opioid_withdrawal",)


def test_co_medication_by_book_drug_with_a_dose_threshold(vocab):
    [record] = parse("acid_acetylsalicylic", "Phối hợp với methotrexat liều từ 15 mg/tuần trở lên, khi dùng acid "
                                             "acetylsalicylic liều giảm đau, hạ sốt hoặc chống viêm.", vocab)
    assert "methotrexat" in record.co_medications
    assert Threshold("dose_per_week", ">=", 15.0, "mg/tuần") in record.thresholds


def test_co_medication_not_in_the_book_and_by_class(vocab):
    assert parse("esomeprazol", "Dùng đồng thời với nelfinavir.", vocab)[0].co_medications == ("nelfinavir",)
    [record] = parse("tramadol", "Đang dùng thuốc ức chế monoamin oxidase (IMAO) hoặc mới ngừng trong vòng 14 ngày.",
                     vocab)
    assert record.co_medications == ("maoi",)


def test_condition_of_the_patient_beside_a_co_medication(vocab):
    records = parse("clarithromycin", "Dùng đồng thời với colchicin ở người suy gan hoặc suy thận.", vocab)
    assert {r.conditions for r in records} == {("suy gan",), ("suy thận",)}
    assert all(r.co_medications == ("colchicin",) for r in records)


def test_consequences_of_a_co_medication_are_not_conditions(vocab):
    records = parse("clarithromycin", "Dùng đồng thời với ergotamin hoặc dihydroergotamin (ngộ độc nấm cựa gà).", vocab)
    assert all(not r.conditions for r in records)


def test_preterm_and_jaundiced_newborns(vocab):
    [preterm] = parse("ceftriaxon", "Trẻ sinh non đến tuổi điều chỉnh 41 tuần.", vocab)
    assert preterm.preterm is True and preterm.population is None
    records = parse("ceftriaxon", "Trẻ sơ sinh đủ tháng (đến 28 ngày tuổi) có tăng bilirubin máu, vàng da, giảm "
                                  "albumin máu hoặc nhiễm toan, do nguy cơ bệnh não do bilirubin.", vocab)
    jaundiced = [r for r in records if r.jaundice]
    assert len(jaundiced) == 1 and jaundiced[0].preterm is False and jaundiced[0].population is not None
    assert all("bệnh não" not in " ".join(r.conditions) for r in records)


def test_population_with_trimester_and_dose(vocab):
    [record] = parse("acid_acetylsalicylic", "Ba tháng cuối thai kỳ khi dùng liều trên 100 mg/ngày.", vocab)
    assert record.population is not None and record.population.trimesters == (3,)
    assert record.thresholds == (Threshold("dose_per_day", ">", 100.0, "mg/ngày"),)


def test_exception_is_not_a_condition(vocab):
    records = parse("doxycyclin", "Trẻ em dưới 8 tuổi (thuốc gây đổi màu răng vĩnh viễn), trừ nhiễm khuẩn nặng hoặc "
                                  "đe dọa tính mạng khi không có thuốc thay thế phù hợp.", vocab)
    assert [r.population.max_age_years for r in records if r.population] == [8.0]
    assert all(not r.conditions for r in records)


def test_cause_is_not_a_condition(vocab):
    records = parse("gliclazid", "Nhiễm toan ceton do đái tháo đường, tiền hôn mê và hôn mê đái tháo đường.", vocab)
    assert all("đái tháo đường" not in r.conditions for r in records)


def test_form_limited_clause(vocab):
    records = parse("dexamethason", "Thuốc nhỏ mắt: nhiễm virus (herpes simplex giác mạc, thủy đậu), nhiễm nấm.", vocab)
    assert records and all(r.form == "thuốc nhỏ mắt" for r in records)


def test_condition_that_comes_with_another_is_one_record(vocab):
    records = parse("digoxin", "Rung nhĩ hoặc cuồng nhĩ kèm hội chứng Wolff-Parkinson-White hoặc đường dẫn truyền phụ "
                               "(nguy cơ rung thất).", vocab)
    af = next(r for r in records if r.conditions == ("rung nhĩ",))
    assert af.severity is not None and af.severity.startswith("kèm hội chứng wolff")


def test_what_the_drug_would_treat_is_not_a_condition_of_the_patient(vocab):
    assert parse("montelukast", "Không dùng montelukast để điều trị cơn hen cấp.", vocab, "than_trong") == []
    records = parse("acid_valproic", "Phụ nữ có thai dùng để điều trị rối loạn lưỡng cực hoặc dự phòng đau nửa đầu.",
                    vocab)
    assert records and all(r.population is not None for r in records)


def test_without_asides():
    assert "đái tháo đường" not in without_asides("Nhiễm toan ceton do đái tháo đường")
    assert "creatinin" in without_asides("Suy thận nặng (độ thanh thải creatinin dưới 30 ml/phút)")


def test_declined_target_outside_contraindications():
    assert declined_target("Không dùng ceftriaxon cho trẻ sinh non.") is not None
    assert declined_target("Lậu không biến chứng, khi không dùng được ceftriaxon.") is None
    assert declined_target("Suy tim (nhịp xoang): không dùng liều nạp; 0,125 mg/ngày.") is None


def test_pregnancy_section_sentence_is_about_pregnancy(book_chunks):
    chunks = with_records(book_chunks)
    statin = [r for c in chunks if c.drug_id == "atorvastatin" and c.section_key == "thoi_ky_mang_thai"
              for r in c.records]
    assert statin and all(r.population is not None and r.population.kind == "pregnancy" for r in statin)


def test_at_least_95_percent_of_contraindication_sentences_parse(book_chunks):
    report = parse_report(with_records(book_chunks))
    sentences = sum(r.sentences for r in report)
    unparsed = sum(len(r.unparsed) for r in report)
    assert sentences > 300 and (sentences - unparsed) / sentences >= 0.95


def test_records_survive_the_payload_round_trip(book_chunks):
    chunk = next(c for c in with_records(book_chunks) if c.drug_id == "cetirizin" and c.section_key == "chong_chi_dinh")
    assert chunk.records
    assert Chunk.from_payload(chunk.payload()).records == chunk.records


# --- the book's records judged for a patient (issue 24's examples) --------------------------------

from duocthu.drug_classes import classes_of  # noqa: E402
from duocthu.retrieval.reasoning import Status, judge  # noqa: E402
from duocthu.understanding.frame import PatientFacts, PatientMeasure  # noqa: E402


@pytest.fixture(scope="module")
def book(book_chunks):
    chunks = with_records(book_chunks)
    records: dict[str, list] = {}
    atc: dict[str, tuple[str, ...]] = {}
    for chunk in chunks:
        records.setdefault(chunk.drug_id, []).extend(chunk.records)
        atc[chunk.drug_id] = chunk.atc_codes
    return records, {drug: classes_of(codes) for drug, codes in atc.items()}


def statuses(book, drug_id, patient, age=None, weight=None):
    records, classes = book
    return [judge(r, patient, age, weight, classes[drug_id], classes_by_drug=classes) for r in records[drug_id]]


def kinds(verdicts):
    return {v.status for v in verdicts}


def test_no_fact_no_verdict_but_not_raised(book):
    records, _ = book
    for drug_id in records:
        assert kinds(statuses(book, drug_id, PatientFacts())) <= {Status.NOT_RAISED}, drug_id


def test_term_baby_without_jaundice_is_not_refused_ceftriaxone(book):
    verdicts = statuses(book, "ceftriaxon", PatientFacts(preterm=False, jaundice=False), age=20 / 365)
    assert not kinds(verdicts) & {Status.APPLIES, Status.UNDETERMINED}
    unknown = statuses(book, "ceftriaxon", PatientFacts(), age=20 / 365)
    assert "Bé sinh đủ tháng hay sinh non?" in {v.question for v in unknown if v.status == Status.UNDETERMINED}
    assert Status.APPLIES in kinds(statuses(book, "ceftriaxon", PatientFacts(preterm=True), age=20 / 365))


def test_clearance_compared_with_cetirizine(book):
    low = PatientFacts(measures=[PatientMeasure(quantity="creatinine_clearance", value=8, unit="ml/phút")])
    fine = PatientFacts(measures=[PatientMeasure(quantity="creatinine_clearance", value=45, unit="ml/phút")])
    assert Status.APPLIES in kinds(statuses(book, "cetirizin", low))
    assert Status.APPLIES not in kinds(statuses(book, "cetirizin", fine))
    vague = statuses(book, "cetirizin", PatientFacts(conditions=["suy thận"]))
    assert {v.question for v in vague if v.status == Status.UNDETERMINED} == {"Độ thanh thải creatinin là bao nhiêu?"}


def test_potassium_with_spironolactone(book):
    patient = PatientFacts(measures=[PatientMeasure(quantity="potassium", value=5.9, unit="mmol/l")])
    assert Status.APPLIES in kinds(statuses(book, "spironolacton", patient))


def test_purposes_levothyroxine_and_tramadol(book):
    assert Status.APPLIES in kinds(statuses(book, "levothyroxin", PatientFacts(purposes=["weight_loss"])))
    assert Status.APPLIES in kinds(statuses(book, "tramadol", PatientFacts(purposes=["opioid_withdrawal"])))


def test_denials_leave_ibuprofen_free(book):
    patient = PatientFacts(denied_conditions=["loét dạ dày tá tràng", "hen phế quản"])
    assert not kinds(statuses(book, "ibuprofen", patient, age=40)) & {Status.APPLIES, Status.UNDETERMINED}


def test_digoxin_for_atrial_fibrillation_is_asked_not_refused(book):
    verdicts = statuses(book, "digoxin", PatientFacts(conditions=["rung nhĩ"]))
    assert Status.APPLIES not in kinds(verdicts) and Status.UNDETERMINED in kinds(verdicts)


def test_class_reactions_in_any_form(book):
    assert Status.APPLIES in kinds(statuses(book, "amoxicilin", PatientFacts(allergy_classes=["penicilin"])))
    assert Status.APPLIES in kinds(statuses(book, "ciprofloxacin", PatientFacts(allergies=["levofloxacin"])))
    unnamed = statuses(book, "amoxicilin", PatientFacts(unnamed_allergy=True))
    assert "Bạn bị dị ứng với thuốc nào?" in {v.question for v in unnamed}
