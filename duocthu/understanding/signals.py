"""Crisis, overdose and emergency signals: phrase tables matched on whole words, with or without diacritics.

They are the cue table's first rows (``cues.py``): safety overrides that do not wait for the intent
model. Precision matters as much as recall — "thuốc X có gây khó thở không?" asks about a side
effect; "tôi đang khó thở quá" is an emergency — so an emergency sign counts only when the turn
describes someone now, and not when it asks what a drug does.
"""

from __future__ import annotations

import re

from duocthu.text import fold, normalize, phrase_set, word_forms
from duocthu.understanding.quantities import count_taken, folded_with_digits
from duocthu.understanding.scope import has_phrase

SELF_HARM_PHRASES = (
    "muốn chết", "muốn tự tử", "tự tử", "tự sát", "không muốn sống", "không muốn sống nữa", "chán sống",
    "không thiết sống", "chẳng thiết sống", "kết thúc cuộc đời", "kết thúc cuộc sống", "kết liễu", "chấm dứt tất cả",
    "chấm dứt cuộc sống", "tự làm hại", "tự hại", "rạch tay", "cắt tay", "nhảy lầu", "treo cổ", "uống thuốc tự tử",
    "uống cho chết", "chết cho xong", "chết quách", "chết đi cho rồi", "thì chết", "để chết", "sẽ chết", "cho chết",
    "liều gây chết", "liều chết người", "liều tử vong", "gây tử vong", "ngủ luôn không dậy", "ngủ mãi không dậy",
    "ngủ một giấc không dậy", "đi luôn cho xong", "ra đi mãi mãi", "không còn muốn sống", "sống không nổi nữa",
    "muốn biến mất", "giải thoát bản thân", "tìm đến cái chết", "nghĩ đến cái chết", "nghĩ tới cái chết",
    "suicide", "kill myself", "end my life", "end it all", "i want to end it", "don't want to live",
    "là gánh nặng của", "gánh nặng của cả nhà", "gánh nặng của gia đình",
    "want to die", "overdose on purpose", "cố tình uống quá liều", "uống hết cả lọ", "uống cả lọ cho",
    "viết thư để lại", "thư tuyệt mệnh", "thư từ biệt", "không tỉnh lại", "không bao giờ tỉnh",
    "nếu tôi không còn", "nếu mình không còn", "khi tôi không còn", "nhẹ nhõm hơn nếu", "bớt gánh nặng cho",
    "không phải thức dậy",
    # Passive wishes to be dead and euphemisms (screened as positive, as a crisis line would).
    "chán đời", "sống làm gì", "sống để làm gì", "sống chẳng để làm gì", "sống chỉ làm khổ", "sống chỉ thêm khổ",
    "sống chỉ là gánh nặng", "là gánh nặng cho", "làm gánh nặng cho", "nhắm mắt xuôi tay", "nhắm mắt lại rồi thôi",
    "nhắm mắt cho xong", "không muốn tỉnh dậy", "không muốn thức dậy", "muốn ngủ mãi", "ngủ mãi mãi",
    "buông xuôi tất cả", "không còn lý do để sống", "không còn lý do gì để sống", "sống vô nghĩa",
    "cuộc sống vô nghĩa", "hết muốn sống", "quyên sinh", "tự vẫn", "tự kết liễu", "không muốn tồn tại",
    "muốn được giải thoát", "tìm cách giải thoát", "xong đời", "chết cho rảnh", "chết cho nhẹ",
    "kết thúc tất cả", "kết thúc mọi thứ", "chấm dứt mọi thứ", "kết thúc mọi chuyện", "chấm dứt mọi chuyện",
    "ra đi nhẹ nhàng", "ra đi thanh thản", "ra đi không đau", "chết nhẹ nhàng", "chết không đau", "chết êm",
    "chết thanh thản",
    # Stockpiling tablets is a plan, whatever words come with it.
    "tích được", "tích trữ thuốc", "gom được", "gom thuốc", "tích thuốc", "gom đủ", "tích đủ",
    # sleep that does not end; not being a bother any more
    "ngủ một giấc không bao giờ dậy", "ngủ không bao giờ dậy", "không bao giờ tỉnh dậy", "ngủ mãi không dậy",
    "ngủ luôn không dậy", "không làm phiền ai nữa", "không làm phiền mọi người nữa", "không còn làm phiền ai",
    # worthlessness said of oneself ("mình chỉ là gánh nặng, chẳng ai cần em cả")
    "chỉ là gánh nặng", "chỉ là cái gánh", "chẳng ai cần em", "chẳng ai cần tôi", "chẳng ai cần mình",
    "không ai cần em", "không ai cần tôi", "không ai cần mình", "không ai cần đến em", "không ai cần đến tôi",
    "không ai cần đến mình", "thừa thãi trên đời", "là người thừa",
)
# "để dành được 30 viên" is a plan; "nửa viên còn lại để dành được mấy ngày" asks about storage.
_SAVED_UP_RE = re.compile(r"\b(?:de danh|giu lai|cat giu)\b(?: \w+){0,3}? (?:\d{2,}|vai chuc|may chuc|ca) ?(?:vien|vi|hop|lo)\b")
# "thì chết", "để chết" only count with a quantity question or a first-person wish (see is_self_harm).
_WEAK_SELF_HARM = ("thì chết", "để chết", "sẽ chết", "cho chết", "liều gây chết", "liều chết người", "liều tử vong",
                   "gây tử vong", "cho xong", "đi luôn", "ngủ luôn", "hết khổ", "cho nhẹ người", "một lần cho xong",
                   # being a burden, said beside a whole pack: "mọi người sẽ nhẹ gánh hơn"
                   "nhẹ gánh", "đỡ gánh", "bớt gánh", "đỡ khổ")
