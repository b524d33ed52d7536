"""Population limits in the book's own sentences, parsed once at index time.

The safety screen compares them with the patient's age and pregnancy without re-reading the
text on every turn. Only the book's formal phrasings are parsed ("trẻ em dưới 12 tuổi", "trẻ
dưới 3 tháng tuổi", "trẻ sơ sinh", "3 tháng cuối thai kỳ", "phụ nữ cho con bú"); a sentence that
names none yields nothing, and the screen still matches conditions in it by words.

A limit stated only for a use, a form or a circumstance ("trẻ dưới 18 tuổi dùng để giảm đau sau
cắt amidan", "dạng tiêm: … trẻ dưới 3 tuổi") is marked ``conditional``: the screen shows it, but
it does not by itself make the drug contraindicated for the patient.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from duocthu.text import fold
from duocthu.types import PopulationLimit

NEWBORN_YEARS = 28 / 365

_NUMBER = r"(\d+(?:[.,]\d+)?)"
_UNDER_AGE_RE = re.compile(r"(?:duoi|< ?)\s*" + _NUMBER + r"\s*(tuoi|thang tuoi|thang|tuan tuoi|tuan|ngay tuoi)")
_FROM_AGE_RE = re.compile(r"\b(?:nguoi|benh nhan)\s*(?:tren|>)\s*" + _NUMBER + r"\s*tuoi")
_UNDER_WEIGHT_RE = re.compile(r"(?:duoi|< ?)\s*" + _NUMBER + r"\s*kg\b")
_NEWBORN_RE = re.compile(r"\btre (?:so sinh|de non|sinh non)\b|\bso sinh\b")
_CHILDREN_ONLY_RE = re.compile(r"^\s*tre em\s*[.;]?\s*$")
_PREGNANCY_START_RE = re.compile(
    r"^\s*(?:phu nu (?:co thai|mang thai|dang mang thai)|thoi ky mang thai|co thai|mang thai"
    r"|(?:ba|3|sau|6) thang (?:dau|giua|cuoi)(?: cua)? thai ky|(?:ba|3|sau|6) thang cuoi)"
)
_TRIMESTER_RE = re.compile(r"\b(?:3|ba) thang (dau|giua|cuoi)\b|\b(?:6|sau) thang (cuoi)\b")
_BREASTFEEDING_RE = re.compile(r"\b(?:phu nu |thoi ky )?(?:dang )?cho con bu\b")
_CONDITIONAL_RE = re.compile(
    r"\b(?:dung de|de dieu tri|de giam|(?<!tru )khi dung|(?<!tru )khi co|neu|dang tiem|dang uong|che pham"
    r"|trong phau thuat|sau (?:phau thuat|cat|mo)|truyen tinh mach|tiem tinh mach|lieu cao|lieu tren|nghi co)\b"
)
_POPULATION_WORDS = frozenset(
    ["tre", "em", "nho", "va", "thieu", "nien", "nguoi", "benh", "nhan", "so", "sinh", "de", "non", "phu", "nu", "co", "thai", "mang", "dang", "thoi", "ky", "cho", "con", "bu", "ba", "sau", "thang", "dau", "giua", "cuoi", "cua", "thai", "ky", "duoi", "tren", "tuoi", "ngay", "tuan", "hoac"]
)
# A limit stated for one form of the drug ("dạng tiêm", "đường uống"): it applies when that route is asked.
_ROUTE_RE = re.compile(r"\b(?:dang|duong|che pham) (tiem|uong)\b")
_ROUTES = {"tiem": "tiêm", "uong": "uống"}
_DOCTOR_EXCEPTION_RE = re.compile(
    r"\b(?:neu|tru khi|khi) (?:khong |chua )?(?:co )?(?:chi dinh|y kien|huong dan) (?:cua )?(?:thay thuoc|bac si)\b")
_EXCEPTION_RE = re.compile(r"\b(?:tru khi|tru truong hop|ngoai tru)\b.*$")
MAX_QUALIFYING_WORDS = 3
_UNIT_YEARS = {"tuoi": 1.0, "thang tuoi": 1 / 12, "thang": 1 / 12, "tuan tuoi": 1 / 52, "tuan": 1 / 52,
               "ngay tuoi": 1 / 365}
_TRIMESTER_WORDS = {"dau": (1,), "giua": (2,), "cuoi": (3,)}


def parse_limits(sentence: str) -> list[PopulationLimit]:
    """Every population limit one sentence of the book states.

    >>> [(l.kind, l.max_age_years, l.conditional) for l in parse_limits("Trẻ em dưới 12 tuổi.")]
    [('age', 12.0, False)]
    >>> [(l.kind, l.trimesters) for l in parse_limits("Ba tháng cuối thai kỳ.")]
    [('pregnancy', (3,))]
    """
    limits: list[PopulationLimit] = []
    route = route_of(sentence)
    for clause in _clauses(sentence):
        folded = fold(clause)
        conditional = _is_conditional(folded, after_colon=":" in sentence[: sentence.find(clause)] or ":" in clause)
        ages = [
            float(m.group(1).replace(",", ".")) * _UNIT_YEARS[m.group(2)]
            for m in _UNDER_AGE_RE.finditer(folded) if "thai" not in folded[max(0, m.start() - 10) : m.start()]
        ]
        if not ages and _NEWBORN_RE.search(folded):
            ages = [NEWBORN_YEARS]
        if _CHILDREN_ONLY_RE.match(folded):
            ages = [18.0]
        limits += [PopulationLimit("age", sentence, max_age_years=a, conditional=conditional) for a in ages]
        limits += [
            PopulationLimit("age", sentence, min_age_years=float(m.group(1).replace(",", ".")), conditional=conditional)
            for m in _FROM_AGE_RE.finditer(folded)
        ]
        limits += [PopulationLimit("weight", sentence, max_weight_kg=float(m.group(1).replace(",", ".")),
                                   conditional=conditional) for m in _UNDER_WEIGHT_RE.finditer(folded)]
        if _PREGNANCY_START_RE.match(folded):
            limits.append(PopulationLimit("pregnancy", sentence, trimesters=_trimesters(folded), conditional=conditional))
        if _BREASTFEEDING_RE.search(folded) and (_PREGNANCY_START_RE.match(folded) or folded.strip().startswith(
                ("phu nu", "thoi ky", "dang cho", "cho con"))):
            limits.append(PopulationLimit("breastfeeding", sentence, conditional=conditional))
    if route is not None:
        limits = [replace(limit, route=route, conditional=True) for limit in limits]
    return _unique(limits)


def route_of(sentence: str) -> str | None:
    """The route of administration a sentence is limited to ("Dạng tiêm …" → "tiêm"), if any."""
    match = _ROUTE_RE.search(fold(sentence))
    return _ROUTES[match.group(1)] if match else None


def _clauses(sentence: str) -> list[str]:
    """The sentence cut at ';' and ',' outside parentheses ("Phụ nữ mang thai, phụ nữ cho con bú")."""
    clauses, depth, start = [], 0, 0
    for i, ch in enumerate(sentence):
        depth += ch == "("
        depth -= ch == ")" and depth > 0
        if ch in ";," and depth == 0:
            clauses.append(sentence[start:i])
            start = i + 1
    clauses.append(sentence[start:])
    # "… cho con bú và phụ nữ có khả năng mang thai …": a new population starts a new clause.
    split = [part for c in clauses for part in re.split(r"\s+và\s+(?=(?:phụ nữ|trẻ|người)\b)", c, flags=re.IGNORECASE)]
    return [c for c in split if c.strip()]


def _is_conditional(folded: str, after_colon: bool) -> bool:
    """A clause that limits a population only for a use, form or state ("… dùng để …", "dạng tiêm: …",
    "trẻ sơ sinh có tăng bilirubin máu") rather than as such ("Trẻ em dưới 12 tuổi (…), trừ khi …")."""
    if after_colon or _CONDITIONAL_RE.search(_DOCTOR_EXCEPTION_RE.sub(" ", folded)):
        return True
    core = _EXCEPTION_RE.sub("", re.sub(r"\([^)]*\)?", " ", folded))
    qualifying = [w for w in re.findall(r"[a-z]+", core) if w not in _POPULATION_WORDS]
    return len(qualifying) > MAX_QUALIFYING_WORDS


def _trimesters(folded: str) -> tuple[int, ...]:
    found: set[int] = set()
    for match in _TRIMESTER_RE.finditer(folded):
        if match.group(1):
            found.update(_TRIMESTER_WORDS[match.group(1)])
        else:
            found.update((2, 3))
    return tuple(sorted(found))


def _unique(limits: list[PopulationLimit]) -> list[PopulationLimit]:
    return list(dict.fromkeys(limits))


def limits_of_sentences(sentences: Iterable[str]) -> tuple[PopulationLimit, ...]:
    return tuple(limit for sentence in sentences for limit in parse_limits(sentence))


def names_no_circumstance(sentence: str) -> bool:
    """The sentence attaches no use, form or circumstance to what it says ("nếu", "khi dùng", "dạng tiêm" …).

    "… nếu không có chỉ định của thầy thuốc" is an exception, not a circumstance: without a doctor's
    order — the situation of anyone asking here — the limit stands.
    """
    return not _CONDITIONAL_RE.search(_DOCTOR_EXCEPTION_RE.sub(" ", fold(sentence)))
