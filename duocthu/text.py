"""Vietnamese text normalisation, diacritic folding, word tokens and phrase matching.

Everything that compares user text with formulary text goes through this module, so that
"hoà"/"hòa", NFD/NFC input and typing without diacritics all meet on the same form.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

_WORD_RE = re.compile(r"\w+", re.UNICODE)
_PIECE_RE = re.compile(r"\w+|[^\w\s]", re.UNICODE)
_COMBINING_TONE_MARKS = {"\u0300", "\u0301", "\u0303", "\u0309", "\u0323"}

# Old-style tone placement puts the mark on the second vowel of an open "oa", "oe", "uy"
# syllable (hoà, khoẻ, thuỷ); the modern style used by the shipped formulary puts it on the
# first (hòa, khỏe, thủy). The mark stays on the second vowel when a consonant follows (hoàn)
# or when that vowel carries its own mark (hoặc, thuật: NFD puts the dot below before the breve).
_OLD_STYLE_TONE_RE = re.compile(
    r"(?<![qQ])([oOuU])([aAeEyY])([\u0300\u0301\u0303\u0309\u0323])(?![\u0300-\u036f]|[^\W\d_])"
)


# Question-sized texts and phrase-table entries are normalised, folded and split again and again while
# one turn is read (hundreds of phrase tables); chunk-sized texts are not, so only short ones are cached.
_CACHED_UP_TO = 256


def normalize(text: str) -> str:
    """Return NFC text with modern tone-mark placement and no control characters.

    >>> normalize("ho\\u0300a") == normalize("hòa") == normalize("hoà")
    True
    """
    return _normalize_short(text) if len(text) <= _CACHED_UP_TO else _normalize(text)


def _normalize(text: str) -> str:
    decomposed = unicodedata.normalize("NFD", text)
    decomposed = _OLD_STYLE_TONE_RE.sub(_move_tone_to_first_vowel, decomposed)
    cleaned = "".join(
        ch if (ch in "\n\t" or unicodedata.category(ch)[0] != "C") else " " for ch in decomposed
    )
    return unicodedata.normalize("NFC", cleaned)


_normalize_short = lru_cache(maxsize=65536)(_normalize)


def _move_tone_to_first_vowel(match: re.Match[str]) -> str:
    first, second, tone = match.group(1), match.group(2), match.group(3)
    return f"{first}{tone}{second}"


def fold(text: str) -> str:
    """Lower-case, strip diacritics, map đ→d: the form used for diacritic-insensitive matching.

    >>> fold("Đau dạ dày")
    'dau da day'
    """
    return _fold_short(text) if len(text) <= _CACHED_UP_TO else _fold(text)


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFD", text.lower())
    stripped = "".join(ch for ch in decomposed if unicodedata.category(ch) != "Mn")
    return stripped.replace("đ", "d").replace("Đ", "d")


_fold_short = lru_cache(maxsize=65536)(_fold)


def words(text: str) -> list[str]:
    """Word-boundary tokens of normalised, lower-cased text (diacritics kept)."""
    if len(text) <= _CACHED_UP_TO:
        return list(_words_short(text))
    return _WORD_RE.findall(normalize(text).lower())


@lru_cache(maxsize=65536)
def _words_short(text: str) -> tuple[str, ...]:
    return tuple(_WORD_RE.findall(normalize(text).lower()))


_TURN_SENTENCE_END_RE = re.compile(r"[.!?\n]+")


def turn_sentences(text: str) -> list[str]:
    """The sentences of what a user typed, split at any ``.``, ``!``, ``?`` or line break (users do not
    capitalise after a full stop, so the book's :func:`duocthu.chunker.split_sentences` does not apply)."""
    return [s for s in _TURN_SENTENCE_END_RE.split(normalize(text)) if words(s)]


def folded_words(text: str) -> list[str]:
    """Word-boundary tokens of folded text: the unit of every lexical match."""
    return _WORD_RE.findall(fold(normalize(text)))


def has_diacritics(word: str) -> bool:
    return fold(word) != word.lower()


def find_phrase(haystack: Sequence[str], phrase: Sequence[str]) -> int:
    """Position of the first contiguous occurrence of ``phrase`` in ``haystack`` tokens, or -1.

    Tokens are whole words, so a phrase never matches across or inside a word boundary.
    """
    n = len(phrase)
    if n == 0 or n > len(haystack):
        return -1
    first = phrase[0]
    for start in range(len(haystack) - n + 1):
        if haystack[start] == first and list(haystack[start : start + n]) == list(phrase):
            return start
    return -1


def token_matches(query_word: str, phrase_word: str) -> bool:
    """Diacritic-insensitive only where the user typed without diacritics.

    "lieu" matches "liều"; "liệu" (as in "liệu pháp") does not match "liều".
    """
    if has_diacritics(query_word):
        return query_word == phrase_word or _letters_and_marks(query_word) == _letters_and_marks(phrase_word)
    return query_word == fold(phrase_word)


@lru_cache(maxsize=65536)
def _letters_and_marks(word: str) -> tuple[str, tuple[str, ...]]:
    """Base letters (đ kept) and the multiset of diacritic marks: "hoà" and "hòa" (the tone mark on
    either vowel, both spellings in use) are one word; "lâu" and "lậu" are not."""
    decomposed = unicodedata.normalize("NFD", word.lower())
    letters = "".join(c for c in decomposed if not unicodedata.combining(c))
    return letters, tuple(sorted(c for c in decomposed if unicodedata.combining(c)))


def typed_with_accents(text: str) -> bool:
    """Whether the user types Vietnamese with its diacritics (most words carry them), so that a word
    typed without any is meant without them ("ho" is a cough, not "hỗ")."""
    tokens = words(text)
    accented = sum(has_diacritics(t) for t in tokens)
    return accented >= 2 and accented >= 0.5 * len(tokens)


def find_phrase_in_book_words(book: Sequence[str], typed: Sequence[str], typed_with_accents: bool = False) -> int:
    """Position of the user's ``typed`` words in the book's words, or -1.

    Each word is compared with :func:`token_matches`; and a user who put the accents on every
    other accented word of the phrase typed this one as meant: "bệnh than" (anthrax) is not
    "bệnh thận", while "benh than" may be either. ``typed_with_accents`` (the whole question had
    them): every word as typed.
    """
    n = len(typed)
    for start in range(len(book) - n + 1):
        span = book[start : start + n]
        if not all(token_matches(typed[i], span[i]) for i in range(n)):
            continue
        if typed_with_accents and any(_letters_and_marks(typed[i]) != _letters_and_marks(span[i]) for i in range(n)):
            continue
        accented = [i for i in range(n) if has_diacritics(span[i])]
        bare = [i for i in accented if not has_diacritics(typed[i])]
        if bare and len(bare) < len(accented):
            continue
        return start
    return -1


def find_phrase_accent_aware(query: Sequence[str], phrase: Sequence[str]) -> int:
    """Like :func:`find_phrase`, comparing each word with :func:`token_matches`."""
    n = len(phrase)
    if n == 0 or n > len(query):
        return -1
    for start in range(len(query) - n + 1):
        if all(token_matches(query[start + i], phrase[i]) for i in range(n)):
            return start
    return -1


def count_tokens(text: str) -> int:
    """Estimate of model tokens, used for evidence packing budgets and chunk sizes.

    Each word or punctuation piece costs ``ceil(len/4)`` tokens, at least one. Over the demo
    formulary it over-counts the e5 (XLM-R) tokenizer by 1.9 % in aggregate, but it is an
    estimate, not a bound: 28 % of chunks are under-counted, down to 0.67× (notebook 04).
    """
    return sum(max(1, math.ceil(len(piece) / 4)) for piece in _PIECE_RE.findall(text))


# Function words that carry no clinical meaning; lexical scoring ignores them so a match on
# "của", "cho", "người" cannot make an unrelated chunk look supported. They are compared with
# their diacritics; a word typed without diacritics is dropped only when its folded form
# cannot also be a clinical word ("da" may be "dạ" or "da"/"dạ dày", "con" may be "còn" or
# "cho con bú", "nao" may be "nào" or "não").
STOPWORDS_ACCENTED: frozenset[str] = frozenset(
    normalize(w)
    for w in ["và", "của", "cho", "có", "không", "là", "thì", "mà", "với", "được", "bị", "khi", "nào", "gì", "sao", "thế", "này", "đó", "các", "những", "một", "người", "bệnh", "thuốc", "dùng", "uống", "trong", "ngoài", "trên", "dưới", "để", "làm", "hay", "hoặc", "nếu", "vậy", "rồi", "còn", "đang", "đã", "sẽ", "cần", "nên", "phải", "ạ", "ơi", "nhé", "nhỉ", "à", "ừ", "vâng", "bác", "sĩ", "anh", "chị", "tôi", "mình", "bạn", "ai", "nhiêu", "mấy", "như", "từ", "ra", "vào", "lúc", "sau", "trước", "cùng", "theo", "về", "hỏi", "xin", "biết", "muốn"]
)
_FOLDED_COLLISIONS = frozenset(
    ["da", "co", "con", "nao", "may", "bao", "tu", "de", "trong", "than", "ra", "sau", "truoc", "nen", "lam", "ban", "chi", "anh", "mat"]
)
STOPWORDS: frozenset[str] = frozenset(fold(w) for w in STOPWORDS_ACCENTED) - _FOLDED_COLLISIONS
"""Folded stopwords safe to drop from text typed without diacritics."""


def content_words(text: str) -> list[str]:
    """Folded words that carry meaning, in order, duplicates kept."""
    kept = []
    for word in words(text):
        if word in STOPWORDS_ACCENTED:
            continue
        if not has_diacritics(word) and word in STOPWORDS:
            continue
        kept.append(fold(word))
    return kept


@lru_cache(maxsize=1024)
def word_forms(text: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[bool, ...]]:
    """The words of a text three ways at once — as typed (lower case), folded, and whether typed with
    diacritics — computed once per text for every phrase table that reads it."""
    raw = tuple(words(text))
    return raw, tuple(fold(w) for w in raw), tuple(has_diacritics(w) for w in raw)


class PhraseSet:
    """A table of phrases matched accent-aware on whole words, indexed by their first folded word.

    A word typed with diacritics must match the phrase's word exactly ("tối" is not "tôi"); a word
    typed without diacritics matches its folded form ("toi" is "tôi").
    """

    def __init__(self, phrases: Sequence[str]):
        self.phrases = tuple(phrases)
        self._by_first: dict[str, list[tuple[tuple[str, ...], tuple[str, ...], str]]] = {}
        for phrase in self.phrases:
            raw = tuple(words(phrase))
            if raw:
                folded = tuple(fold(w) for w in raw)
                self._by_first.setdefault(folded[0], []).append((raw, folded, phrase))

    def find(self, text: str) -> list[tuple[int, int, str]]:
        """Every (start, end, phrase) occurrence in the text, in text order."""
        raw, folded, accented = word_forms(text)
        found = []
        for start, first in enumerate(folded):
            for phrase_raw, phrase_folded, phrase in self._by_first.get(first, ()):
                end = start + len(phrase_raw)
                if end > len(raw) or folded[start:end] != phrase_folded:
                    continue
                if all(not accented[start + i] or raw[start + i] == phrase_raw[i] for i in range(len(phrase_raw))):
                    found.append((start, end, phrase))
        return found

    def matches(self, text: str) -> bool:
        raw, folded, accented = word_forms(text)
        for start, first in enumerate(folded):
            for phrase_raw, phrase_folded, _phrase in self._by_first.get(first, ()):
                end = start + len(phrase_raw)
                if end <= len(raw) and folded[start:end] == phrase_folded and all(
                    not accented[start + i] or raw[start + i] == phrase_raw[i] for i in range(len(phrase_raw))
                ):
                    return True
        return False


@lru_cache(maxsize=512)
def phrase_set(phrases: tuple[str, ...]) -> PhraseSet:
    return PhraseSet(phrases)