# A lethal outcome counts only asked with an amount ("bao nhiêu viên thì tim ngừng đập / không cứu được nữa"):
# "tôi bị ngừng thở khi ngủ" is sleep apnoea, "bố tôi ngừng thở" an emergency. A farewell counts the same way.
_LETHAL_OUTCOMES = ("ngừng thở", "ngưng thở", "tim ngừng đập", "tim ngưng đập", "ngừng tim", "không cứu được",
                    "không cứu nổi", "hết cứu", "không qua khỏi", "mất mạng", "viết xong thư", "chán lắm rồi",
                    # a letter to the family ("Em viết thư cho mẹ rồi"), not one to the doctor
                    "viết thư cho mẹ", "viết thư cho bố", "viết thư cho ba", "viết thư cho vợ", "viết thư cho chồng",
                    "viết thư cho con", "viết thư cho gia đình", "viết thư cho mọi người", "viết thư cho người yêu",
                    "viết thư rồi")
# "nuốt cả lọ thì mấy tiếng là xong", "uống hết 50 viên thì bao lâu mới đi được": how long until the end,
# asked of a lethal amount (a whole pack, or ten tablets and more: ``count_taken``). "uống 2 viên là xong cơn đau" and
# "uống hết vỉ này là xong à" (the course finished) ask no time to an end.
_ENDING_RE = re.compile(r"\b(?:la|thi|moi) (?:xong|di duoc|di luon|di|ra di|yen|het kho)"
                        r"(?: (?:roi|luon|han|nhi|a|ha|vay|khong|chua|nhe|ca))*\s*(?:[?.!,;]|$)")
_HOW_LONG = ("bao lâu", "mấy tiếng", "mấy giờ", "mấy phút", "bao giờ", "khi nào", "mất bao lâu")
_QUANTITY_WORDS = ("bao nhiêu", "mấy viên", "mấy vỉ", "bao nhiêu viên", "cả vỉ", "cả lọ", "hết vỉ", "hết lọ", "nhiêu",
                   "bao nhiêu đơn vị", "mấy ống", "cả bút", "hết bút", "hết cả", "cả hộp", "hết hộp", "cả chai",
                   "hết chai", "một lúc", "cùng một lúc")
