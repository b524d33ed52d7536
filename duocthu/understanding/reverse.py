"""Reverse lookup questions: which condition is asked, and which are the patient's own.

"Thuốc nào trị đau răng cho người bị loét dạ dày?" asks for drugs indicated for *đau răng*; the
patient has *loét dạ dày*. :func:`split_conditions` (the learned and LLM understanders) cuts the
question into pieces at clause breaks and at "bị", "kèm", "mà", "thì"; a piece that opens with a
patient word ("người", "bệnh nhân") or follows one, or follows "kèm", describes the patient; of the
others, the piece with the treatment cue ("thuốc nào trị X") names the condition, else the last one
before the question ("bị suy thận nặng mà lên cơn gút cấp thì uống thuốc gì" asks about *gút cấp*).
:func:`extract_condition` is the first version's clause rule, kept for the ``rules`` baseline.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from duocthu.lexicon import LEXICON
from duocthu.text import (
    content_words,
    find_phrase,
    fold,
    folded_words,
    has_diacritics,
    normalize,
    token_matches,
    words,
)
from duocthu.understanding.patient import (
    BREASTFEEDING_WORDS,
    CURRENT_MEDICATION_CUES,
    PREGNANCY_WORDS,
)
from duocthu.understanding.scope import has_phrase

SYMPTOM_HEADS = LEXICON.phrases("symptom_heads")

AMBIGUOUS_CONDITIONS = frozenset(
    fold(c) for c in LEXICON.phrases("ambiguous_conditions")
)

REVERSE_FILLER = LEXICON.phrases("reverse_filler")
# Chatter removed only as typed with its diacritics: "đây" is not the "day" of "da day" (dạ dày).
# Filler only as typed with its diacritics: "đang" (now) is not the "dang" of "viem khop dang thap" (dạng).
FILLER_TYPED_WITH_DIACRITICS = frozenset({"đang"})
# "bạn" (the assistant addressed) is not the "ban" of "phát ban"; "lắm" (very) is not "làm" or "lam".
CHATTER_TYPED_WITH_DIACRITICS = frozenset(frozenset(LEXICON.phrases("chatter_typed_with_diacritics")))
# Informal talk around a condition ("mấy hôm nay cứ thấy …", "cho nhanh khỏi", "mọi người ơi"): never
# part of a condition's name.
CHATTER = LEXICON.phrases("chatter")


# The words around the condition of a question written in English ("what can I take for …").
ENGLISH_FILLER = LEXICON.phrases("english_filler")
_ENGLISH = frozenset(fold(w) for w in (*ENGLISH_FILLER, *LEXICON.phrases("english_words")))


def written_in_english(text: str) -> bool:
    """No word carries a diacritic and at least half are common English words: "can" is then "can", not an
    unaccented "căn" ("run vo can")."""
    tokens = words(text)
    if not tokens or any(has_diacritics(t) for t in tokens):
        return False
    return sum(fold(t) in _ENGLISH for t in tokens) * 2 >= len(tokens)


_CLAUSE_SPLIT_RE = re.compile(r"[,.;?!]|\bthì\b|\bmà\b|\bnhưng\b", re.IGNORECASE)
_TREATMENT_CUES = LEXICON.phrases("treatment_cues")


def extract_condition(
    text: str, drug_spans: Callable[[str], list[tuple[int, int]]], comorbidities_in: Callable[[str], list[str]]
) -> tuple[str | None, list[str]]:
    """The condition a reverse-lookup question asks about, and the patient's other conditions.

    The question is cut into clauses; the clause with the treatment cue ("thuốc nào trị …")
    holds the condition, comorbidities named elsewhere ("người bị suy thận thì …") or after
    it ("… cho người suy thận") become patient context.
    """
    clauses = [c.strip() for c in _CLAUSE_SPLIT_RE.split(normalize(text)) if c.strip()]
    if not clauses:
        return None, []
    main = next((c for c in clauses if has_phrase(c, _TREATMENT_CUES)), clauses[-1])
    others = [c for c in clauses if c != main and not has_phrase(c, CURRENT_MEDICATION_CUES)]
    comorbidities: list[str] = []
    head, patient_part = _split_at_patient_marker(main)
    head, taking_part = _split_after_taking(head)
    if taking_part:
        comorbidities += comorbidities_in(taking_part)
    if patient_part:
        comorbidities += comorbidities_in(patient_part)
    condition = _strip_scaffolding(head, drug_spans)
    if condition is None:
        # "… bị đau đầu thì uống thuốc gì?": the condition sits in another clause.
        for clause in others:
            condition = _strip_scaffolding(_split_at_patient_marker(clause)[0], drug_spans)
            if condition:
                others = [c for c in others if c != clause]
                break
    if condition is None and patient_part:
        # "Thuốc gì dùng cho người bị động kinh?": nothing else is asked, so the patient's
        # condition is the one the drug is for.
        condition = _strip_scaffolding(patient_part, drug_spans)
        comorbidities = []
    if condition is not None and fold(condition) in _NOT_A_CONDITION:
        condition = None
    comorbidities += [c for o in others for c in comorbidities_in(o)]
    comorbidities = [c for c in dict.fromkeys(comorbidities)
                     if not any(c != o and fold(c) in fold(o) for o in comorbidities)]
    return condition, comorbidities


_NOT_A_CONDITION = frozenset(fold(w) for w in LEXICON.phrases("not_a_condition"))
_PATIENT_MARKERS = LEXICON.phrases("patient_markers")


def _split_at_patient_marker(clause: str) -> tuple[str, str]:
    """("trị đau đầu", "người tăng huyết áp") from "trị đau đầu cho người tăng huyết áp"."""
    raw = words(clause)
    folded = [fold(w) for w in raw]
    positions = [find_phrase(folded, folded_words(m)) for m in _PATIENT_MARKERS]
    positions = [pos for pos in positions if pos > 0]
    if not positions:
        return clause, ""
    cut = min(positions)
    return " ".join(raw[:cut]), " ".join(raw[cut:])


def _split_after_taking(clause: str) -> tuple[str, str]:
    """("trào ngược dạ dày", "Người đang điều trị HIV bằng nelfinavir") from "Người đang điều trị HIV bằng
    nelfinavir bị trào ngược dạ dày": after a medicine being taken, the condition asked follows "bị"."""
    raw = words(clause)
    folded = [fold(w) for w in raw]
    if not has_phrase(clause, CURRENT_MEDICATION_CUES) or "bi" not in folded[1:]:
        return clause, ""
    cut = len(folded) - 1 - folded[::-1].index("bi")
    return " ".join(raw[cut + 1 :]), " ".join(raw[:cut])


