"""Measures and purposes named in text: the shared vocabulary of the book's thresholds and the patient's facts.

``MEASURE_NAMES`` (``measure.<id>`` of the lexicon: "độ thanh thải creatinin", "kali máu", …) and
``PURPOSE_NAMES`` (``purpose.<id>``: "giảm cân", "cai nghiện", …) are read by both sides of issue 24's
reasoning: the contraindication records parsed from the book and the patient facts parsed from the user.
"""

from __future__ import annotations

import re

from duocthu.lexicon import LEXICON
from duocthu.text import fold, normalize
from duocthu.types import Threshold

MEASURE_NAMES: dict[str, tuple[str, ...]] = LEXICON.group("measure")
PURPOSE_NAMES: dict[str, tuple[str, ...]] = LEXICON.group("purpose")


def measures_named(text: str) -> list[str]:
    """Measure ids whose names occur in ``text``."""
    return [key for key in MEASURE_NAMES if LEXICON.matches(f"measure.{key}", text)]


def purposes_named(text: str) -> list[str]:
    """Purpose ids whose names occur in ``text``."""
    return [key for key in PURPOSE_NAMES if LEXICON.matches(f"purpose.{key}", text)]


# --- numbers with a comparator and a unit: "< 10 ml/phút", "> 5,0 mmol/lít", "từ 15 mg/tuần trở lên" ---------
# Read on folded text, so "dưới 30 ml/phút" and "duoi 30 ml/phut" meet. A number is a threshold of the measure
# named last before it in its clause, or of the measure its unit alone identifies ("mg/tuần" is a weekly dose).

_COMPARATOR_WORDS: tuple[tuple[str, str], ...] = (
    # longest first: "khong vuot qua" before "vuot qua"
    ("khong vuot qua", "<="), ("khong qua", "<="), ("toi da", "<="), ("it nhat", ">="), ("toi thieu", ">="),
    ("nho hon hoac bang", "<="), ("lon hon hoac bang", ">="), ("nho hon", "<"), ("thap hon", "<"),
    ("it hon", "<"), ("lon hon", ">"), ("cao hon", ">"), ("vuot qua", ">"), ("chua den", "<"),
    ("duoi", "<"), ("tren", ">"), ("tu", ">="), ("chi con", "="), ("con", "="), ("la", "="),
    ("<=", "<="), ("=<", "<="), ("≤", "<="), (">=", ">="), ("=>", ">="), ("≥", ">="), ("<", "<"), (">", ">"),
    ("=", "="),
)
_UNITS: tuple[tuple[str, str], ...] = (
    # folded pattern → normalised unit, longest first
    (r"ml/phut/1[,.]73\s*m(?:2|²)", "ml/phút/1,73 m²"), (r"ml/phut", "ml/phút"), (r"ml/ph", "ml/phút"),
    (r"mmol/lit", "mmol/l"), (r"mmol/l", "mmol/l"), (r"meq/lit", "mmol/l"), (r"meq/l", "mmol/l"),
    (r"(?:µ|μ|u)mol/l(?:it)?", "µmol/l"), (r"mg/dl", "mg/dl"), (r"mg/tuan", "mg/tuần"), (r"mg/ngay", "mg/ngày"),
    (r"g/ngay", "g/ngày"), (r"mmhg", "mmhg"), (r"lan/phut", "lần/phút"), (r"nhip/phut", "lần/phút"),
    (r"lan gioi han tren(?: cua (?:muc )?binh thuong)?", "x uln"), (r"ms", "ms"), (r"u/l", "u/l"),
)
# A unit that names its measure when the sentence does not ("dưới 30 ml/phút" is a clearance).
_UNIT_QUANTITY = {
    "ml/phút": "creatinine_clearance", "ml/phút/1,73 m²": "egfr", "mg/tuần": "dose_per_week",
    "mg/ngày": "dose_per_day", "g/ngày": "dose_per_day", "mmhg": "systolic_bp", "lần/phút": "heart_rate",
    "ms": "qtc",
}
_CLASS_SCALES = {"child_pugh": {"a": 1.0, "b": 2.0, "c": 3.0}, "nyha": {"i": 1.0, "ii": 2.0, "iii": 3.0, "iv": 4.0}}
_NUMBER = r"\d+(?:[.,]\d+)*"
_CMP_RE = "|".join(re.escape(word) for word, _ in _COMPARATOR_WORDS)
_UNIT_RE = "|".join(f"(?:{pattern})" for pattern, _ in _UNITS)
_THRESHOLD_RE = re.compile(
    rf"(?:(?<![\w<>=≤≥])(?P<cmp>{_CMP_RE})\s*)?(?<![\d.,])(?P<num>{_NUMBER})(?![.,]?\d)"
    rf"(?:\s*(?P<unit>{_UNIT_RE})(?![\w]))?(?:\s*(?P<post>tro len|tro xuong))?"
)
_RANGE_AFTER_RE = re.compile(r"\s*(?:-|–|den)\s*\d")
_OTHER_UNIT_RE = re.compile(r"\s*(?:tuoi|thang|tuan|ngay|gio|phut|kg|g\b|mg\b|mcg|%|lan\b|vien|dot|nam)")
_CLAUSE_BREAK_RE = re.compile(r"[;:.]\s|[;:]")
_CLASS_RE = re.compile(
    r"(?P<name>child[- ]?pugh|nyha)\s*(?:do\s*|class\s*|loai\s*)?(?P<cmp>>=|≥|>|tu)?\s*"
    r"(?P<low>iv|iii|ii|i|[abc1-4])\b(?:\s*(?:-|–|hoac|den|,)\s*(?P<high>iv|iii|ii|i|[abc1-4])\b)?"
)
_MAX_WORDS_AFTER_NAME = 4  # "kali huyết thanh > 5,0": the number follows its name closely when it has no unit