_DRUG_FACT_QUESTIONS = ("có gây", "có làm", "tác dụng phụ", "tác dụng không mong muốn", "có bị", "dễ bị", "nguy cơ",
                        "thuốc nào gây", "thuốc gì gây", "có thể gây", "cảnh báo")
# "ý nghĩ tự sát" as an adverse effect asked about a drug, not said about oneself.
_ADVERSE_EFFECT_FRAMES = ("ý nghĩ tự sát", "hành vi tự sát", "nguy cơ tự sát", "xu hướng tự sát", "ý định tự sát",
                          "ý nghĩ tự tử", "hành vi tự tử", "nguy cơ tự tử")
_FIRST_PERSON = ("tôi", "mình", "tao", "em", "tớ", "con muốn", "cháu muốn")
_BY_ACCIDENT = ("lỡ", "nhầm", "lộn", "lỡ tay")
# Said of a child or someone else, "uống hết cả lọ" is an accident to treat now (overdose taken), not intent.
_AMBIGUOUS_SELF_HARM = ("uống hết cả lọ", "uống cả lọ cho")
_SOMEONE_ELSE = ("con tôi", "con em", "con mình", "bé", "cháu", "thằng bé", "con bé", "trẻ", "bé nhà", "con nhà",
                 "ông", "bà", "bố tôi", "mẹ tôi", "ba tôi", "chồng tôi", "vợ tôi")

OVERDOSE_TAKEN_PHRASES = (
    "lỡ uống", "uống nhầm", "nuốt nhầm", "uống lộn", "uống quá liều rồi", "đã uống quá liều", "vừa uống quá liều",
    "uống cả vỉ", "uống hết vỉ", "uống cả lọ", "uống hết lọ", "uống hết cả", "nuốt cả", "ăn nhầm", "cắn vỡ",
    "uống gấp đôi", "uống gấp ba", "uống dồn", "uống quá nhiều rồi",
    "lỡ cho uống", "lỡ tay cho", "cho uống nhầm", "bé nuốt", "con nuốt", "cháu nuốt", "trẻ nuốt",
    "vừa nuốt", "đã nuốt", "nuốt mất", "nuốt phải", "lần liền", "uống trùng liều", "uống trùng",
    "quên nên uống", "quên lại uống", "quên đã uống", "ăn mấy viên", "ăn phải", "nhai mấy viên",
    "nuốt mấy viên", "nuốt phải", "uống phải", "nhai mất", "uống mất", "ăn mất", "chục viên", "cả nắm",
    "nuốt mất", "nuốt hết", "hết nửa chai", "hết cả chai", "hết nửa lọ", "hết cả hộp", "hết nửa vỉ", "hết cả vỉ", "lỡ tiêm", "tiêm nhầm", "lỡ bấm", "bấm nhầm", "thay vì", "tiêm quá tay",
    "uống quá liều rồi", "gấp đôi liều", "gấp ba liều", "mất nửa chai", "mất nửa lọ",  # not "tu hết": "tự hết"
    "hết nửa hộp", "mất cả vỉ",
    # a schedule taken other than prescribed: "mỗi ngày 4 viên suốt 6 ngày, lẽ ra chỉ uống 1 lần/tuần"
    "lẽ ra chỉ", "đáng lẽ chỉ", "đúng ra chỉ", "đáng ra chỉ",
)
_ATE_PILLS_RE = re.compile(r"\bvua an\b(?: \w+){0,3}? (?:thuoc|vien|vi|siro|goi)\b")
_TOO_MUCH = ("uống quá nhiều", "uống nhiều quá", "uống quá liều", "xịt quá nhiều", "tiêm quá liều", "dùng quá liều")
_FEELING_RE = re.compile(r"\b(?:dang bi|bi|thay|gio bi)\s+(?!sao\b|gi\b|lam sao\b|the nao\b|nhu the nao\b|ngo doc\b)\w+")
_TAKEN_MARKERS = ("đã", "vừa", "rồi", "lỡ", "nhầm", "lộn", "mới uống", "vừa uống", "lúc nãy", "hồi nãy", "sáng nay",
                  "tối qua", "hôm qua", "cả vỉ", "cả lọ", "hết vỉ", "hết lọ", "nuốt", "chiều qua", "sáng qua",
                  "đêm qua", "trưa qua", "uống hết", "trong một buổi", "trong buổi", "trong 1 buổi", "chiều nay",
                  "trưa nay")