def _strip_scaffolding(
    text: str, drug_spans: Callable[[str], list[tuple[int, int]]], chatter: bool = False
) -> str | None:
    """Remove question scaffolding, drug names and patient cues; what remains names the condition.

    Accent-aware: the filler "mấy" does not remove "mày" (as in "mày đay"). ``chatter`` also removes
    informal talk (:data:`CHATTER`; the ``rules`` baseline keeps the first version's list).
    """
    raw = words(text)
    drop = [False] * len(raw)
    # single words dropped only because they were typed without diacritics ("khoi" may be "khỏi" or "khối")
    unaccented_only: set[int] = set()

    def mark(phrase: str) -> None:
        target = words(phrase)
        n = len(target)
        for start in range(len(raw) - n + 1):
            if all(token_matches(raw[start + i], target[i]) for i in range(n)):
                if n == 1 and not drop[start] and raw[start] != target[0]:
                    unaccented_only.add(start)
                for i in range(start, start + n):
                    drop[i] = True

    english = set(ENGLISH_FILLER) if written_in_english(text) else set()
    for phrase in sorted(set(REVERSE_FILLER) | (set(CHATTER) if chatter else set()) | english,
                         key=lambda f: len(words(f)), reverse=True):
        mark(phrase)
    for i, word in enumerate(raw):
        if word.lower() in FILLER_TYPED_WITH_DIACRITICS or (chatter and word.lower() in CHATTER_TYPED_WITH_DIACRITICS):
            drop[i] = True
        # "có / không biến chứng" qualifies the condition (the book lists each for different drugs)
        if fold(word) in ("co", "khong") and [fold(w) for w in raw[i + 1 : i + 3]] == ["bien", "chung"] and i > 0:
            drop[i] = drop[i + 1] = drop[i + 2] = False
        # "Sốt Địa Trung Hải có tính gia đình": "có tính" is part of the name
        if fold(word) == "co" and [fold(w) for w in raw[i + 1 : i + 2]] == ["tinh"] and i > 0:
            drop[i] = drop[i + 1] = False
    for phrase in (*CURRENT_MEDICATION_CUES, *PREGNANCY_WORDS, *BREASTFEEDING_WORDS):
        mark(phrase)
    for start, end in drug_spans(text):
        for i in range(start, end):
            drop[i] = True
    for i in unaccented_only:
        # "huyet khoi tinh mach sau": a word read as a filler in the middle of the condition belongs to it
        if 0 < i < len(raw) - 1 and not drop[i - 1] and not drop[i + 1] and not raw[i + 1].isdigit():
            drop[i] = False
    kept: list[str] = []
    named = {(fold(m.group(1)), m.group(2)) for m in _HYPHENATED_NUMBER_RE.finditer(text)}
    for word, dropped in zip(raw, drop, strict=True):
        # A number is scaffolding ("2 tuổi", "3 ngày") unless it qualifies the condition ("typ 2", "độ 3") or is
        # part of its name ("COVID-19").
        if not dropped and (not word.isdigit() or (kept and (fold(kept[-1]) in _NUMBERED_QUALIFIERS
                                                             or (fold(kept[-1]), word) in named))):
            kept.append(word)
    return " ".join(kept).strip() or None


