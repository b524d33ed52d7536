"""Who a turn's alarming words are about, and when: the typed facts that keep the safety signals precise.

The crisis, overdose and emergency signals (``signals.py``) and the intent model see words ("tự tử",
"nuốt nhầm", "co giật", "uống gấp đôi"); whether those words are an alarm depends on facts around
them: the one who swallowed is a cat, the seizure happened to a colleague's mother in a story told,
the double dose is a plan asked about, the bleeding was in 2019. :func:`read_telling` reads those
facts once into a :class:`Telling`; the numbered gates (:data:`SIGNAL_GATES`) decide from it which
signal a turn cannot raise.

A fact that *lowers* an alarm is read only off words typed with their diacritics: without them
"cho" may be "chó", "tinh" "tỉnh" or "tính", "truyen" "truyện" or "truyền" — so a turn typed
without diacritics keeps its alarm (the safe side).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from duocthu.lexicon import LEXICON
from duocthu.text import fold, normalize, word_forms
from duocthu.understanding.quantities import count_taken
from duocthu.understanding.scope import has_phrase
from duocthu.understanding.signals import asks_a_quantity


class Subject(StrEnum):
    """Whom the alarming words are about."""

    PATIENT = "patient"  # the speaker, or the person they ask for (a child, a parent)
    TOLD_OF = "told_of"  # someone in a story, the news, a film, or what another person recounted
    ANIMAL = "animal"  # a pet or any animal: the book is a human formulary


@dataclass(frozen=True)
class Telling:
    """Who and when, read off one turn; ``asks_effect`` is a question whether a drug causes something."""

    subject: Subject = Subject.PATIENT
    planned: bool = False  # a dose planned or asked about ("định mai uống gấp đôi", "… được không?"), none taken
    past: bool = False  # an episode placed in the past ("hồi 2019", "năm ngoái"), nothing said to happen now
    asks_effect: bool = False
    speaker_in_it: bool = False  # the speaker speaks of themself ("tôi", "mình", "em")
    amount_asked: bool = False  # an amount asked ("bao nhiêu viên"): a lethal amount is refused whoever asks
    now_said: bool = False  # "đang", "bây giờ", "vừa": happening now, whoever told it
    wrong_time: bool = False  # a dose taken at the wrong time (after food, late), no count of tablets said
    refuses_or_exclaims: bool = False  # refuses or fears a medicine, or "chết" only as an exclamation of worry
    taken: bool = False  # said to be taken already ("đã uống", "vừa nuốt", "… rồi"), or a count of tablets swallowed
    findings: int = 1  # parts of the turn between commas and "rồi"/"thì": several findings described together


_ANIMALS = frozenset(LEXICON.phrases("telling.animals"))
_INGEST_VERBS = frozenset(fold(v) for v in LEXICON.phrases("telling.ingest_verbs"))
_VET_WORDS = LEXICON.phrases("telling.vet_words")
_REPORTED = LEXICON.phrases("telling.reported")
_PLANNED = LEXICON.phrases("telling.plan_markers")
_PERMISSION = LEXICON.phrases("telling.permission_asked")
_SUPPLY_ASKED = LEXICON.phrases("telling.supply_asked")
_SUPPLY_TIME = LEXICON.phrases("telling.supply_time")
_PAST = LEXICON.phrases("telling.past_times")
_NOW = LEXICON.phrases("now_strong")
_EFFECT_VERBS = LEXICON.phrases("effect_verbs")
# "nôn ra máu hồi 2019", "từ năm 2021": an episode placed in a past year.
_YEAR_RE = re.compile(r"\b(?:hoi|nam|tu|vao|dot) (?:19|20)\d\d\b")
# "uống gấp đôi rồi", "nuốt mấy viên rồi": taken, whatever else is planned — but "quên uống liều sáng rồi" is a
# missed dose, not one taken.
_TAKEN_RE = re.compile(r"(?<!\bquen )\b(?:uong|nuot|tiem|dung|an)\b(?: \w+){0,5}? roi\b")
_TAKEN = LEXICON.phrases("telling.taken_already")
_SPEAKER = LEXICON.phrases("first_person")
_WRONG_TIME = LEXICON.phrases("telling.wrong_time")
_REFUSES = LEXICON.phrases("telling.refuses_medicine")
_EXCLAMATIONS = LEXICON.phrases("telling.exclamations")
_GAP_WORDS = frozenset(fold(w) for w in (*LEXICON.phrases("telling.animal_gap"), *LEXICON.phrases("first_person")))
_FINDING_SPLIT_RE = re.compile(r"[,;]| roi | thi ")
_GAP = 3  # words allowed between an animal and what it swallowed ("mèo nhà mình nuốt")


def _typed(text: str, phrases: tuple[str, ...]) -> bool:
    """A phrase typed exactly, with its diacritics (lower case, whole words)."""
    raw = " ".join(word_forms(text)[0])
    return any(re.search(rf"(?<!\w){re.escape(p.lower())}(?!\w)", raw) for p in phrases)


def _animal_swallowed(text: str) -> bool:
    """An animal named (with diacritics) before what it ate, or given the medicine ("cho mèo uống")."""
    raw, folded, _accented = word_forms(text)
    for i, word in enumerate(raw):
        if word not in _ANIMALS:
            continue
        gap = 0
        while i + 1 + gap < len(raw) and gap < _GAP and folded[i + 1 + gap] in _GAP_WORDS:
            gap += 1
        if i + 1 + gap < len(raw) and folded[i + 1 + gap] in _INGEST_VERBS:
            return True
        if i > 0 and folded[i - 1] == "cho":
            return True
    return _typed(text, _VET_WORDS)


def _asks_effect(text: str) -> bool:
    """"uống captopril có làm lên cơn khó thở không": whether the drug causes it, asked — not happening."""
    folded = fold(normalize(text)).rstrip(" ?.!")
    return _typed(text, _EFFECT_VERBS) and bool(re.search(r"\b(?:khong|ko|chang|a|ha)$", folded))


def read_telling(text: str) -> Telling:
    """Who and when the turn's words are about; the safe reading (the patient, now) when unsure."""
    if _animal_swallowed(text):
        subject = Subject.ANIMAL
    elif _typed(text, _REPORTED):
        subject = Subject.TOLD_OF
    else:
        subject = Subject.PATIENT
    folded = fold(normalize(text))
    taken = bool(_TAKEN_RE.search(folded)) or _typed(text, _TAKEN)
    now = _typed(text, _NOW)
    planned = not taken and (_typed(text, _PLANNED) or _typed(text, _PERMISSION) or (_typed(text, _SUPPLY_ASKED) and has_phrase(text, _SUPPLY_TIME)))
    past = not now and (_typed(text, _PAST) or bool(_YEAR_RE.search(folded)))
    return Telling(subject=subject, planned=planned, past=past, asks_effect=_asks_effect(text), speaker_in_it=has_phrase(text, _SPEAKER),
                   amount_asked=asks_a_quantity(text), now_said=now,
                   wrong_time=_typed(text, _WRONG_TIME) and count_taken(text) is None,
                   refuses_or_exclaims=_typed(text, _REFUSES) or _typed(text, _EXCLAMATIONS),
                   taken=taken or count_taken(text) is not None,
                   findings=_findings(folded))


