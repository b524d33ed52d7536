"""Section headings by evidence: a line styled apart from the body whose text matches the catalogue.

A person knows a heading by two things at once: it *looks* different from the text (bold, larger,
small capitals, all capitals, numbered, space above it) and it *reads* like a section of the
monograph. Here the look is a set of cues measured against the book's own body style, and the
reading is a fuzzy match (rapidfuzz ``ratio``) of the text against every catalogue heading and
variant, once numbering ("7.", "VII.", "a)"), case, diacritics and punctuation are set aside.

Thresholds, measured on the foreign layouts of ``tests/fixtures/layouts/`` and the demo book:
every true heading scores 100 once cleaned, and the closest two catalogue headings score 72.7
against each other ("chi dinh" / "chong chi dinh"), so a heading needs :data:`HEADING_SCORE`
(with :data:`MARGIN` over the next section's score); a styled line scoring between
:data:`NEAR_MISS_SCORE` and that is reported with its best match, never silently taken or dropped.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from rapidfuzz import fuzz

from duocthu.book.pagetypes import Line
from duocthu.sections import SECTION_TITLES, SECTIONS
from duocthu.text import fold

HEADING_SCORE = 85.0
MARGIN = 10.0
NEAR_MISS_SCORE = 70.0
_NUMBERING_RE = re.compile(
    r"^\s*(?:(?:\d{1,3}(?:\.\d{1,3})*|[IVXLC]{1,7}|[A-Za-z])\s*[.):\]–-]|\(\s*(?:\d{1,3}|[A-Za-z]|[ivxIVX]{1,4})\s*\)"
    r"|§\s*\d{1,3}\.?|\d{1,3}\s(?=\D))\s*"
)
_CAPTION_RE = re.compile(r"^Bảng(?:\s+\d+[a-z]?)?\s*[.:–—-]\s*(.+)$")


@dataclass(frozen=True)
class BodyStyle:
    """The style most of the book's characters are set in."""

    size: float
    bold: bool
    italic: bool

    @classmethod
    def of(cls, lines: list[Line]) -> BodyStyle:
        """The style with most characters among ``lines``."""
        counts: Counter[tuple[float, bool, bool]] = Counter()
        for line in lines:
            counts[(round(line.size * 2) / 2, line.bold, line.italic)] += len(line.text)
        if not counts:
            return cls(10.0, False, False)
        size, bold, italic = counts.most_common(1)[0][0]
        return cls(size, bold, italic)


@dataclass(frozen=True)
class CatalogueMatch:
    """The catalogue heading a text reads as, and how closely (0–100)."""

    key: str | None
    title: str
    score: float


def caption_text(text: str) -> str | None:
    """The caption of "Bảng 1. X", "Bảng 2 – X", "Bảng: X", else ``None``."""
    match = _CAPTION_RE.match(text.strip())
    return match.group(1).strip() if match else None


def strip_numbering(text: str) -> str:
    """"7. Chỉ định" → "Chỉ định"; "VII. CHỈ ĐỊNH" → "CHỈ ĐỊNH"; "a) Mã ATC" → "Mã ATC"."""
    stripped = _NUMBERING_RE.sub("", text, count=1)
    return stripped if stripped.strip() else text


def numbered(text: str) -> bool:
    return strip_numbering(text) != text


def clean(text: str) -> str:
    """Numbering, case, diacritics and punctuation set aside; "y" read as "i" ("tương kị" / "tương kỵ")."""
    folded = "".join(c if c.isalnum() else " " for c in fold(strip_numbering(text))).replace("y", "i")
    return " ".join(folded.split())


@lru_cache(maxsize=1)
def _catalogue() -> tuple[tuple[str, str, str], ...]:
    """(cleaned heading, section key, heading as printed) for every catalogue heading and variant."""
    return tuple((clean(heading), section.key, heading)
                 for section in SECTIONS for heading in (section.title, *section.heading_variants))


@lru_cache(maxsize=4096)
def match_heading(text: str) -> CatalogueMatch:
    """The catalogue heading ``text`` reads as; ``key`` is ``None`` below the threshold or the margin."""
    cleaned = clean(text)
    best: dict[str, tuple[float, str]] = {}
    for heading, key, printed in _catalogue():
        score = 100.0 if heading == cleaned else max(fuzz.ratio(cleaned, heading),
                                                     fuzz.token_sort_ratio(cleaned, heading))
        if score > best.get(key, (-1.0, ""))[0]:
            best[key] = (score, printed)
    ranked = sorted(best.items(), key=lambda kv: -kv[1][0])
    (key, (score, printed)), runner_up = ranked[0], ranked[1][1][0] if len(ranked) > 1 else 0.0
    taken = score >= HEADING_SCORE and score - runner_up >= MARGIN
    return CatalogueMatch(key if taken else None, printed if not taken else SECTION_TITLES[key], round(score, 1))


def cues(line: Line, body: BodyStyle, space_above: bool) -> frozenset[str]:
    """How ``line`` looks different from the body text."""
    found = set()
    if line.bold and not body.bold:
        found.add("bold")
    if line.cap_size >= 1.08 * body.size and line.caps != "small":
        found.add("larger")
    if line.caps == "small" or (line.caps == "all" and _wordy(line.text)):
        found.add("small caps" if line.caps == "small" else "all caps")
    if line.italic and not body.italic:
        found.add("italic")
    if numbered(line.text):
        found.add("numbered")
    if space_above:
        found.add("space above")
    return frozenset(found)


def _wordy(text: str) -> bool:
    """Mostly letters, four or more: a word in capitals, not a code like "N02BE01"."""
    letters = sum(c.isalpha() for c in text)
    return letters >= 4 and letters >= 0.75 * sum(not c.isspace() for c in text)


_STRONG = frozenset({"bold", "larger", "small caps", "all caps"})


def styled(found: frozenset[str]) -> bool:
    """Enough look of a heading: one strong cue, or two weaker ones (e.g. italic with space above)."""
    return bool(found & _STRONG) or len(found) >= 2


def style_key(line: Line) -> tuple[float, bool, bool]:
    """What two lines of one heading share: size, weight and slant (not case: "… muốn" / "(ADR)")."""
    return (round(line.cap_size * 2) / 2, line.bold, line.italic)
