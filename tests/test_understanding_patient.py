"""Patient facts of one turn: who, age, weight, pregnancy, conditions, medicines being taken."""

from __future__ import annotations

from duocthu.understanding.frame import Population
from duocthu.understanding.patient import clause_of_tokens, extract_facts
from tests.understanding_helpers import demo_entities


def facts(text):
    entities = demo_entities()
    return extract_facts(text, entities.resolver.resolve(text), entities.lexicon)


def test_the_medicine_taken_is_the_one_in_the_cue_clause():
    f = facts("Đang dùng isosorbid dinitrat thì uống sildenafil được không?")
    assert f.current_medications == ("isosorbid_dinitrat",) and f.other_medications == ()
    f = facts("tôi đang uống warfarin và aspirin, có uống thêm ibuprofen được ko")
    assert f.current_medications == ("warfarin", "acid_acetylsalicylic")


def test_a_pronoun_in_the_cue_clause_is_the_conversation_s_drug():
    assert facts("Tôi đang uống nó, giờ đau răng uống ibuprofen được không?").current_pronoun


def test_who_how_old_how_heavy():
    f = facts("Bé 6 tuổi nặng 20 kg bị đau răng")
    assert (f.population, f.age.years, f.weight_kg, f.states_population) == (Population.PEDIATRIC, 6.0, 20.0, True)
    assert facts("mẹ tôi 70 tuổi").population is Population.ELDERLY


def test_pregnancy_breastfeeding_and_negation():
    assert (facts("vợ tôi mang thai 7 tháng").pregnant, facts("vợ tôi mang thai 7 tháng").trimester) == (True, 3)
    assert facts("thai 32 tuần, đau lưng").pregnant is True  # a gestation says pregnant
    assert facts("tôi không có thai").pregnant is False
    assert facts("đang cho con bú").breastfeeding is True


def test_conditions_are_the_patient_s_not_uses():
    assert facts("Người có tiền sử hen dùng propranolol").conditions == ("hen phế quản",)
    assert "hạ sốt" not in facts("uống aspirin để hạ sốt").conditions


def test_clauses_end_at_punctuation_and_linking_words():
    assert clause_of_tokens("đang uống A, thì uống B") == [0, 0, 0, 2, 2, 2]


def test_an_allergy_is_recorded_and_its_drug_is_not_taken_nor_asked():
    f = facts("Tôi bị dị ứng với cefalexin, giờ bác sĩ cho uống azithromycin có được không?")
    assert f.allergies == ("cefalexin",) and f.history_drugs == ("cefalexin",) and not f.current_medications
    unknown = facts("Em mẫn cảm với sulfamethoxazol, dùng ciprofloxacin được không?")
    assert "sulfamethoxazol" in unknown.allergies


def test_an_allergy_span_stops_before_the_next_drug_asked():
    f = facts("bị dị ứng phấn hoa uống thêm loratadin có sao không")
    assert "loratadin" not in f.allergies and not f.history_drugs


def test_a_past_reaction_is_background_unless_the_drug_is_named_again():
    past = facts("Năm ngoái tôi uống diclofenac thì bị nổi mẩn khắp người, nay đau lưng dùng naproxen được không?")
    assert past.history_drugs == ("diclofenac",) and "diclofenac" in past.allergies
    again = facts("Trước đây tôi uống metformin bị tiêu chảy, giờ bác sĩ lại kê Glucophage thì sao?")
    assert again.history_drugs == ()  # Glucophage is metformin, asked about now


def test_a_condition_a_drug_may_cause_is_not_the_patient_s():
    assert "hạ đường huyết" not in facts("Gliclazid có gây hạ đường huyết không?").conditions


def test_pregnancy_makes_an_adult_unless_an_age_says_otherwise():
    assert facts("đang mang thai tháng thứ 4, uống cetirizin được không").population is Population.ADULT
    assert facts("Người lớn uống loratadin mấy viên một ngày").age is None  # "một ngày" is a frequency


def test_a_nursing_baby_s_age_is_not_the_patient_s():
    f = facts("Tôi cho con bú được 4 tháng, bị cảm dùng cetirizin có sao không")
    assert f.breastfeeding is True and f.age is None and f.population is Population.ADULT