CRISIS, OVERDOSE_TAKEN, EMERGENCY = "crisis", "overdose_taken", "emergency"
CRISIS_BY_MODEL = "crisis_by_model"  # a crisis the intent model names with no self-harm phrase of the lexicon


@dataclass(frozen=True)
class Gate:
    """One row of the gate table: when the fact holds, the turn cannot raise the signals named."""

    row: int
    fact: str  # the fact, in words
    silences: frozenset[str]
    why: str
    holds: Callable[[Telling], bool]


SIGNAL_GATES: tuple[Gate, ...] = (
    Gate(1, "an animal swallowed the medicine or was given it", frozenset({OVERDOSE_TAKEN, EMERGENCY}),
         "the book is a human formulary: a pet is out of scope, not a human overdose or emergency",
         lambda t: t.subject is Subject.ANIMAL),
    Gate(2, "someone in a story, the news or a film, or recounted — the speaker not in it, no amount asked",
         frozenset({CRISIS, CRISIS_BY_MODEL}), "a character's suicide is not the speaker's; a lethal amount asked is refused whoever asks",
         lambda t: t.subject is Subject.TOLD_OF and not t.speaker_in_it and not t.amount_asked),
    Gate(3, "someone told of, not said to be happening now", frozenset({OVERDOSE_TAKEN, EMERGENCY}),
         "a seizure a colleague recounted is a question about a drug, not an ambulance",
         lambda t: t.subject is Subject.TOLD_OF and not t.now_said),
    Gate(4, "a dose planned or asked about, nothing said to be taken already", frozenset({OVERDOSE_TAKEN}),
         "'định mai uống gấp đôi được không?' asks before taking: the answer is the book's missed-dose advice",
         lambda t: t.planned),
    Gate(5, "a past episode placed in time, nothing said to happen now", frozenset({EMERGENCY}),
         "'nôn ra máu hồi 2019' is a history that bears on the drug, not an emergency now",
         lambda t: t.past),
    Gate(6, "whether a drug causes a sign, asked", frozenset({EMERGENCY}),
         "'captopril có làm khó thở không' asks the side effects; the sign is not happening",
         lambda t: t.asks_effect),
    Gate(7, "one dose taken at the wrong time (after food, late), no count of tablets said", frozenset({OVERDOSE_TAKEN}),
         "'lỡ uống levothyroxin sau khi ăn' is a timing slip: the answer is how to take it, not 115",
         lambda t: t.wrong_time),
    Gate(8, "someone refuses or fears a medicine, or 'chết' is an exclamation ('chết dở', 'lo chết mất')",
         frozenset({CRISIS_BY_MODEL}),
         "'con sợ thuốc, không muốn uống viên nào' shares words with 'không muốn sống'; a self-harm phrase "
         "still raises the crisis", lambda t: t.refuses_or_exclaims),
)


def silenced(signal: str, telling: Telling) -> Gate | None:
    """The first gate that keeps the turn from raising ``signal``, or None."""
    return next((g for g in SIGNAL_GATES if signal in g.silences and g.holds(telling)), None)


# A finding the turn denies ("không vàng da", "chưa sốt") is not one described.
_DENIAL_STARTS = frozenset(fold(p) for p in LEXICON.phrases("denial_cues"))


def _findings(folded: str) -> int:
    """Parts of the turn between commas and "rồi"/"thì" that describe something (two words or more, not denied)."""
    return sum(1 for part in _FINDING_SPLIT_RE.split(folded)
               if len(part.split()) >= 2 and not any(part.strip().startswith(d + " ") for d in _DENIAL_STARTS))
