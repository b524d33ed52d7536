"""The condition lexicon: every condition phrase of the book, plus a reviewed synonym table.

Built once per served index from the Chỉ định, Chống chỉ định and Thận trọng sections (what the
book can name) and ``data/understanding/conditions.yaml`` (how people say it: "suyễn", "tiểu
đường", "đau bao tử"; which form is a severe one: "suy thận nặng" of "suy thận"). The understander
uses it to find the conditions a patient states; the safety screen uses each condition's phrases
to find the book's sentences that name it. Matching is on whole words, diacritic-insensitive where
the user typed without diacritics ("suy than" finds "suy thận"), never on substrings.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import yaml

from duocthu.config import PROJECT_ROOT
from duocthu.lexicon import LEXICON
from duocthu.text import (
    STOPWORDS_ACCENTED,
    PhraseSet,
    folded_words,
    has_diacritics,
    normalize,
    word_forms,
    words,
)

SYNONYMS_PATH = PROJECT_ROOT / "data" / "understanding" / "conditions.yaml"
LEXICON_SECTIONS = ("chi_dinh", "chong_chi_dinh", "than_trong")
MAX_PHRASE_WORDS = 7
# What a drug does, not what a patient has ("hạ sốt" is a use; "hạ kali máu" is a condition).
NOT_CONDITIONS = frozenset(frozenset(LEXICON.phrases("not_conditions")))

# Words that open a condition item in the book but are not part of the condition's name.
_LEADING_FILLER = LEXICON.phrases("leading_filler")
_ITEM_SPLIT_RE = re.compile(r"[.;:,()\n]|\s(?:và|hoặc|hay|kèm|do|ở|khi|trong|với|sau|như|nhất là|kể cả)\s")
# A condition phrase of the book starts with one of these words (its head): "suy thận nặng",
# "viêm gan", "hội chứng …" — which keeps "bắt đầu điều trị" or "mục chống chỉ định" out.
CONDITION_HEADS = frozenset(words(
    "bệnh suy viêm loét nhiễm hội rối tăng hạ thiếu đau u ung xơ sỏi hen phù sốc nhồi xuất chảy blốc block "
    "rung cuồng nhịp co động đái béo trầm lo mất nghiện ngộ dị mày ngứa sốt ho nôn buồn tiêu táo glôcôm giảm "
    "thủng tắc hẹp phì cường nhược porphyrin lupus vảy trứng zona thủy herpes lao lậu giang gút tổn chấn "
    "bỏng gãy thuyên đột tai phình cơn bướu nang polyp mụn nấm thoái loãng vàng phát mề chàm tim "
    "khó ợ trào đầy sa trĩ nứt áp bí vô thai sảy sinh kinh đa phản run cứng liệt yếu teo ngất choáng "
    "đục mờ khô chóng say nhức ban nổi thâm ứ"
))


@dataclass(frozen=True)
class Condition:
    """One condition: its label, every phrase that names it, and its broader form if it has one."""

    label: str
    forms: tuple[str, ...]
    broader: str | None = None
    clearance_below: float | None = None
    from_corpus: bool = False
    sections: frozenset[str] = frozenset()  # corpus phrases: the sections it was read from

    @property
    def patient_condition(self) -> bool:
        """A condition a patient can *have* that the book warns about (not only an indication)."""
        return not self.from_corpus or bool(self.sections & {"chong_chi_dinh", "than_trong"})

    @cached_property
    def folded_forms(self) -> tuple[tuple[str, ...], ...]:
        return tuple(tuple(folded_words(form)) for form in self.forms)

    @cached_property
    def label_words(self) -> tuple[str, ...]:
        """The label's words with their diacritics, lower-cased (accent-aware comparisons)."""
        return tuple(words(self.label))


@dataclass(frozen=True)
class ConditionMention:
    condition: Condition
    surface: str  # the words as typed
    start: int  # token position in the turn
    end: int


