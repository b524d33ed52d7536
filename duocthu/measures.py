"""Measures and purposes named in text: the shared vocabulary of the book's thresholds and the patient's facts.

``MEASURE_NAMES`` (``measure.<id>`` of the lexicon: "độ thanh thải creatinin", "kali máu", …) and
``PURPOSE_NAMES`` (``purpose.<id>``: "giảm cân", "cai nghiện", …) are read by both sides of issue 24's
reasoning: the contraindication records parsed from the book and the patient facts parsed from the user.
"""

from __future__ import annotations

from duocthu.lexicon import LEXICON

MEASURE_NAMES: dict[str, tuple[str, ...]] = LEXICON.group("measure")
PURPOSE_NAMES: dict[str, tuple[str, ...]] = LEXICON.group("purpose")


def measures_named(text: str) -> list[str]:
    """Measure ids whose names occur in ``text``."""
    return [key for key in MEASURE_NAMES if LEXICON.matches(f"measure.{key}", text)]


def purposes_named(text: str) -> list[str]:
    """Purpose ids whose names occur in ``text``."""
    return [key for key in PURPOSE_NAMES if LEXICON.matches(f"purpose.{key}", text)]