def test_a_condition_since_childhood_does_not_make_a_child():
    assert facts("Tôi bị hen từ nhỏ, giờ uống ibuprofen được không").population is not Population.PEDIATRIC


def test_a_week_of_gestation_says_pregnant():
    assert facts("vợ em đang ở tuần thai thứ 30").pregnant is True


def test_an_infusion_running_is_a_medicine_taken():
    assert facts("Bệnh nhân đang truyền heparin, thêm aspirin được không?").current_medications == ("heparin",)


def test_an_allergen_that_is_not_a_drug_of_the_book_is_recorded():
    assert "iod" in facts("Tôi có tiền sử dị ứng iod, dùng amiodaron được không?").allergies


def test_a_drug_after_when_is_the_cause_of_the_reaction_not_the_question():
    f = facts("Tôi bị dị ứng khi uống amoxicilin, giờ dùng cefalexin được không?")
    assert "amoxicilin" in f.allergies and "cefalexin" not in f.allergies


def test_a_class_reacted_to_in_childhood_is_an_allergy():
    assert "penicilin" in facts("Hồi nhỏ tôi tiêm penicilin bị nổi mề đay khắp người").allergies


def test_a_medicine_used_habitually_is_a_medicine_taken():
    f = facts("Bố tôi hay uống aspirin, giờ đau răng dùng ibuprofen được không?")
    assert f.current_medications == ("acid_acetylsalicylic",)


def test_a_weight_alone_does_not_say_adult_or_child():
    assert facts("tôi nặng 45 kg uống cetirizin mấy viên").population is None
    assert facts("chồng tôi nặng 70 kg").population is Population.ADULT  # said who
    assert facts("tôi 40 tuổi nặng 45 kg").population is Population.ADULT


def test_a_creatinine_clearance_is_an_adult_dose_question():
    f = facts("do thanh thai creatinin 28 ml/phut thi gentamicin dung the nao")
    assert f.population is Population.ADULT and f.renal_clearance_ml_min == 28


def test_a_drug_after_sau_khi_in_a_past_reaction_is_its_cause():
    f = facts("Tôi từng bị phù môi sau khi uống aspirin, giờ đau đầu uống paracetamol được không?")
    assert "acid_acetylsalicylic" in f.allergies and "acid_acetylsalicylic" in f.history_drugs


def test_a_positive_home_test_is_a_pregnancy():
    assert facts("Em thử que 2 vạch rồi, đang uống thuốc động kinh").pregnant


def test_taking_it_every_day_is_the_conversation_s_drug_taken():
    assert facts("Tôi uống nó mỗi ngày, giờ đau lưng uống ibuprofen được không?").current_pronoun


def test_giving_it_to_the_child_names_a_child():
    assert facts("Amoxicilin cho con dùng được không?").population is Population.PEDIATRIC


def test_a_drug_after_which_something_happened_years_ago_is_history():
    f = facts("Ba năm trước tôi bị viêm gân sau đợt dùng ciprofloxacin, giờ dùng levofloxacin được không?")
    assert f.history_drugs == ("ciprofloxacin",)


def test_taking_it_for_years_is_taking_it_now():
    assert facts("Mẹ tôi uống nó nhiều năm nay rồi").current_pronoun


def test_a_nursing_parent_asks_about_their_own_medicine_not_the_infant_s():
    f = facts("Con tôi mới sinh 2 tuần, bé bú mẹ hoàn toàn. Tôi đang uống enalapril có sao không?")
    assert f.breastfeeding and f.age is None and f.population is Population.ADULT


def test_a_child_given_the_drug_stays_the_patient():
    f = facts("Bé 3 tháng tuổi đang bú mẹ, cho bé uống paracetamol được không?")
    assert f.population is Population.PEDIATRIC


def test_taking_it_every_morning_is_the_conversation_s_drug_taken():
    assert facts("Tối nào mình cũng uống nó, giờ đau khớp dùng thêm meloxicam được không?").current_pronoun


