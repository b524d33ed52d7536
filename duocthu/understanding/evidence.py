"""TurnEvidence: everything read off one turn before it is turned into a frame.

Entities (drugs, names not in the book, products, conditions, patient facts), the intent model's
prediction and the words left over once those are taken out. Cues and carry-over rules read it;
it is computed once per turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from duocthu.lexicon import LEXICON
from duocthu.text import content_words, fold, words
from duocthu.understanding.conditions import ConditionMention
from duocthu.understanding.drugs import STRENGTH_RE, STRENGTH_UNITS, Resolution
from duocthu.understanding.intent import IntentPrediction
from duocthu.understanding.patient import USE_VERBS, TurnFacts
from duocthu.understanding.signals import emergency_sign_spans
from duocthu.understanding.telling import Telling, read_telling

# Words that carry no attribute of their own in a drug question ("cho tôi hỏi về ibuprofen với").
SCAFFOLDING = LEXICON.phrases("scaffolding")




@dataclass(frozen=True)
class TurnEvidence:
    text: str
    resolution: Resolution
    facts: TurnFacts
    conditions: tuple[ConditionMention, ...] = ()
    intent: IntentPrediction | None = None

    @cached_property
    def text_without_names(self) -> str:
        """The turn with each name taken out after the verb that takes it: "uống paracetamol nhiều quá" → "uống
        nhiều quá" (a name after anything else stays: "sốt từ tối qua, paracetamol liều" has no "quá liều")."""
        raw = words(self.text)
        named = {i for start, end in self._name_spans() if start > 0 and fold(raw[start - 1]) in USE_VERBS
                 for i in range(start, min(len(raw), end))}
        return " ".join(w for i, w in enumerate(raw) if i not in named)

    def _name_spans(self) -> list[tuple[int, int]]:
        return [(m.start, m.end) for m in self.resolution.mentions] + [
            (u.start, u.start + len(words(u.name))) for u in self.resolution.unknown]

    @cached_property
    def residual_words(self) -> list[str]:
        """Content words left after removing drug and product names and question scaffolding."""
        raw = words(self.text)
        drop = [False] * len(raw)
        for start, end in self._name_spans():
            for i in range(max(0, start), min(len(raw), end)):
                drop[i] = True
            # "Klacid 500", "Glucophage 850 mg": the strength is part of how the product is named
            if end < len(raw) and STRENGTH_RE.match(raw[end].lower()):
                drop[end] = True
                if end + 1 < len(raw) and raw[end + 1].lower() in STRENGTH_UNITS:
                    drop[end + 1] = True
        folded = [fold(w) for w in raw]
        for phrase in SCAFFOLDING:
            target = [fold(w) for w in words(phrase)]
            n = len(target)
            for start in range(len(raw) - n + 1):
                if folded[start : start + n] == target:
                    for i in range(start, start + n):
                        drop[i] = True
        return [w for w, d in zip(raw, drop, strict=True) if not d and content_words(w)]

    @cached_property
    def mentions_emergency_sign(self) -> bool:
        """An emergency sign that is not part of a condition the patient has ("hội chứng ngừng thở khi ngủ")."""
        spans = [(m.start, m.end) for m in self.conditions]
        return any(
            not any(cs <= start and end <= ce and ce - cs > end - start for cs, ce in spans)
            for start, end, _phrase in emergency_sign_spans(self.text)
        )

    @cached_property
    def telling(self) -> Telling:
        """Who the turn's alarming words are about and when (gates the safety signals)."""
        return read_telling(self.text)
