"""Typed states of the patient read from one turn (issue 24): numbers against limits, denials, a newborn's
gestation and jaundice, purposes, and the drug classes of past reactions.

Each reader is small and reads one thing; ``patient.extract_facts`` calls them and keeps what they find in
``TurnFacts``. They work on the turn's word tokens (``text.words``) so that positions agree with the drug
resolver's and the condition lexicon's, and on the lexicon's concepts for every word they look for.
Safety comes first in each choice: a denial is read only where nothing but filler stands between the
denial word and the condition (a denial read wrongly would hide a condition the patient has); a number is a
measure only with a unit it may carry or none, inside the range such a number can have.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from duocthu.drug_classes import classes_named
from duocthu.lexicon import LEXICON
from duocthu.measures import MEASURE_NAMES, PURPOSE_NAMES
from duocthu.text import PhraseSet, fold, normalize, token_matches, words
from duocthu.understanding.frame import PatientMeasure

_DENIAL_CUES = LEXICON.concept("denial_cues").phrase_set
_DENIAL_FILLERS = LEXICON.concept("denial_fillers").phrase_set
_DENIAL_JOINERS = LEXICON.concept("denial_joiners").phrase_set
_QUESTION_HOSTS = LEXICON.words("question_particle_hosts")
_NORMAL_WORDS = LEXICON.concept("organ_normal_words").phrase_set
_NORMAL_FILLERS = LEXICON.concept("organ_normal_fillers").phrase_set


def _word_sets(spans: Iterable[tuple[int, int, str]]) -> dict[int, int]:
    """Start position → the end of the longest phrase found there."""
    ends: dict[int, int] = {}
    for start, end, _phrase in spans:
        ends[start] = max(end, ends.get(start, start))
    return ends


def denied_positions(text: str, condition_spans: Sequence[tuple[int, int]], clauses: Sequence[int]) -> set[int]:
    """Start positions of the conditions a denial governs.

    A denial word ("không", "chưa", "chẳng" …) governs the condition after it when only filler words stand
    between ("không có tiền sử", "chưa bao giờ bị"), and the conditions joined to that one by "và / hay /
    hoặc" in the same clause ("không hen hay loét dạ dày": both). A "không" that closes a question ("uống
    được không") and a denial word inside a condition's own name ("không dung nạp …") deny nothing.

    >>> from duocthu.understanding.patient import clause_of_tokens
    >>> t = "không hen, nhưng bị loét"
    >>> sorted(denied_positions(t, [(1, 2), (4, 5)], clause_of_tokens(t)))
    [1]
    """
    tokens = words(text)
    cues = _word_sets(_DENIAL_CUES.find(text))
    fillers = _word_sets(_DENIAL_FILLERS.find(text))
    joiners = _word_sets(_DENIAL_JOINERS.find(text))
    inside = {i for start, end in condition_spans for i in range(start, end)}
    starts = {start: end for start, end in condition_spans}
    denied: set[int] = set()
    for cue, cue_end in cues.items():
        if cue in inside or (cue > 0 and fold(tokens[cue - 1]) in _QUESTION_HOSTS):
            continue
        i, governed = cue_end, False
        while i < len(tokens) and clauses[i] == clauses[cue]:
            if i in starts:
                denied.add(i)
                i, governed = starts[i], True
            elif i in fillers:
                i = fillers[i]
            elif governed and i in joiners:
                i = joiners[i]
            else:
                break
    return denied


_ORGAN_FAILURE = LEXICON.mapping("organs")  # folded organ word → as written ("than" → "thận")


def organs_said_normal(text: str, clauses: Sequence[int]) -> list[str]:
    """"gan thận bình thường", "chức năng thận vẫn tốt": the failure of each organ named is denied ("suy thận").

    >>> from duocthu.understanding.patient import clause_of_tokens
    >>> t = "gan thận bình thường"
    >>> organs_said_normal(t, clause_of_tokens(t))
    ['suy gan', 'suy thận']
    """
    tokens = words(text)
    folded = [fold(t) for t in tokens]
    fillers = _word_sets(_NORMAL_FILLERS.find(text))
    joiners = _word_sets(_DENIAL_JOINERS.find(text))
    cues = _word_sets(_DENIAL_CUES.find(text))
    organs: list[str] = []
    for start, end, _phrase in _NORMAL_WORDS.find(text):
        after = end in cues and clauses[end] == clauses[start]
        if after or (start > 0 and start - 1 in cues):
            continue  # "thận có tốt không", "thận không ổn": a question or a denial of the normal
        named: list[str] = []
        i = start - 1
        while i >= 0 and clauses[i] == clauses[start]:
            organ = _ORGAN_FAILURE.get(folded[i])
            if organ is not None and token_matches(tokens[i], organ):
                named.insert(0, organ)
            elif not any(s <= i < e for s, e in (*fillers.items(), *joiners.items())):
                break
            i -= 1
        organs += [f"suy {organ}" for organ in named if f"suy {organ}" not in organs]
    return organs


# -- numbers --------------------------------------------------------------------------------------------

_COMPARATORS = {"lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_COMPARATOR_SETS = {_COMPARATORS[key]: PhraseSet(phrases) for key, phrases in LEXICON.group("comparator").items()}
_NOT_MEASURES = LEXICON.concept("not_measures").phrase_set
_REFUTING_UNITS = LEXICON.concept("measure_refuting_units").folded_words
_UNITS = LEXICON.mapping("measure_units")
_RANGES = {key: tuple(float(v) for v in span.split("-")) for key, span in LEXICON.mapping("measure_range").items()}
# Units as typed (folded, spaces dropped) → normalised as in ``types.Threshold``.
_UNIT_FORMS: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p), u) for p, u in (
    (r"ml/(?:phut|ph|min|p)(?:/1[.,]73\s*m2?)?", "ml/phút"), (r"mmol/(?:lit|l)", "mmol/l"), (r"meq/l", "meq/l"),
    (r"mg/dl", "mg/dl"), (r"(?:umol|µmol|micromol)/l", "µmol/l"), (r"g/l", "g/l"), (r"u/l|ui/l|iu/l", "u/l"),
    (r"mmhg", "mmhg"), (r"lan/phut|nhip/phut|l/p", "lần/phút"), (r"/mm3|/mm\^?3", "/mm3"), (r"ms\b", "ms"),
    (r"lan\b", "lần"),
))
_TEXT_NUMBER_RE = re.compile(r"(?<![\w.,])(\d{1,3}(?:\.\d{3})+(?![.,]\d)|\d+(?:[.,]\d+)?)")
_CLASS_VALUES = {"child_pugh": {"a": 1.0, "b": 2.0, "c": 3.0},
                 "nyha": {"i": 1.0, "ii": 2.0, "iii": 3.0, "iv": 4.0}}
_CLASS_VALUE_RE = re.compile(r"^\s*(?:do|class|loai|nhom|muc|hang|phan do)?\s*([abc]|iv|iii|ii|i|\d+)\b")
_MAX_GAP_CHARS = 24


def _number(text: str) -> float:
    """"5,9" and "5.9" are 5.9; "50.000" (Vietnamese thousands) is 50000."""
    if re.fullmatch(r"\d{1,3}(?:\.\d{3})+", text):
        return float(text.replace(".", ""))
    return float(text.replace(",", "."))


_SIGN_RE = re.compile(r"(<=|>=|≤|≥|<|>)")
_SIGNS = {"≤": "<=", "≥": ">="}
_AFTER_NUMBER = ("<=", ">=")  # "30 trở xuống", "60 trở lên"; "5,9 cao hơn bình thường" is no comparator


def _comparator(phrase_text: str, signs: Sequence[str] = tuple(_COMPARATOR_SETS)) -> str | None:
    if match := _SIGN_RE.search(phrase_text):
        return _SIGNS.get(match.group(1), match.group(1))
    for sign in signs:
        if _COMPARATOR_SETS[sign].matches(phrase_text):
            return sign
    return None


def _unit_after(tail: str) -> tuple[str, str]:
    """The normalised unit at the start of ``tail`` (folded), and the rest after it."""
    compact = tail.lstrip()
    for pattern, unit in _UNIT_FORMS:
        match = pattern.match(compact.replace(" / ", "/"))
        if match:
            return unit, compact[match.end():]
    return "", compact


def _measure_spans(text: str) -> list[tuple[int, int, str]]:
    blocked = {i for start, end, _ in _NOT_MEASURES.find(text) for i in range(start, end)}
    spans = [(start, end, key) for key in MEASURE_NAMES
             for start, end, _ in LEXICON.find(f"measure.{key}", text) if start not in blocked]
    spans.sort(key=lambda s: (s[0], s[0] - s[1]))
    kept: list[tuple[int, int, str]] = []
    for span in spans:
        if not kept or span[0] >= kept[-1][1]:
            kept.append(span)
    return kept


def _token_ends(text: str) -> list[int]:
    return [m.end() for m in re.finditer(r"\w+", normalize(text).lower())]


def _read_value(key: str, tail: str) -> PatientMeasure | None:
    """The number (with its comparator and unit) stated right after a measure's name, if any."""
    folded = fold(tail)
    stop = re.search(r"[;?!\n]|\.(?!\d)", folded)
    window = folded[: stop.start()] if stop else folded
    if key in _CLASS_VALUES:
        return _class_value(key, window)
    number = _TEXT_NUMBER_RE.search(window)
    if number is None or number.start() > _MAX_GAP_CHARS:
        return None
    gap, after = window[: number.start()], window[number.end():]
    unit, rest = _unit_after(after)
    next_word = rest.split()[0] if rest.split() else ""
    allowed = [u for u in _UNITS.get(key, "").split(",") if u]
    if (unit and unit not in allowed) or (not unit and fold(next_word) in _REFUTING_UNITS):
        return None
    value = _number(number.group(1))
    low, high = _RANGES.get(key, (float("-inf"), float("inf")))
    if not low <= value <= high:
        return None
    comparator = _comparator(gap) or _comparator(" ".join(rest.split()[:2]), _AFTER_NUMBER) or "="
    return PatientMeasure(quantity=key, value=value, unit=unit, comparator=comparator)  # type: ignore[arg-type]