# A name written with its number ("COVID-19", "H5N1-1"): the number is part of the name.
_HYPHENATED_NUMBER_RE = re.compile(r"([^\W\d_]+)-(\d+)\b")


_NUMBERED_QUALIFIERS = frozenset(frozenset(LEXICON.phrases("numbered_qualifiers")))


_PIECE_BREAK_RE = re.compile(r"[,.;?!]|\b(?:thì|mà|nhưng|kèm theo|kèm|đồng thời|bị|lên cơn|trước khi|sau khi)\b",
                             re.IGNORECASE)
# The same words typed without any diacritic (the whole question unaccented): "thi", "bi" break too.
_UNACCENTED_PIECE_BREAK_RE = re.compile(r"[,.;?!]|\b(?:thi|nhung|kem theo|kem|dong thoi|bi|len con|truoc khi|sau khi)\b",
                                        re.IGNORECASE)
# A piece after these says when ("trước khi đi rừng", "sau khi ăn"), not which condition.
_WHEN_JOINERS = frozenset({"truoc khi", "sau khi"})
_PATIENT_OPENERS = LEXICON.phrases("patient_openers")
_PATIENT_CLOSERS = LEXICON.phrases("patient_closers")  # "tôi có tiền sử | lên cơn hen …", "tôi từng | bị loét"
_COMORBIDITY_JOINERS = LEXICON.phrases("comorbidity_joiners")
_ALSO_HAS = frozenset({"ma bi", "ma lai bi"})


def split_conditions(
    text: str, drug_spans: Callable[[str], list[tuple[int, int]]], comorbidities_in: Callable[[str], list[str]]
) -> tuple[str | None, list[str]]:
    """The condition a reverse-lookup question asks about, and the patient's other conditions."""
    pieces = _pieces(text)
    asked: list[str] = []  # conditions not marked as the patient's, in order
    treated: str | None = None  # the condition governed by the treatment cue
    patient: list[str] = []
    before_fillers: dict[str, list[str]] = {}
    follows_patient_word = False
    carried = ""  # the joiners of empty pieces before this one ("mà" + "bị")
    for joiner, piece in pieces:
        if not piece:
            carried = f"{carried} {joiner}".strip()
            continue
        joined, carried = f"{carried} {joiner}".strip(), ""
        if joiner in _WHEN_JOINERS:
            continue
        # "Tăng huyết áp mà bị gút", "động kinh mà có blốc nhĩ thất": what the patient also has — unless it is
        # a symptom that came on ("đau dạ dày mà bị đau răng"), which is what needs a drug.
        also_has = (joined in _ALSO_HAS or (joined == "ma" and _opens_with(piece, ("có",)))) \
            and not is_symptom(_strip_openers(piece))
        about_patient = (follows_patient_word or joiner in {fold(j) for j in _COMORBIDITY_JOINERS}
                         or _opens_with(piece, _PATIENT_OPENERS) or also_has)
        follows_patient_word = _closes_with(piece, _PATIENT_CLOSERS)  # "… cho người" | "bị loét dạ dày"
        head, tail_patient = _split_at_patient_marker(piece)
        condition = _strip_use_verb(_strip_scaffolding(_strip_openers(head), drug_spans, chatter=True))
        if condition is not None and (fold(condition) in _NOT_A_CONDITION or condition.lower() in NOT_A_CONDITION_USES):
            condition = None
        if tail_patient:
            patient += comorbidities_in(tail_patient) or [
                c for c in [_strip_scaffolding(tail_patient, drug_spans, chatter=True)] if c and content_words(c)]
        if condition is None:
            continue
        if about_patient or has_phrase(piece, CURRENT_MEDICATION_CUES):
            patient.append(condition)
            # looked up before the fillers go: unaccented "nhi" (of "block nhi that") is also the particle "nhỉ"
            before_fillers[condition] = comorbidities_in(_strip_openers(head))
        elif has_phrase(piece, _TREATMENT_CUES) and treated is None:
            treated = condition
        else:
            asked.append(condition)
    return _asked_and_the_rest(asked, treated, patient, before_fillers, comorbidities_in)


