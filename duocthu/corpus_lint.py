"""Style lint of the formulary: one spelling per unit and term, reported by ``duocthu index``.

Answers quote the book verbatim, so "1 000" in one monograph and "1000" in the next, or "mg/l"
beside "mg/lít", read as carelessness (and split lexical matches). Each rule below is a row:
the form to avoid, the form the shipped formulary uses, and why. Warnings never block an index.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class LintRule:
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


RULES: tuple[LintRule, ...] = (
    LintRule("thousands written with a space", re.compile(r"(?<![\d,.])\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?![\d,])"), "1000"),
    LintRule("thousands written with a dot", re.compile(r"(?<![\d,.])\d{1,3}(?:\.\d{3})+(?![\d,.])"), "1000"),
    LintRule("English 'block'", re.compile(r"\bblock\b", re.IGNORECASE), "blốc"),
    LintRule("litre abbreviated 'l'", re.compile(r"(?<=[A-Za-zµ])/l\b(?!ít)"), "/lít"),
    LintRule("square metre as 'm2'", re.compile(r"(?<=\b)m2\b"), "m²"),
    LintRule("'vaccin' or 'vắc-xin'", re.compile(r"\bvaccin\w*|\bvắc-xin\b", re.IGNORECASE), "vắc xin"),
    LintRule("'placebo'", re.compile(r"\bplacebo\b", re.IGNORECASE), "giả dược"),
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