def _class_value(key: str, window: str) -> PatientMeasure | None:
    """"Child-Pugh B" (class 2; a score 7–9 is class B too), "NYHA III" (3)."""
    match = _CLASS_VALUE_RE.match(window)
    if match is None:
        return None
    token = match.group(1)
    if token.isdigit():
        value = float(token)
        if key == "child_pugh" and 5 <= value <= 15:
            value = 1.0 if value <= 6 else 2.0 if value <= 9 else 3.0
    else:
        value = _CLASS_VALUES[key].get(token, 0.0)
    low, high = _RANGES[key]
    return PatientMeasure(quantity=key, value=value) if low <= value <= high else None


def parse_measures(text: str) -> tuple[PatientMeasure, ...]:
    """Numbers stated about the patient, each with its measure, comparator and unit.

    >>> [(m.quantity, m.comparator, m.value, m.unit) for m in parse_measures("CrCl dưới 10, kali 5,9 mmol/L")]
    [('creatinine_clearance', '<', 10.0, ''), ('potassium', '=', 5.9, 'mmol/l')]
    >>> parse_measures("tiêm tĩnh mạch 500 mg")
    ()
    """
    ends = _token_ends(text)
    lowered = normalize(text).lower()
    found: dict[str, PatientMeasure] = {}
    for _start, end, key in _measure_spans(text):
        measure = _read_value(key, lowered[ends[end - 1]:])
        if measure is not None:
            found[key] = measure  # the last number said for a measure is the one that holds
    return tuple(found.values())


