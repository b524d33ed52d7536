"""Honest drug resolution: book names resolve, other real drugs are named, near misses are announced or asked."""

from __future__ import annotations

import pytest

from tests.understanding_helpers import demo_entities


def resolve(text):
    return demo_entities().resolver.resolve(text)


@pytest.mark.parametrize("text, drug_id", [
    ("Panadol uống mấy viên", "paracetamol"),            # brand
    ("amoxicillin trị gì", "amoxicilin"),                  # English INN
    ("ACID ACETYLSALICYLIC", "acid_acetylsalicylic"),      # multi-word, case
    ("Augmentin cho trẻ", "amoxicilin_acid_clavulanic"),   # a combination that is a monograph
    ("albuterol inhaler dose", "salbutamol"),              # US name
    ("acetaminophen overdose", "paracetamol"),              # US name
    ("Prilosec before breakfast?", "omeprazol"),             # US brand
    ("thyroxine in the morning", "levothyroxin"),            # UK name
])
def test_exact_names_aliases_and_brands_resolve(text, drug_id):
    result = resolve(text)
    assert [m.drug_id for m in result.mentions] == [drug_id] and not result.mentions[0].fuzzy


@pytest.mark.parametrize("typed, drug_id", [("clopidogel", "clopidogrel"), ("metfomin", "metformin"),
                                            ("omeprazon", "omeprazol"), ("ibuprofene", "ibuprofen")])
def test_a_misspelling_close_to_one_name_resolves_and_is_marked(typed, drug_id):
    mention = resolve(f"{typed} uống lúc nào").mentions[0]
    assert (mention.drug_id, mention.fuzzy, mention.surface) == (drug_id, True, typed)


@pytest.mark.parametrize("typed, look_alike", [("digitoxin", "digoxin"), ("prednison", "prednisolon"),
                                               ("tobramycin", "doxycyclin")])
def test_another_real_drug_is_never_replaced(typed, look_alike):
    result = resolve(f"{typed} liều bao nhiêu")
    assert not result.mentions
    assert [u.name for u in result.unknown] == [typed]


def test_a_look_alike_is_offered_not_substituted():
    unknown = resolve("Digitoxin liều duy trì cho người lớn?").unknown[0]
    assert (unknown.name, unknown.suggestion) == ("digitoxin", "digoxin")


def test_an_inn_stem_names_a_medicine_even_outside_the_lexicon():
    assert [u.kind for u in resolve("thuốc xyzolol dùng sao").unknown] == ["unlisted"]
    assert [u.name for u in resolve("rosuvastatin 10mg").unknown] == ["rosuvastatin"]


def test_a_distant_near_miss_is_ambiguous():
    # Two edits from levofloxacin and carrying an INN stem: not read as it, offered instead.
    result = resolve("levofloxan uống mấy lần")
    assert not result.mentions and result.ambiguous and "levofloxacin" in result.ambiguous[0].candidates


def test_combination_products_resolve_to_their_components():
    product = resolve("Efferalgan Codein liều người lớn").products[0]
    assert (product.covered, product.uncovered) == (("paracetamol",), ("codein",))
    tiffy = resolve("uống Tiffy với ibuprofen").products[0]
    assert "paracetamol" in tiffy.covered and set(tiffy.uncovered) >= {"phenylephrin"}


def test_ordinary_words_are_not_drugs():
    bartholin = resolve("Bệnh u nang bartholin có nguy hiểm không?")
    assert not bartholin.mentions and not bartholin.unknown  # left for the understander to judge
    assert not resolve("độ thanh thải creatinin 35 ml/phút").unknown
    assert not resolve("kem bôi da").unknown  # "kem" is not "kẽm"
    assert [u.name for u in resolve("bà bầu uống sắt được không").unknown] == ["sắt"]


def test_other_drug_terms_include_spellings():
    terms = demo_entities().resolver.other_drug_terms(["sildenafil"])
    assert terms[0] == "sildenafil" and len(terms) >= 1


def test_a_combination_written_out_with_a_component_not_in_the_book_is_one_product():
    from tests.understanding_helpers import demo_entities
    resolution = demo_entities().resolver.resolve("Viên phối hợp metformin + sitagliptin uống thế nào?")
    assert resolution.products and resolution.products[0].uncovered == ("sitagliptin",)
    assert not demo_entities().resolver.resolve("Metformin uống cùng gliclazid được không?").products


def test_an_acronym_with_a_number_is_a_score_not_a_medicine():
    resolution = demo_entities().resolver.resolve("Kết quả BIRADS 4 thì có cần sinh thiết không?")
    assert not resolution.unknown


def test_a_brand_not_in_the_book_is_looked_for_by_its_ingredient_and_class():
    terms = demo_entities().resolver.other_drug_terms(["Xarelto"])
    assert "rivaroxaban" in terms and "thuốc chống đông" in terms


def test_a_two_edit_misspelling_with_an_inn_stem_resolves_when_no_other_medicine_is_near():
    mention = resolve("hydroclothiazid uống buổi nào").mentions[0]
    assert (mention.drug_id, mention.fuzzy) == ("hydroclorothiazid", True)
    assert not resolve("clorothiazid uống buổi nào").mentions  # another real drug of the stem


def test_the_start_of_one_name_of_the_book_is_read_as_it_and_marked():
    mention = resolve("amoxi 500 ngày uống mấy lần").mentions[0]
    assert (mention.drug_id, mention.fuzzy) == ("amoxicilin", True)


def test_a_start_shared_by_two_names_of_the_book_is_asked():
    found = resolve("clari uống trước hay sau ăn")  # Clarityne (loratadin)? clarithromycin?
    assert not found.mentions and set(found.ambiguous[0].candidates) == {"loratadin", "clarithromycin"}


def test_a_hyphenated_chemical_name_is_a_medicine_not_in_the_book():
    assert [u.name for u in resolve("Beta-glucan uống sau ăn được không").unknown] == ["Beta-glucan"]


def test_a_near_miss_that_changes_the_first_letter_is_asked_not_read():
    found = resolve("Kalerid uống sau ăn được không")  # one edit from the brand Alerid, but not its start
    assert not found.mentions and "cetirizin" in found.ambiguous[0].candidates


def test_a_rival_that_does_not_share_the_start_does_not_block_a_reading():
    mention = resolve("clopidogrl uống lúc nào").mentions[0]
    assert mention.drug_id == "clopidogrel" and mention.fuzzy