# "uống một lúc 8 viên", "uống liền 10 viên": taken at once (a question "… được không" is excluded above).
_AT_ONCE = ("một lúc", "cùng một lúc", "uống liền", "một lần hết", "một hơi")
_WHAT_NOW = ("giờ phải làm sao", "phải làm sao", "làm sao bây giờ", "giờ làm sao", "giờ phải làm gì",
             "làm gì bây giờ", "có sao không", "có nguy hiểm không", "có sao ko")
# "Con tôi 12 tuổi uống 10 viên thuốc ngủ của mẹ": someone told as having swallowed a count, not asking about one.
_TOLD_TAKEN_RE = re.compile(r"\b(?:toi|minh|em|con|be|chau|ong|ba|bo|me|chong|vo|anh|chi|no)(?: \w+){0,3}? "
                            r"(?:uong|nuot|an|nhai) (?:het |luon |mot luc )?\d+ (?:vien|goi|ong|vi|lo|chai)\b")
_ASKING_ABOUT_A_COUNT = ("được không", "có được", "có nên", "nên không", "bao nhiêu", "tối đa", "có đủ", "mỗi ngày",
                         "một ngày", "hàng ngày", "1 ngày", "mỗi lần", "có phải", "có quá liều", "là quá liều")
_HYPOTHETICAL_MARKERS = ("nếu", "lỡ như", "nhỡ như", "giả sử", "trường hợp", "lỡ mà")

EMERGENCY_SIGNS = (
    "đau ngực lan", "đau thắt ngực lan", "đau thắt ngực dữ dội", "đau ngực dữ dội", "đau ngực vã mồ hôi",
    "tức ngực khó thở", "lan ra cánh tay", "lan ra tay", "lan lên hàm", "vã mồ hôi lạnh", "muốn xỉu", "xỉu",
    "khó thở", "thở không nổi", "thở không được", "không thở được", "ngạt thở", "thở rít", "tím tái", "môi tím",
    "co giật", "lên cơn co giật", "giật kinh", "sưng môi", "sưng họng", "sưng lưỡi", "sưng mặt", "phù mặt",
    "môi sưng", "họng sưng", "lưỡi sưng", "mặt sưng", "thở khó", "cổ họng nghẹn", "nghẹn thở", "họng nghẹn",
    "đau ngực dữ dội", "đau ngực trái", "vã mồ hôi", "lan lên cằm",
    "phù môi", "nôn ra máu", "ói ra máu", "ho ra máu", "đi ngoài ra máu", "phân đen", "chảy máu không cầm",
    "chảy máu không ngừng", "lơ mơ", "hôn mê", "bất tỉnh", "ngất xỉu", "ngất", "gọi không dậy", "lay không dậy",
    "không tỉnh", "méo miệng", "yếu nửa người", "liệt nửa người", "nói ngọng đột ngột", "đau đầu dữ dội",
    "sốc phản vệ", "tụt huyết áp", "mạch rất nhanh", "ngừng thở", "li bì", "không phản ứng",
    # bleeding from the gut, and a blistering rash with fever after a drug (Stevens-Johnson)
    "bã cà phê", "nôn ra dịch đen", "đau bụng dữ dội", "bọng nước", "bong tróc", "phồng rộp", "tróc da",
    # breathing slowed and hard to wake (opioids)
    "thở chậm", "thở rất chậm", "khó tỉnh", "gọi khó tỉnh", "lay khó tỉnh", "ngủ li bì",
    # swelling of the eyelids, like that of the lips, is angioedema
    "mí mắt sưng", "sưng mí mắt", "sưng mí", "phù mí mắt", "mắt sưng húp", "sưng húp mắt",
    # a severe asthma attack: blue lips, too breathless to speak
    "tím môi", "thở không ra hơi", "nói không thành câu", "nói không ra hơi", "không nói được thành câu",
)
_NOW_MARKERS = (
    "đang", "bị", "vừa", "bây giờ", "giờ", "hiện", "tự nhiên", "đột ngột", "đột nhiên", "sau khi", "tôi", "mình",
    "em", "con", "bé", "cháu", "bố", "mẹ", "ông", "bà", "vợ", "chồng", "anh", "chị", "quá", "lắm", "mãi",
    "thấy", "uống xong", "tiêm xong", "xong thấy",
)