# -- newborns -------------------------------------------------------------------------------------------

_PRETERM = LEXICON.concept("preterm_words").phrase_set
_TERM = LEXICON.concept("term_words").phrase_set
_BIRTH_CUES = LEXICON.concept("birth_gestation_cues").phrase_set
_JAUNDICE = LEXICON.concept("jaundice_words").phrase_set
_WEEKS_RE = re.compile(r"^(?:\s+\w+){0,2}?\s+(?:tuan\s+(?:thu\s+)?(\d{2})\b|(\d{2}(?:[.,]5)?)\s*tuan\b)")
PRETERM_BELOW_WEEKS = 37


@dataclass(frozen=True)
class Birth:
    """What a turn says of a baby's birth: the weeks of gestation and whether before term."""

    gestation_weeks: float | None = None
    preterm: bool | None = None
    weeks_span: tuple[int, int] | None = None  # character span of the weeks, which are not the baby's age


def parse_birth(text: str, denied: set[int]) -> Birth:
    """"sinh non 32 tuần" (32, preterm), "sinh đủ tháng" (term), "sinh lúc 35 tuần" (35, preterm).

    >>> parse_birth("bé sinh non 32 tuần", set())
    Birth(gestation_weeks=32.0, preterm=True, weeks_span=(12, 19))
    >>> parse_birth("bé sinh đủ tháng", set()).preterm
    False
    """
    lowered = normalize(text).lower()
    ends = _token_ends(text)
    weeks: float | None = None
    span: tuple[int, int] | None = None
    for _start, end, _phrase in _BIRTH_CUES.find(text):
        match = _WEEKS_RE.match(fold(lowered[ends[end - 1]:]))
        if match:
            value = _number(match.group(1) or match.group(2))
            if 20 <= value <= 45:
                weeks, offset = value, ends[end - 1]
                span = (offset + match.start(1 if match.group(1) else 2), offset + match.end())
                break
    preterm: bool | None = None
    if weeks is not None:
        preterm = weeks < PRETERM_BELOW_WEEKS
    said_preterm = [start for start, _end, _ in _PRETERM.find(text)]
    if said_preterm and weeks is None:
        preterm = not all(start in denied for start in said_preterm)
    elif _TERM.matches(text) and weeks is None:
        preterm = False
    return Birth(weeks, preterm, span)


