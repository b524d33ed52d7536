"""Reverse-lookup questions with two conditions: which is asked, which is the patient's."""

from __future__ import annotations

import pytest

from duocthu.understanding.learned import book_indication_within
from duocthu.understanding.reverse import condition_answer, qualified_prefixes, split_conditions
from tests.understanding_helpers import demo_entities


def split(text):
    entities = demo_entities()
    return split_conditions(text, entities.drug_spans, entities.patient_conditions)


@pytest.mark.parametrize("text, asked, patient", [
    ("Thuốc nào chữa mất ngủ cho người bị suy gan?", "mất ngủ", "suy gan"),
    ("Người bị loét dạ dày mà đau khớp thì uống thuốc gì?", "đau khớp", "loét dạ dày"),
    ("Bệnh nhân hen phế quản bị tăng huyết áp dùng thuốc gì?", "tăng huyết áp", "hen phế quản"),
    ("Đái tháo đường kèm suy thận nặng thì dùng thuốc gì?", "đái tháo đường", "suy thận nặng"),
    ("Bị suy tim, lại đau răng thì uống thuốc giảm đau nào?", "đau răng", "suy tim"),
])
def test_the_asked_condition_and_the_patient_s(text, asked, patient):
    condition, comorbidities = split(text)
    assert condition == asked
    assert any(patient in c for c in comorbidities)


def test_only_a_patient_condition_is_the_one_asked():
    assert split("Thuốc gì dùng cho người bị gút?") == ("gút", [])


def test_a_reply_to_which_condition_drops_the_talk_around_it():
    assert condition_answer("đau bụng ạ") == "đau bụng"
    assert condition_answer("bị viêm họng thôi") == "viêm họng"


def test_the_book_s_phrase_inside_what_the_user_wrote():
    lexicon = demo_entities().lexicon
    assert "trứng cá" in book_indication_within("trứng cá bọc", lexicon)
    assert book_indication_within("động kinh viêm phổi", lexicon) == []  # too little of it covered


def test_what_the_drug_should_do_is_not_the_condition_s_name():
    condition, _ = split("Có thuốc gì giảm đau lưng cho người bị suy thận không?")
    assert condition == "đau lưng"


def test_words_typed_with_accents_are_chatter_but_the_same_letters_unaccented_may_be_a_condition():
    condition, _ = split("Đau dạ dày hoài thì uống thuốc nào đây?")
    assert condition == "đau dạ dày"
    condition, _ = split("thuoc nao tri dau da day")
    assert condition == "dau da day"


def test_the_book_s_name_and_the_verb_of_killing_a_germ_are_not_the_condition():
    assert split("Trong Dược thư có thuốc nào dùng cho viêm xoang không?")[0] == "viêm xoang"
    assert split("Thuốc nào tiêu diệt vi khuẩn lao?")[0] == "vi khuẩn lao"


def test_asking_for_relief_is_not_a_condition():
    assert split("Bị viêm họng thì uống thuốc gì cho đỡ?") == ("viêm họng", [])


def test_a_number_that_qualifies_the_condition_is_kept():
    assert split("Bị đái tháo đường typ 1 thì dùng thuốc gì?")[0] == "đái tháo đường typ 1"


def test_a_question_typed_without_accents_splits_at_the_same_words():
    condition, patient = split("nguoi bi suy than thi uong thuoc gi tri gut")
    assert condition == "gut" and "suy thận" in patient


def test_no_typed_as_ko_is_not_part_of_the_condition():
    assert split("co thuoc nao tri ho ko")[0] == "ho"


def test_unaccented_dang_is_not_the_filler_dang():
    assert split("thuoc nao tri viem khop dang thap")[0] == "viem khop dang thap"
    assert split("Đang bị đau họng thì uống thuốc gì?")[0] == "đau họng"


def test_the_list_asked_for_is_not_part_of_the_condition():
    assert split("Thuốc chữa gút gồm những thuốc nào?")[0] == "gút"


@pytest.mark.parametrize("text", ["Cho em xin tên vài thuốc chữa bệnh", "Bệnh mình đang mắc thì uống gì?"])
def test_asking_for_a_list_or_having_a_disease_names_no_condition(text):
    assert split(text)[0] is None


def test_a_book_phrase_with_the_word_mac_keeps_it():
    assert split("Thuốc nào trị viêm phổi mắc phải cộng đồng?")[0] == "viêm phổi mắc phải cộng đồng"


def test_an_organ_failure_beside_another_condition_is_the_patient_s_state():
    asked, patient = split("Bị gút mà suy gan thì dùng thuốc gì?")
    assert asked == "gút" and patient == ["suy gan"]


def test_what_a_drug_should_do_to_one_word_condition_is_stripped():
    assert split("Thuốc nào để giảm phù?")[0] == "phù"


def test_a_use_verb_typed_without_diacritics_is_stripped():
    assert split("thuoc nao diet Helicobacter pylori")[0] == "helicobacter pylori"