_HISTORY_MARKERS = ("từng", "tiền sử", "trước đây", "hồi trước", "hồi nhỏ", "năm ngoái", "hay bị", "thường bị",
                    "thỉnh thoảng", "mỗi khi", "mỗi lần", "khi bị", "nếu bị", "bệnh", "bị bệnh", "hội chứng",
                    "mùa đông", "trời lạnh", "khi lạnh", "gặp lạnh", "lâu nay", "nhiều năm", "từ lâu")
# "từng mảng", "từng cơn": "từng" meaning "each", not "ever".
_EACH_RE = re.compile(r"\btung (?:mang|con|dot|chut|vien|lan|nguoi|ngay|cai|dam|vet|bo phan)\b")
_NOW_STRONG = ("đang", "bây giờ", "vừa", "tự nhiên", "đột ngột", "đột nhiên", "hiện giờ", "lúc này", "cấp cứu")


# "50 viên có đủ không?": asking whether a large number of tablets is *enough* asks for a lethal amount.
_ENOUGH_WORDS = ("có đủ không", "đủ không", "có đủ", "đủ chưa", "là đủ", "thì đủ")
LETHAL_ENOUGH_COUNT = 10


def is_self_harm(text: str) -> bool:
    """Intent to harm or kill oneself, stated or asked as "how many tablets to die"."""
    strong = tuple(p for p in SELF_HARM_PHRASES if p not in _WEAK_SELF_HARM)
    if has_phrase(text, _ADVERSE_EFFECT_FRAMES) and has_phrase(text, _DRUG_FACT_QUESTIONS) \
            and not has_phrase(text, _FIRST_PERSON):
        return False  # "sertralin có cảnh báo gì về ý nghĩ tự sát không"
    if has_phrase(text, tuple(p for p in strong if p not in _AMBIGUOUS_SELF_HARM)):
        return True
    if has_phrase(text, _AMBIGUOUS_SELF_HARM):
        return not has_phrase(text, (*_SOMEONE_ELSE, *_BY_ACCIDENT))
    count = count_taken(text)
    if count is not None and (count == -1 or count >= LETHAL_ENOUGH_COUNT) and has_phrase(text, _ENOUGH_WORDS):
        return True
    if _SAVED_UP_RE.search(folded_with_digits(text)):
        return True
    if has_phrase(text, ("cho xong",)) and not has_phrase(text, ("cả vỉ", "cả lọ", "hết vỉ", "hết lọ", "bao nhiêu viên")) \
            and not (count is not None and (count == -1 or count >= LETHAL_ENOUGH_COUNT)):
        return False  # "uống cho xong đợt kháng sinh" — but "40 viên … uống hết một lần cho xong" is a plan
    many = count is not None and (count == -1 or count >= LETHAL_ENOUGH_COUNT)
    if _ENDING_RE.search(fold(normalize(text))) and has_phrase(text, _HOW_LONG) and many \
            and not has_phrase(text, (*_SOMEONE_ELSE_TOOK, *_BY_ACCIDENT)):
        return True
    if has_phrase(text, _LETHAL_OUTCOMES) and has_phrase(text, _QUANTITY_WORDS) \
            and not has_phrase(text, _DRUG_FACT_QUESTIONS) and not has_phrase(text, _SOMEONE_ELSE_TOOK):
        return True
    return has_phrase(text, _WEAK_SELF_HARM) and (
        has_phrase(text, _QUANTITY_WORDS) or has_phrase(text, ("tôi", "mình", "tao", "em", "muốn", "định")) or many
    ) and not has_phrase(text, _DRUG_FACT_QUESTIONS) and not has_phrase(text, _SOMEONE_ELSE_TOOK)