def fact_spans(text: str) -> list[tuple[int, int]]:
    """Token spans of the newborn's states a denial may govern ("không vàng da", "không sinh non")."""
    return [(start, end) for phrases in (_PRETERM, _JAUNDICE) for start, end, _ in phrases.find(text)]


def jaundice_of(text: str, denied: set[int]) -> bool | None:
    """True when jaundice is said, False when only denied ("không vàng da"), None when not named."""
    starts = [start for start, _end, _ in _JAUNDICE.find(text)]
    if not starts:
        return None
    return not all(start in denied for start in starts)


# -- purposes -------------------------------------------------------------------------------------------

_PURPOSE_CUES = LEXICON.words("purpose_cues")
_PURPOSE_CUE_SET = LEXICON.concept("purpose_cues").phrase_set
PURPOSE_OBJECT_WORDS = 2  # "cai nghiện heroin": the words after a purpose are what it is about, not a drug asked


@dataclass(frozen=True)
class Purposes:
    ids: tuple[str, ...] = ()
    positions: frozenset[int] = frozenset()  # token positions of the purposes and their objects


def parse_purposes(text: str, clauses: Sequence[int]) -> Purposes:
    """What the drug is wanted for: a purpose phrase opened by, or right after, a purpose word.

    "uống levothyroxin để giảm cân" and "cai heroin" are purposes; "tôi béo phì" and "có làm giảm cân không"
    are not (a condition; an effect asked).

    >>> parse_purposes("dùng tramadol để cai heroin", [0] * 5).ids
    ('opioid_withdrawal',)
    >>> parse_purposes("thuốc này có làm giảm cân không", [0] * 7).ids
    ()
    """
    tokens = words(text)
    cue_ends = {end for _start, end, _ in _PURPOSE_CUE_SET.find(text)}
    ids: list[str] = []
    positions: set[int] = set()
    for key in PURPOSE_NAMES:
        for start, end, _phrase in LEXICON.find(f"purpose.{key}", text):
            if fold(tokens[start]) not in _PURPOSE_CUES and start not in cue_ends:
                continue
            if key not in ids:
                ids.append(key)
            stop = end
            while stop < min(len(tokens), end + PURPOSE_OBJECT_WORDS) and clauses[stop] == clauses[start]:
                stop += 1
            positions.update(range(start, stop))
    return Purposes(tuple(ids), frozenset(positions))


# -- past reactions -------------------------------------------------------------------------------------

_UNNAMED_DRUG = LEXICON.concept("unnamed_drug_words").phrase_set
_CLASS_PREFIXES = {key: tuple(p.strip() for p in prefixes.split(",") if p.strip())
                   for key, prefixes in LEXICON.mapping("drug_class_atc").items()}


def with_broader_classes(class_ids: Iterable[str]) -> tuple[str, ...]:
    """The classes and every class that holds all their members: a penicillin is a beta-lactam.

    >>> with_broader_classes(["penicilin"])
    ('penicilin', 'beta_lactam')
    """
    found = list(dict.fromkeys(class_ids))
    for class_id in list(found):
        own = _CLASS_PREFIXES.get(class_id, ())
        for other, prefixes in _CLASS_PREFIXES.items():
            if other not in found and own and all(any(p.startswith(q) for q in prefixes) for p in own):
                found.append(other)
    return tuple(found)


def classes_in_words(text: str) -> tuple[str, ...]:
    """Classes named in an allergy's words, in any spelling the lexicon lists ("penicillin", "quinolone")."""
    return tuple(classes_named(text))


def names_no_drug(span_text: str) -> bool:
    """An allergy's words that name a medicine without saying which ("thuốc", "kháng sinh", "một loại thuốc")."""
    return _UNNAMED_DRUG.matches(span_text) and not classes_named(span_text)