@dataclass
class ConditionLexicon:
    conditions: list[Condition]

    def __post_init__(self) -> None:
        self._by_label = {c.label: c for c in self.conditions}
        self._condition_of: dict[str, Condition] = {}
        for condition in self.conditions:
            for form in condition.forms:
                self._condition_of.setdefault(form, condition)
        self._phrases = PhraseSet(list(self._condition_of))

    def get(self, label: str) -> Condition | None:
        return self._by_label.get(label)

    def broader_of(self, condition: Condition) -> Condition | None:
        return self._by_label.get(condition.broader) if condition.broader else None

    def narrower_of(self, condition: Condition) -> list[Condition]:
        return [c for c in self.conditions if c.broader == condition.label]

    def find(self, text: str) -> list[ConditionMention]:
        """Conditions named in a turn, longest phrase first, each word used once, in text order."""
        raw = word_forms(text)[0]
        taken = [False] * len(raw)
        found: list[ConditionMention] = []
        # Longest first, so "suy thận nặng" wins over "suy thận" and "hen phế quản" over "hen".
        for start, end, phrase in sorted(self._phrases.find(text), key=lambda m: (m[0] - m[1], m[0])):
            if any(taken[start:end]):
                continue
            found.append(ConditionMention(self._condition_of[phrase], " ".join(raw[start:end]), start, end))
            for i in range(start, end):
                taken[i] = True
        found.sort(key=lambda m: m.start)
        unique: list[ConditionMention] = []
        for mention in found:
            if all(m.condition.label != mention.condition.label for m in unique):
                unique.append(mention)
        return unique

    def phrases_for(self, label: str) -> tuple[str, ...]:
        """Every phrase that names a condition in the book: its forms and those of its narrower forms."""
        condition = self._by_label.get(label)
        if condition is None:
            return (label,)
        forms = list(condition.forms)
        for narrower in self.narrower_of(condition):
            forms += narrower.forms
        return tuple(dict.fromkeys(forms))


def load_synonyms(path: Path = SYNONYMS_PATH) -> list[Condition]:
    """The reviewed synonym table (``data/understanding/conditions.yaml``)."""
    entries = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    conditions = []
    for entry in entries:
        label = normalize(str(entry["label"])).strip()
        forms = tuple(dict.fromkeys(normalize(str(f)).strip().lower() for f in [label, *entry.get("forms", [])]))
        conditions.append(Condition(
            label=label, forms=forms, broader=entry.get("broader"),
            clearance_below=float(entry["clearance_below"]) if entry.get("clearance_below") else None,
        ))
    return conditions


def corpus_condition_phrases(texts: Iterable[str]) -> list[str]:
    """Condition phrases of the book's indication, contraindication and caution sentences.

    Each line is cut into items at punctuation and linking words ("và", "hoặc", "do" …), leading
    filler ("người có tiền sử", "điều trị", "dự phòng") is dropped, and an item of 2–6 words that
    reads like a condition (typed with diacritics, not a dosing or allergy phrase) is kept.

    >>> corpus_condition_phrases(["Hen phế quản nặng hoặc bệnh phổi tắc nghẽn mạn tính nặng."])
    ['hen phế quản nặng', 'bệnh phổi tắc nghẽn mạn tính nặng']
    """
    phrases: list[str] = []
    fillers = sorted((tuple(words(f)) for f in _LEADING_FILLER), key=len, reverse=True)
    for text in texts:
        for item in _ITEM_SPLIT_RE.split(normalize(text)):
            tokens = words(item)
            changed = True
            while tokens and changed:
                changed = False
                for filler in fillers:
                    if tuple(tokens[: len(filler)]) == filler:
                        tokens = tokens[len(filler) :]
                        changed = True
                        break
            if not 2 <= len(tokens) <= MAX_PHRASE_WORDS or any(t.isdigit() for t in tokens):
                continue
            if tokens[0] not in CONDITION_HEADS:
                continue
            if tokens[-1] in STOPWORDS_ACCENTED or " ".join(tokens) in NOT_CONDITIONS:
                continue
            if sum(has_diacritics(t) for t in tokens) < 1:
                continue
            phrases.append(" ".join(tokens))
    return list(dict.fromkeys(phrases))


def build_lexicon(
    section_texts: Iterable[tuple[str, str]], synonyms: Sequence[Condition] | None = None
) -> ConditionLexicon:
    """The synonym table plus every corpus phrase it does not already cover (as its own condition).

    ``section_texts`` are ``(section_key, text)`` pairs of the Chỉ định, Chống chỉ định and Thận
    trọng sections.
    """
    reviewed = list(load_synonyms() if synonyms is None else synonyms)
    known = {tuple(folded_words(form)) for c in reviewed for form in c.forms}
    found: dict[str, set[str]] = {}
    for section_key, text in section_texts:
        for phrase in corpus_condition_phrases([text]):
            found.setdefault(phrase, set()).add(section_key)
    corpus = [
        Condition(label=phrase, forms=(phrase,), from_corpus=True, sections=frozenset(sections))
        for phrase, sections in found.items()
        if tuple(folded_words(phrase)) not in known
    ]
    return ConditionLexicon(reviewed + corpus)