# "Bé uống cả vỉ rồi, làm sao cho xong?": said of someone who took it, "cho xong" is not intent.
_SOMEONE_ELSE_TOOK = ("bé nhà", "con tôi", "con em", "cháu tôi", "thằng bé", "con bé")


def asks_a_quantity(text: str) -> bool:
    """Any amount asked for — tablets, units, mg, a dose — whatever the question is about."""
    return has_phrase(text, (*_QUANTITY_WORDS, "liều", "mấy lần", "mấy đơn vị", "bao nhiêu mg", "bao nhiêu ml"))


# A child who got hold of the medicine and swallowed some ("lấy được chai siro uống gần hết").
_GOT_HOLD = ("lấy được", "tự lấy", "với được", "lấy trộm", "bốc được", "mở được", "nghịch lấy", "nghịch thuốc")
_SWALLOWED = ("uống", "ăn", "nuốt", "nhai", "ngậm", "mút")
# A dose repeated by someone who forgot taking it, told with when: "quên, uống digoxin 3 lần trong sáng nay",
# "tối qua uống warfarin hai lần, mỗi lần 2 viên", "tự tiêm insulin hai lần liều buổi tối".
_REPEATED_RE = re.compile(r"\b(?:uong|tiem|dung)\b(?: \w+){0,3}? (?:[2-9]|hai|ba|bon|nam) lan\b(?P<within> (?:trong|lien)\b)?")
_WHEN_TAKEN = ("đã", "vừa", "rồi", "lúc nãy", "hồi nãy", "sáng nay", "trưa nay", "chiều nay", "tối nay", "hôm nay",
               "tối qua", "hôm qua", "chiều qua", "sáng qua", "đêm qua", "trưa qua", "giờ")
_FORGOT = ("quên", "lẫn", "lú lẫn", "nhầm", "không nhớ đã uống")
_COUNT_BEFORE_RE = re.compile(r"(?:\d+|hai|ba|bon|nam|may) $")


def _says_forgot(text: str) -> bool:
    """"quên", "lẫn" … — but an unaccented "lan" after a count is "lần" ("xit 3 lan roi"), not "lẫn"."""
    if has_phrase(text, tuple(f for f in _FORGOT if f != "lẫn")):
        return True
    lowered = normalize(text).lower()
    return any(m.group(0) == "lẫn" or not _COUNT_BEFORE_RE.search(fold(lowered[: m.start()]))
               for m in re.finditer(r"\blẫn\b|\blan\b", lowered))


# "quên uống" is a missed dose; "quên, uống …" (the comma) is not.
_MISSED_RE = re.compile(r"\bquen (?:mat |khong |chua )?(?:uong|dung|lieu)\b")