def _number(text: str) -> float:
    """'5,0' → 5.0, '1.000' → 1000.0 (Vietnamese: comma for decimals, dot for thousands)."""
    if re.fullmatch(r"\d{1,3}(?:\.\d{3})+", text):
        return float(text.replace(".", ""))
    return float(text.replace(",", "."))


def _last_measure(window: str) -> tuple[str, int] | None:
    """The measure named last in ``window`` and how many words follow its name."""
    best: tuple[str, int] | None = None
    best_end = -1
    total = len(window.split())
    for key in MEASURE_NAMES:
        for _start, end, _phrase in LEXICON.find(f"measure.{key}", window):
            if end > best_end:
                best, best_end = (key, 0), end
    return None if best is None else (best[0], max(0, total - best_end))


def _class_thresholds(folded: str) -> list[tuple[int, int, Threshold]]:
    found = []
    for match in _CLASS_RE.finditer(folded):
        quantity = "child_pugh" if match["name"].startswith("child") else "nyha"
        scale = _CLASS_SCALES[quantity]
        low = scale.get(match["low"], float(match["low"]) if match["low"].isdigit() else 0.0)
        top = max(scale.values())
        ranged = match["high"] is not None or match["cmp"] is not None
        comparator = ">=" if ranged or low == top else "="
        found.append((match.start(), match.end(), Threshold(quantity, comparator, low, "")))
    return found


def read_thresholds(text: str, require_comparator: bool = True) -> list[Threshold]:
    """Numbers compared with a named measure in ``text``, in reading order.

    ``require_comparator=False`` also returns bare values ("kali 5,9 mmol/L" → ``=``), for what a user states.

    >>> read_thresholds("Suy thận nặng (độ thanh thải creatinin < 10 ml/phút).")
    [Threshold(quantity='creatinine_clearance', comparator='<', value=10.0, unit='ml/phút')]
    >>> read_thresholds("methotrexat liều từ 15 mg/tuần trở lên")
    [Threshold(quantity='dose_per_week', comparator='>=', value=15.0, unit='mg/tuần')]
    """
    folded = fold(normalize(text))
    found = _class_thresholds(folded)
    taken = [(start, end) for start, end, _ in found]
    clause_start = 0
    for match in _THRESHOLD_RE.finditer(folded):
        if any(start <= match.start("num") < end for start, end in taken):
            continue
        threshold = _threshold(folded, match, clause_start)
        clause_start = match.end() if threshold else clause_start
        if threshold and (threshold.comparator != "=" or not require_comparator):
            found.append((match.start(), match.end(), threshold))
    return [threshold for _start, _end, threshold in sorted(found, key=lambda item: item[0])]


def _threshold(folded: str, match: re.Match[str], clause_start: int) -> Threshold | None:
    unit_text = match["unit"]
    after = folded[match.end("num"):]
    if _RANGE_AFTER_RE.match(after) and not match["cmp"]:
        return None  # "10–80 mg/ngày", "2,0–3,0": a range, not a limit
    if not unit_text and _OTHER_UNIT_RE.match(after):
        return None  # an age, a weight, a duration, a dose per kg: not a measure
    unit = _normal_unit(unit_text) if unit_text else ""
    breaks = list(_CLAUSE_BREAK_RE.finditer(folded, clause_start, match.start()))
    window = folded[breaks[-1].end() if breaks else clause_start: match.start()]
    named = _last_measure(window)
    if named and (unit or named[1] <= _MAX_WORDS_AFTER_NAME):
        quantity = named[0]
    elif unit in _UNIT_QUANTITY:
        quantity = _UNIT_QUANTITY[unit]
    else:
        return None
    comparator = _comparator(match["cmp"], match["post"])
    return Threshold(quantity, comparator, _number(match["num"]), unit)


def _normal_unit(unit_text: str) -> str:
    for pattern, unit in _UNITS:
        if re.fullmatch(pattern, unit_text):
            return unit
    return unit_text


def _comparator(word: str | None, post: str | None) -> str:
    if post:
        return ">=" if post == "tro len" else "<="
    if not word:
        return "="
    return dict(_COMPARATOR_WORDS)[word]