def _pieces(text: str) -> list[tuple[str, str]]:
    """The turn cut at punctuation and joining words: (the joiner before each piece, the piece)."""
    normalized = normalize(text)
    pieces: list[tuple[str, str]] = []
    position, joiner = 0, ""
    breaks = _PIECE_BREAK_RE if fold(normalized) != normalized.lower() else _UNACCENTED_PIECE_BREAK_RE
    for match in breaks.finditer(normalized):
        pieces.append((joiner, normalized[position : match.start()].strip()))
        joiner, position = fold(match.group(0)).strip(), match.end()
    pieces.append((joiner, normalized[position:].strip()))
    return pieces


def _asked_and_the_rest(asked: list[str], treated: str | None, patient: list[str], before_fillers: dict[str, list[str]],
                        comorbidities_in: Callable[[str], list[str]]) -> tuple[str | None, list[str]]:
    """Of the conditions read piece by piece, the one asked about and the patient's others."""
    if treated is None and len(asked) >= 2:
        # "Bị đái tháo đường typ 2 mà suy thận nặng thì dùng thuốc gì?": an organ's failure beside another
        # condition is the patient's state; the other is what needs a drug.
        states = [c for c in asked if fold(c).startswith("suy ")]
        if 0 < len(states) < len(asked):
            patient += states
            asked = [c for c in asked if c not in states]
    condition = treated or (asked[-1] if asked else None)
    if condition is None and patient:
        # "Thuốc gì dùng cho người bị động kinh?": nothing else is asked, so the patient's
        # condition is the one the drug is for.
        condition, patient = patient[0], patient[1:]
    others = [c for c in asked if c != condition] + patient
    comorbidities = [c for o in others for c in (comorbidities_in(o) or before_fillers.get(o) or [o])]
    comorbidities = [c for c in dict.fromkeys(comorbidities)
                     if c != condition and not any(c != o and fold(c) in fold(o) for o in comorbidities)]
    return condition, comorbidities


# What a drug class does, not what the patient has: "thuốc giảm đau nào", "thuốc hạ sốt nào".
NOT_A_CONDITION_USES = frozenset(frozenset(LEXICON.phrases("not_a_condition_uses")))


_USE_VERBS = LEXICON.phrases("reverse.use_verbs")


def _strip_use_verb(condition: str | None) -> str | None:
    """"giảm đau răng" → "đau răng", "diệt vi khuẩn HP" → "vi khuẩn HP": what the drug should do to the
    condition is not its name."""
    if condition is None or condition.lower() in NOT_A_CONDITION_USES:
        return condition
    tokens = words(condition)
    for verb in sorted(_USE_VERBS, key=lambda v: -len(words(v))):
        head = words(verb)
        # a word typed without diacritics matches the verb's folded form ("diet" is "diệt")
        if len(tokens) >= len(head) + 1 and all(
                t == h or (not has_diacritics(t) and fold(t) == fold(h)) for t, h in zip(tokens, head, strict=False)):
            rest = " ".join(tokens[len(head):])  # "giảm phù" → "phù" (what a class does was excluded above)
            # "giảm cân": what is left is no condition ("cân"), so the use is the whole of what is asked
            return condition if fold(rest) in _NOT_A_CONDITION else rest
    return condition


def _opens_with(piece: str, phrases: tuple[str, ...]) -> bool:
    folded = folded_words(piece)
    return any(folded[: len(p)] == p for p in (folded_words(x) for x in phrases))