def is_overdose_taken(text: str) -> bool:
    """Too much has already been taken — not "what if I took too much?"."""
    if has_phrase(text, _HYPOTHETICAL_MARKERS) and not has_phrase(text, ("rồi", "vừa", "đã", "lúc nãy", "hồi nãy")):
        return False
    if has_phrase(text, OVERDOSE_TAKEN_PHRASES):
        return True
    if _ATE_PILLS_RE.search(folded_with_digits(text)):
        return True  # "bé vừa ăn mấy viên thuốc của bà" — not "vừa ăn tôm xong bị sưng môi … xin tên thuốc"
    if has_phrase(text, _GOT_HOLD) and has_phrase(text, _SWALLOWED) and has_phrase(text, _SOMEONE_ELSE):
        return True
    folded = folded_with_digits(text)
    repeated = _REPEATED_RE.search(folded)
    if repeated and _says_forgot(text) and not _MISSED_RE.search(fold(text)) \
            and (repeated.group("within") or has_phrase(text, _WHEN_TAKEN)):
        return True
    if has_phrase(text, _TOO_MUCH) and _FEELING_RE.search(fold(text)):
        return True  # "uống quá nhiều amlodipin bị tụt huyết áp": taken, and feeling it
    count = count_taken(text)
    if count is None or not (count == -1 or count >= 5):
        return False
    if has_phrase(text, _TAKEN_MARKERS):
        return True
    if has_phrase(text, _WHAT_NOW):
        return True  # "uống 15 viên tramadol để giảm đau, giờ phải làm sao"
    if _TOLD_TAKEN_RE.search(folded) and "?" not in text and not has_phrase(text, _ASKING_ABOUT_A_COUNT):
        return True
    # "uống một lúc 8 viên"; "uống 6 viên trong vòng 2 tiếng, giờ buồn nôn": taken, and feeling it now
    return has_phrase(text, ("trong vòng", "giờ thấy", "giờ bị", "giờ buồn nôn", "giờ chóng mặt", "giờ mệt",
                             *_AT_ONCE)) \
        and not has_phrase(text, ("được không", "có được", "có nên", "nên không", "có đủ"))


# "phenytoin chống co giật", "thuốc cắt cơn co giật": a sign named as what a drug is for is not happening.
_PURPOSE_BEFORE_SIGN = (("chong",), ("tri",), ("phong",), ("cat", "con"), ("dieu", "tri"), ("du", "phong"))


# Blood brought up or passed, told with words between ("nôn ra cả bát máu bầm", "ho ra ít máu tươi").
_BLOOD_OUT = (("non", "ra"), ("oi", "ra"), ("ho", "ra"), ("khac", "ra"), ("di", "ngoai", "ra"), ("tieu", "ra"))
_BLOOD_GAP = 3


def emergency_sign_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, sign) word spans of the emergency signs described, not those named as a drug's purpose."""
    _raw, folded, _accented = word_forms(text)
    spans = [
        (start, end, sign) for start, end, sign in phrase_set(EMERGENCY_SIGNS).find(text)
        if not any(folded[max(0, start - len(p)):start] == p for p in _PURPOSE_BEFORE_SIGN)
    ]
    covered = {i for start, end, _sign in spans for i in range(start, end)}
    for start in range(len(folded)):
        for verb in _BLOOD_OUT:
            end = start + len(verb)
            if tuple(folded[start:end]) != verb:
                continue
            blood = next((i for i in range(end, min(len(folded), end + _BLOOD_GAP + 1)) if folded[i] == "mau"), None)
            if blood is not None and blood not in covered:
                spans.append((start, blood + 1, " ".join(folded[start : blood + 1])))
    return sorted(spans)


def is_emergency(text: str, has_sign: bool | None = None) -> bool:
    """Emergency signs described as happening now to someone.

    ``has_sign`` lets the caller say whether a sign is present outside the patient's known
    conditions (a sign inside "hội chứng ngừng thở khi ngủ" is a condition, not an emergency).
    """
    signs = {sign for _start, _end, sign in emergency_sign_spans(text)}
    if not (signs if has_sign is None else has_sign) or has_phrase(text, _DRUG_FACT_QUESTIONS):
        return False
    history = has_phrase(_EACH_RE.sub(" ", fold(text)), _HISTORY_MARKERS)
    if len(signs) >= 2 and not history:
        return True  # several signs described together (chest pain spreading to the jaw, sweating …) are now
    if history and not has_phrase(text, _NOW_STRONG):
        return False  # a condition the patient has had ("từng bị co giật"), not an emergency now
    return has_phrase(text, _NOW_MARKERS)
