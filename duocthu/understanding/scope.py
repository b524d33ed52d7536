"""The deterministic scope guard (routing row 1): code, symbol soup, keyboard mashing, prompt attacks.

It runs before any conversational clarify, so an out-of-scope request never looks recoverable.
"""

from __future__ import annotations

import re

from duocthu.lexicon import LEXICON
from duocthu.text import folded_words, phrase_set
from duocthu.understanding.drugs import is_vietnamese_syllable

INSTRUCTION_ATTACK_PHRASES = LEXICON.phrases("instruction_attack_phrases")
_CODE_RE = re.compile(
    r"(<\s*/?\s*(script|iframe|img|svg|html|body|div)\b|\bselect\b.+\bfrom\b|\bdrop\s+table\b|"
    r"\bunion\s+select\b|\binsert\s+into\b|\bdef\s+\w+\s*\(|\bimport\s+\w+|\bconsole\.log\b|"
    r"\bfunction\s*\(|=>|\{\s*\"|\bprint\s*\(|#include|\brm\s+-rf\b|;\s*--|\bexec\s*\()",
    re.IGNORECASE | re.DOTALL,
)
_CONSONANT_RUN_RE = re.compile(r"[bcdfghjklmnpqrstvwxz]{4,}")


def has_phrase(text: str, phrases: tuple[str, ...]) -> bool:
    """Word-anchored phrase match; a word typed with diacritics must match them exactly.

    "Tối nay" does not match "tôi"; "toi" (typed without diacritics) does.
    """
    return phrase_set(tuple(phrases)).matches(text)


# An English override or a request for the hidden instructions, however it is worded: an override verb before
# what it overrides ("disregard the rules you were given"), or the system's own text asked for.
_ENGLISH_OVERRIDE_RE = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass|skip)\b(?:\W+\w+){0,5}?\W+"
    r"(?:instructions?|rules?|prompts?|guidelines?|guardrails?|restrictions?|directives?)\b"
    r"|\b(?:system|hidden|initial|original|developer|internal)\s+(?:message|prompt|instructions?|rules)\b",
    re.IGNORECASE)


# The same in Vietnamese, kept to the rules the assistant was given ("quy tắc", "luật", "nguyên tắc"; not
# "hướng dẫn", which patients forget about their medicines) and to a new role given to it ("giờ bạn là …").
_VIETNAMESE_OVERRIDE_RE = re.compile(
    r"\b(?:quên|bỏ qua|phớt lờ|lờ đi|bỏ|gạt bỏ|vượt qua)(?:\s+(?:hết|mọi|tất cả|các|những|mấy|cái|toàn bộ|đi)){0,3}\s+"
    r"(?:quy tắc|luật lệ|luật|nguyên tắc|giới hạn|ràng buộc)\b"
    r"|\b(?:từ giờ|từ bây giờ|giờ|bây giờ)\s+(?:bạn|mày)\s+(?:là|đóng vai|hãy là|hãy đóng vai)\s+(?!ai\b|gì\b)",
    re.IGNORECASE)


def looks_like_instruction_attack(text: str) -> bool:
    return has_phrase(text, INSTRUCTION_ATTACK_PHRASES) or bool(_ENGLISH_OVERRIDE_RE.search(text)) \
        or bool(_VIETNAMESE_OVERRIDE_RE.search(text))


def looks_like_code(text: str) -> bool:
    return bool(_CODE_RE.search(text))


def _pronounceable(token: str) -> bool:
    return any(v in token for v in "aeiouy") and not _CONSONANT_RUN_RE.search(token)


def looks_like_gibberish(text: str, known_tokens: set[str] | frozenset[str]) -> bool:
    """Mostly unpronounceable tokens (keyboard mashing), none of them a known name."""
    tokens = [t for t in folded_words(text) if t.isalpha()]
    if not tokens:
        return not any(ch.isdigit() for ch in text)
    plausible = sum(
        1 for t in tokens
        if is_vietnamese_syllable(t) or t in known_tokens or len(t) <= 2 or _pronounceable(t)
    )
    return plausible / len(tokens) < 0.5


def letter_ratio(text: str) -> float:
    visible = [c for c in text if not c.isspace()]
    if not visible:
        return 0.0
    return sum(1 for c in visible if c.isalpha() or c.isdigit()) / len(visible)


def looks_non_human(turn: str, known_tokens: frozenset[str] = frozenset()) -> bool:
    """Empty, symbol soup, code, gibberish or an instruction attack."""
    text = turn.strip()
    if not text:
        return True
    if looks_like_instruction_attack(text) or looks_like_code(text):
        return True
    if letter_ratio(text) < 0.5:
        return True
    return looks_like_gibberish(text, known_tokens)