def _closes_with(piece: str, phrases: tuple[str, ...]) -> bool:
    folded = folded_words(piece)
    return any(len(folded) >= len(p) and folded[-len(p):] == p for p in (folded_words(x) for x in phrases))


def _strip_openers(piece: str) -> str:
    raw = words(piece)
    folded = [fold(w) for w in raw]
    for opener in sorted((folded_words(x) for x in _PATIENT_OPENERS), key=len, reverse=True):
        if folded[: len(opener)] == opener:
            return " ".join(raw[len(opener):])
    return piece


def is_symptom(condition: str) -> bool:
    return any(fold(condition).startswith(fold(head)) for head in SYMPTOM_HEADS)


def is_ambiguous_condition(condition: str | None) -> bool:
    return condition is not None and fold(condition) in AMBIGUOUS_CONDITIONS


def condition_answer(text: str) -> str | None:
    """The condition in a reply to "which condition?" ("đau đầu ạ", "bị tăng huyết áp")."""
    condition = _strip_scaffolding(text, lambda _: [], chatter=True)
    return None if condition is None or fold(condition) in _NOT_A_CONDITION else condition


# How much, said of a condition ("rất", "lắm", "quá"): never a word of another condition.
_INTENSIFIERS = frozenset(frozenset(LEXICON.phrases("severity_words")))
_QUALIFIERS_LONGEST_FIRST = sorted((tuple(folded_words(q)) for q in LEXICON.phrases("condition_qualifiers")),
                                   key=len, reverse=True)


_CONSEQUENCES = tuple(tuple(folded_words(c)) for c in LEXICON.phrases("condition_consequences"))


def qualified_prefixes(condition: str) -> list[str]:
    """"covid 19 nặng phải thở oxy" → "covid 19 nặng", "covid 19": the condition's name before words that only
    say how bad it is (a qualifier, then what it led to). A name of one generic word ("đau") is none; a body part
    or any other word after the name ("đau đầu vú") makes another condition, so nothing is offered."""
    raw, typed = words(condition), folded_words(condition)
    found: list[str] = []
    for cut in range(len(typed) - 1, 0, -1):
        rest = typed[cut:]
        consequence = next((i for i in range(len(rest)) if any(tuple(rest[i : i + len(c)]) == c for c in _CONSEQUENCES)),
                           len(rest))
        name = " ".join(raw[:cut])
        if only_qualifiers_after(typed[:cut], [*typed[:cut], *rest[:consequence]]) \
                and fold(name) not in _NOT_A_CONDITION and not is_ambiguous_condition(name) \
                and (cut >= 2 or not has_diacritics(raw[0])):
            found.append(name)
    return found


_SITES = frozenset(words(site)[-1] for site in LEXICON.phrases("body_sites"))


def modifies_into_another(phrase: Sequence[str], typed: Sequence[str]) -> bool:
    """Whether the user's words after the book's phrase make it another condition: the phrase ends in a part of
    the body and the user's next word makes another part of it ("đau đầu vú" is not "đau đầu"; "đầu vú" is the
    nipple). ``phrase`` as written (with diacritics), ``typed`` folded. How severe or how long
    ("trứng cá viêm nặng"), or a word after a phrase that names no part of the body ("đau bụng kinh hả",
    "thoái hóa khớp gối"), keeps it the same condition."""
    book = [fold(w) for w in phrase]
    end = 0
    for word in book:
        end = list(typed).index(word, end) + 1
    rest = [w for w in typed[end:] if w not in _INTENSIFIERS]
    if not rest or only_qualifiers_after(book, typed):
        return False
    return phrase[-1].lower() in _SITES and has_diacritics(phrase[-1])


def only_qualifiers_after(phrase: Sequence[str], typed: Sequence[str]) -> bool:
    """Whether what the user wrote after the book's phrase only qualifies it ("trứng cá viêm nặng" after
    "trứng cá"): any other word after it ("đau đầu vú" after "đau đầu") names another condition."""
    end = 0
    for word in phrase:
        end = list(typed).index(word, end) + 1
    rest = tuple(typed[end:])
    while rest:
        if rest[0] in _INTENSIFIERS:  # "rất", "lắm", "quá" …
            rest = rest[1:]
            continue
        match = next((q for q in _QUALIFIERS_LONGEST_FIRST if rest[: len(q)] == q), None)
        if match is None:
            return False
        rest = rest[len(match):]
    return True