def test_with_or_without_complications_stays_in_the_condition():
    assert split("Thuốc nào trị viêm bàng quang có biến chứng?")[0] == "viêm bàng quang có biến chứng"


def test_the_condition_of_someone_who_has_another():
    asked, patient = split("Tăng huyết áp ở người đang bị đái tháo đường thì dùng thuốc gì?")
    assert asked == "tăng huyết áp" and patient and "ở" not in patient


@pytest.mark.parametrize("text, asked, patient", [
    ("Hen phế quản mà bị tăng huyết áp thì dùng thuốc gì?", "hen phế quản", "tăng huyết áp"),
    ("Bị viêm khớp dạng thấp mà có loét dạ dày thì uống thuốc gì?", "viêm khớp dạng thấp", "loét dạ dày"),
])
def test_what_the_patient_also_has_is_their_state(text, asked, patient):
    found, others = split(text)
    assert found == asked and any(patient in o for o in others)


def test_a_symptom_that_came_on_is_what_needs_a_drug():
    assert split("Bị viêm dạ dày mà bị đau đầu thì uống thuốc gì?")[0] == "đau đầu"


def test_a_first_person_history_after_the_question_is_the_patient_s():
    condition, patient = split("Bị gút cấp thì dùng thuốc gì, tôi có tiền sử lên cơn hen?")
    assert condition == "gút cấp" and any("hen" in p for p in patient)


def test_an_unaccented_word_inside_the_condition_is_not_a_filler():
    assert split("thuoc nao tri huyet khoi tinh mach sau")[0] == "huyet khoi tinh mach sau"


def test_talking_to_the_assistant_and_how_often_it_happens_are_not_part_of_the_condition():
    assert split("Hay bị mất ngủ lắm, có thuốc gì không bạn?")[0] == "mất ngủ"
    assert condition_answer("ý tôi là viêm họng") == "viêm họng"
    assert split("thuoc nao tri phat ban")[0] == "phat ban"  # unaccented "ban" may be the rash, not "bạn"


def test_a_vague_complaint_called_minor_is_still_vague():
    from duocthu.understanding.reverse import is_ambiguous_condition

    assert is_ambiguous_condition(split("Người cứ mệt mỏi, mấy chứng linh tinh, nên uống gì?")[0])


def test_a_longer_phrase_with_another_content_word_is_another_condition():
    lexicon = demo_entities().lexicon
    assert book_indication_within("đau đầu vú", lexicon) == []  # "vú" makes it another condition
    assert "thoái hóa khớp" in book_indication_within("thoái hóa khớp gối", lexicon)  # where, not another one
    assert "trứng cá" in book_indication_within("trứng cá viêm nặng", lexicon)  # how severe is still acne


def test_a_headache_inside_a_nipple_pain_is_not_another_condition_of_the_question():
    from duocthu.understanding.wording import names_another_condition

    assert names_another_condition("đau đầu vú", "đau đầu")
    assert not names_another_condition("mề đay mạn tính", "mề đay")
    # a phrase of its own after it is a second condition run on, not another name of the first
    assert not names_another_condition("viêm họng ho có đờm", "viêm họng")


def test_a_lone_generic_word_is_never_the_condition():
    assert split("Có thuốc gì giúp giảm cân không?")[0] is None
    assert split("thuốc nào tốt cho sức khỏe")[0] is None


def test_a_name_with_its_number_keeps_it():
    assert split("Thuốc nào trị COVID-19?")[0] == "covid 19"
    assert split("bé 2 tuổi bị sốt thì uống thuốc gì")[0] == "sốt"  # an age is no part of a name


def test_the_name_before_how_bad_it_got_is_looked_up():
    assert qualified_prefixes("covid 19 nặng phải thở oxy") == ["covid 19 nặng", "covid 19"]
    assert qualified_prefixes("đau đầu vú") == []


def test_prevention_and_its_circumstance():
    assert split("Có thuốc nào uống ngừa sốt rét trước khi đi rừng không?")[0] == "ngừa sốt rét"
    assert split("Nổi mề đay mãn tính mấy tháng nay thì uống thuốc gì?")[0] == "nổi mề đay mãn tính"
    assert split("Bị covid-19 nặng, trong danh mục có thuốc nào dùng được?")[0] == "covid 19 nặng"


def test_an_english_question_s_condition_without_its_english_words():
    from duocthu.understanding.reverse import written_in_english

    assert split("What medicine can I take for acid reflux and heartburn?")[0] == "acid reflux heartburn"
    assert written_in_english("what can i take for a gout flare")
    assert not written_in_english("thuoc nao tri run vo can")  # unaccented Vietnamese: "can" may be "căn"


def test_english_and_lay_names_of_a_condition_reach_the_book_s_words():
    from duocthu.understanding.learned import indication_alternatives

    lexicon = demo_entities().lexicon
    assert "cơn gút cấp" in indication_alternatives("gout flare", lexicon)
    assert "trào ngược dạ dày thực quản" in indication_alternatives("acid reflux heartburn", lexicon)