def test_a_drug_that_caused_a_history_is_not_the_drug_asked():
    f = facts("Mình có tiền sử nổi mề đay khi dùng amoxicilin, cefalexin có dùng được không?")
    assert f.history_drugs == ("amoxicilin",)


def test_weeks_since_giving_birth_are_not_an_age():
    f = facts("Tôi mới sinh được 3 tuần, bác sĩ kê amlodipin, có cần lưu ý gì không?")
    assert f.age is None and f.population is Population.ADULT and not f.breastfeeding
    nursing = facts("Bé được 5 tuần, đang bú mẹ; mình vẫn phải dùng metoprolol hằng ngày, có sao cho bé không?")
    assert nursing.breastfeeding and nursing.age is None


def test_a_drug_taken_and_then_asked_about_is_both():
    f = facts("Bố tôi đang uống Plavix sau đặt stent. Plavix là thuốc gì?")
    assert f.current_medications == ("clopidogrel",) and f.taken_and_asked == ("clopidogrel",)
    assert facts("Bố tôi đang uống Plavix, giờ đau răng uống ibuprofen được không?").taken_and_asked == ()


def test_a_list_of_medicines_taken_closes_with_va_or_voi():
    f = facts("Mẹ tôi hằng ngày uống metformin 850, losartan 50 và atorvastatin 10. Ho thì uống gì?")
    assert f.current_medications == ("metformin", "losartan", "atorvastatin")
    asked = facts("Tôi đang uống losartan, amoxicilin có uống được không?")
    assert asked.current_medications == ("losartan",)


def test_taking_it_each_evening_is_the_conversation_s_drug_taken():
    assert facts("Tôi dùng nó mỗi tối, giờ bị ho uống thêm siro được không?").current_pronoun


def test_a_nursing_mother_with_her_own_illness_is_the_patient():
    f = facts("Bé nhà em 2 tuần tuổi đang bú mẹ. Em bị viêm bàng quang, uống cefalexin có ảnh hưởng sữa không?")
    assert f.breastfeeding and f.age is None and f.population is Population.ADULT


def test_a_failing_organ_named_before_the_word_suy():
    assert "suy thận nặng" in facts("Thận của mẹ tôi bác sĩ nói suy nặng rồi, dùng metformin được không?").conditions
    assert not facts("Tim đập nhanh, suy nghĩ nhiều, uống propranolol được không?").conditions


def test_a_dose_reduction_for_liver_or_kidney_failure_is_an_adult_question():
    assert facts("Người xơ gan dùng morphin phải giảm liều bao nhiêu?").population is Population.ADULT
    assert facts("Bé 4 tuổi suy thận, amoxicilin giảm liều bao nhiêu?").population is Population.PEDIATRIC


def test_a_product_reacted_to_is_an_allergy_to_its_ingredient():
    assert "valaciclovir" in facts("Hồi trước uống Valtrex bị nổi mề đay khắp người").allergies


def test_a_weight_no_adult_has_is_a_child():
    assert facts("Bé nặng 14 kg").population is Population.PEDIATRIC
    assert facts("con nặng 16 ký").population is Population.PEDIATRIC
    assert facts("Mình nặng 45 kg").population is None


def test_how_often_a_medicine_is_taken_does_not_close_a_list():
    f = facts("Tôi đang uống warfarin ngày 1 lần, ibuprofen có được không?")
    assert f.current_medications == ("warfarin",)


def test_a_medicine_not_in_the_book_that_caused_an_allergic_rash_is_an_allergy():
    assert "cefaclor" in facts("Trước đây dùng cefaclor bị phát ban đỏ, nay uống cefalexin được không?").allergies
    # an upset stomach after a medicine is a side effect, not an allergy
    assert facts("Trước đây dùng cefaclor bị đau bụng, nay uống cefalexin được không?").allergies == ()


def test_a_year_told_as_when_it_happened_is_the_past():
    f = facts("Năm 2018 em dùng ibuprofen bị nổi mề đay, giờ đau răng uống paracetamol được không?")
    assert "ibuprofen" in f.allergies and "ibuprofen" in f.history_drugs
