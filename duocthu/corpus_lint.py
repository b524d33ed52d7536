"""Style lint of the formulary: one spelling per unit and term, reported by ``duocthu index``.

Answers quote the book verbatim, so "1 000" in one monograph and "1000" in the next, or "mg/l"
beside "mg/lít", read as carelessness (and split lexical matches: a patient's "hạ đường huyết"
finds nothing in a monograph that wrote "hạ glucose máu"). Two tables, one row per variant: units
and numbers (``UNIT_RULES``), and terms (``TERMS``: the variant, the form the shipped formulary
uses, and why). Warnings never block an index; a test keeps the shipped formulary at zero.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class LintRule:
    """One row: a pattern for the form to avoid, the form to write instead, and why (``name``)."""

    name: str
    pattern: re.Pattern[str]
    preferred: str


@dataclass(frozen=True)
class LintWarning:
    path: Path
    line: int
    rule: str
    found: str
    preferred: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.found!r} → {self.preferred!r} ({self.rule})"


UNIT_RULES: tuple[LintRule, ...] = (
    LintRule("thousands written with a space", re.compile(r"(?<![\d,.])\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?![\d,])"), "1000"),
    LintRule("thousands written with a dot", re.compile(r"(?<![\d,.])\d{1,3}(?:\.\d{3})+(?![\d,.])"), "1000"),
    LintRule("English 'block'", re.compile(r"\bblock\b", re.IGNORECASE), "blốc"),
    LintRule("litre abbreviated 'l'", re.compile(r"(?<=[A-Za-zµ])/l\b(?!ít)"), "/lít"),
    LintRule("square metre as 'm2'", re.compile(r"(?<=\b)m2\b"), "m²"),
    LintRule("'vaccin' or 'vắc-xin'", re.compile(r"\bvaccin\w*|\bvắc-xin\b", re.IGNORECASE), "vắc xin"),
    LintRule("'placebo'", re.compile(r"\bplacebo\b", re.IGNORECASE), "giả dược"),
    LintRule("power of ten written with '^'", re.compile(r"10\^-?\d+"), "10⁹, 10⁻⁸ (superscripts)"),
    LintRule("'x' as a multiplication sign", re.compile(r"(?<=\d )[xX](?= 10)|(?<=\d)[xX](?=10)"), "×"),
    LintRule("AUC unit written with '.', 'x' or 'h'",
             re.compile(r"\bmg(?!·giờ/lít)(?:\s*[.*x×⋅·]\s*|\s+)(?:giờ|h)\s*/\s*l\w*"), "mg·giờ/lít"),
)

TERMS: tuple[tuple[str, str, str], ...] = (
    # (variant: a regex, matched ignoring case; the form the formulary writes; why)
    (r"\bmonoamin\w* oxydase\b", "monoamin oxidase", "'oxydase' is the French spelling"),
    (r"\bức chế MAO\b|\bMAOIs?\b", "ức chế monoamin oxidase (IMAO)",
     "the enzyme spelled out, then the book's abbreviation IMAO"),
    (r"\b(?:cholestyramin\w*|colestiramin\w*|colestyramine)\b", "colestyramin",
     "Vietnamese INN spelling: c, not ch, no final e"),
    (r"\bsulfonylure(?:as?)?\b|\bsulphonylure\w*", "sulfonylurê", "the class name ends in ê"),
    (r"\bcỏ ban(?: Âu)?\b|\bSt\.? John'?s(?: wort)?\b", "cỏ St John", "one name for Hypericum perforatum"),
    (r"\bco-trimoxazol\w*|\bcotrimoxazole\b", "cotrimoxazol", "Vietnamese INN spelling, no hyphen"),
    (r"\btái (?:thu hồi|hấp thụ) serotonin\b", "tái hấp thu serotonin", "one name for serotonin reuptake"),
    (r"\bheparin\b[^.;]*?\d\s*(?:IU|UI|đv|đơn vị(?! đường))(?!\w)|\b\d[\d,–]*\s*(?:IU|UI|đv|đơn vị)\s+heparin\b",
     "đvqt", "heparin is dosed in đơn vị quốc tế, written đvqt throughout"),
    (r"\bhạ (?:glucose (?:huyết|máu)|đường máu)\b", "hạ đường huyết",
     "one term for hypoglycaemia, the one patients use"),
    (r"\btăng (?:glucose (?:huyết|máu)|đường máu)\b", "tăng đường huyết", "the same word as for hypoglycaemia"),
    (r"\bnhũ dịch\b", "nhũ tương", "one word for an emulsion"),
    (r"\bđẻ non\b|\bsơ sinh non tháng\b", "sinh non", "one word for preterm"),
)

RULES: tuple[LintRule, ...] = UNIT_RULES + tuple(
    LintRule(why, re.compile(variant, re.IGNORECASE), preferred) for variant, preferred, why in TERMS
)


def lint_text(path: Path, text: str) -> list[LintWarning]:
    """Warnings for the body of one monograph file (front matter skipped: it holds names and codes)."""
    lines = text.split("\n")
    start = 0
    if lines and lines[0].strip() == "---":
        start = next((i + 1 for i in range(1, len(lines)) if lines[i].strip() == "---"), 0)
    found = []
    for number in range(start, len(lines)):
        for rule in RULES:
            for match in rule.pattern.finditer(lines[number]):
                found.append(LintWarning(path, number + 1, rule.name, match.group(0), rule.preferred))
    return found


def lint_files(paths: Iterable[Path]) -> list[LintWarning]:
    """Warnings for every file, in file order."""
    return [w for path in paths for w in lint_text(path, path.read_text(encoding="utf-8"))]
