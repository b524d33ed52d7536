"""Resolve drug mentions to formulary drug_ids: names, aliases and brands, typo-tolerant.

Matching runs on folded word tokens, so "Paracetamol", "paracetamol" and "PARACETAMOL" meet,
and multi-word names ("acid acetylsalicylic") must appear as a contiguous phrase. A single-word
name also matches a near miss ("paracetamon", "ibuprofene") — but only for words that cannot be
Vietnamese syllables and only within a small edit distance, so ordinary words never match.
Drug-like words that match nothing are reported as unknown drugs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from duocthu.qdrant_store import DrugEntry
from duocthu.text import fold, folded_words, has_diacritics, words

# Onset + rhyme of a Vietnamese syllable without diacritics (a superset is fine: it only
# decides which words are *not* candidates for fuzzy drug matching).
_VIETNAMESE_SYLLABLE_RE = re.compile(
    r"^(ngh|ng|nh|ch|gh|gi|kh|ph|qu|th|tr|[bcdghklmnpqrstvx])?"
    r"(uye|uyu|oo|oa|oe|uy|ua|uo|ie|ye|ia|ai|ao|au|ay|eo|eu|iu|oi|ui|uu|uoi|uou|ieu|yeu|oai|oay|uay|uya|[aeiouy])"
    r"(ch|ng|nh|[cmnpt]|[iouy])?$"
)
_UNIT_WORDS = frozenset(["mg", "ml", "kg", "mcg", "microgam", "gam", "lit", "tuoi", "thang", "ngay", "gio", "lan", "vien", "goi", "ong"])
_NOT_DRUGS = frozenset(
    """
    covid virus corona helicobacter pylori candida herpes zona lyme trichomonas cryptococcus
    zollinger ellison adr atc inn who pdf gout insulin? hello thanks thank please sorry okay
    ignore previous instructions system prompt admin password select drop table script alert
    python javascript function return print console delete update insert where from
    """.replace("?", "").split()
)


def is_vietnamese_syllable(folded_word: str) -> bool:
    return bool(_VIETNAMESE_SYLLABLE_RE.match(folded_word))


def edit_distance(a: str, b: str, limit: int) -> int:
    """Levenshtein distance, giving up (returning limit+1) once it must exceed ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        if min(current) > limit:
            return limit + 1
        previous = current
    return previous[-1]


@dataclass(frozen=True)
class DrugMention:
    drug_id: str
    surface: str  # the words as typed
    label: str  # the name or alias it matched
    start: int  # token position
    end: int
    fuzzy: bool = False


class DrugResolver:
    def __init__(self, catalogue: Sequence[DrugEntry], known_words: Iterable[str] = ()):
        self.catalogue = {entry.drug_id: entry for entry in catalogue}
        self._labels: list[tuple[tuple[str, ...], str, str]] = []
        for entry in catalogue:
            labels = {entry.display_name, entry.drug_id.replace("_", " "), *entry.aliases}
            for label in labels:
                tokens = tuple(folded_words(label))
                if tokens:
                    self._labels.append((tokens, entry.drug_id, label))
        self._labels.sort(key=lambda item: (-len(item[0]), -len("".join(item[0]))))
        self._labels_by_first_word: dict[str, list[int]] = {}
        for index, (tokens, _, _) in enumerate(self._labels):
            self._labels_by_first_word.setdefault(tokens[0], []).append(index)
        self._single_word = {tokens[0]: (drug_id, label) for tokens, drug_id, label in self._labels if len(tokens) == 1}
        self._name_tokens = {t for tokens, _, _ in self._labels for t in tokens}
        self._known_words = {w for text in known_words for w in folded_words(text)} | _NOT_DRUGS

    def display_name(self, drug_id: str) -> str:
        entry = self.catalogue.get(drug_id)
        return entry.display_name if entry else drug_id

    def names_of(self, drug_id: str) -> list[str]:
        entry = self.catalogue.get(drug_id)
        return [entry.display_name, *entry.aliases] if entry else [drug_id]

    def find(self, text: str) -> tuple[list[DrugMention], list[str]]:
        """Drug mentions in order of appearance (each drug once), and unknown drug-like words."""
        raw = words(text)
        tokens = [fold(w) for w in raw]
        taken = [False] * len(tokens)
        mentions: list[DrugMention] = []
        # Only labels whose first word occurs in the text, still longest first (bench: 100 → 12 ms
        # per section turn at 300k chunks).
        present = set(tokens)
        candidates = sorted(
            (index for token in present for index in self._labels_by_first_word.get(token, ())),
        )
        for label_tokens, drug_id, label in (self._labels[i] for i in candidates):
            n = len(label_tokens)
            for start in range(len(tokens) - n + 1):
                if any(taken[start : start + n]) or tuple(tokens[start : start + n]) != label_tokens:
                    continue
                mentions.append(DrugMention(drug_id, " ".join(raw[start : start + n]), label, start, start + n))
                for i in range(start, start + n):
                    taken[i] = True
        unknown: list[str] = []
        for i, token in enumerate(tokens):
            if taken[i] or not self._drug_like(token, raw[i]):
                continue
            match = self._fuzzy(token)
            if match is not None:
                drug_id, label = match
                mentions.append(DrugMention(drug_id, raw[i], label, i, i + 1, fuzzy=True))
                taken[i] = True
            elif token not in self._known_words:
                unknown.append(raw[i])
        mentions.sort(key=lambda m: m.start)
        unique: list[DrugMention] = []
        for mention in mentions:
            if all(m.drug_id != mention.drug_id for m in unique):
                unique.append(mention)
        return unique, list(dict.fromkeys(unknown))

    def _drug_like(self, token: str, raw_word: str) -> bool:
        if len(token) < 5 or not token.isalpha() or token in _UNIT_WORDS:
            return False
        if has_diacritics(raw_word):
            return False  # typed with Vietnamese diacritics: an ordinary word
        return not is_vietnamese_syllable(token)

    def _fuzzy(self, token: str) -> tuple[str, str] | None:
        limit = 1 if len(token) <= 7 else 2
        best: tuple[int, str, str] | None = None
        for name, (drug_id, label) in self._single_word.items():
            if len(name) < 5:
                continue
            distance = edit_distance(token, name, limit)
            if distance <= limit and (best is None or distance < best[0]):
                best = (distance, drug_id, label)
        return (best[1], best[2]) if best else None
