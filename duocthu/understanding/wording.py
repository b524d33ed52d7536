"""The last step of understanding: what later stages need from the user's words, as typed fields.

Routing, the safety screen and the answer handlers never read the user's text: whatever they need
of it (is it code or keyboard mashing, does it ask an amount, which words beyond the drug and the
unit, which organ failures, the conversation's own turns for the echo screen, the conditions around
a reverse lookup) is read here once and kept in :class:`~duocthu.understanding.frame.TurnWording`.
"""

from __future__ import annotations

from collections.abc import Sequence

from duocthu.lexicon import LEXICON
from duocthu.text import content_words, fold, folded_words, typed_with_accents, words
from duocthu.understanding.conditions import ConditionLexicon, ConditionMention
from duocthu.understanding.drugs import DrugResolver
from duocthu.understanding.frame import ConditionRef, QueryFrame, TurnWording
from duocthu.understanding.patient import ORGAN_IMPAIRMENT_WORDS
from duocthu.understanding.reverse import modifies_into_another
from duocthu.understanding.scope import has_phrase, looks_non_human
from duocthu.understanding.signals import asks_a_quantity

# Words of a question that ask for a number rather than say what it is about ("bao nhiêu phút",
# "tối uống 1 viên 5mg thì sáng hôm sau …"): not topic words.
NUMBER_QUESTION_WORDS = frozenset(fold(w) for w in LEXICON.phrases("number_question_words"))
CAUSE_WORDS = frozenset(frozenset(LEXICON.phrases("cause_words")))


class WordingReader:
    """Reads :class:`TurnWording` off a turn, given the frame understanding made of it."""

    def __init__(self, resolver: DrugResolver, lexicon: ConditionLexicon):
        self.resolver = resolver
        self.lexicon = lexicon
        self._names = {d: tuple(resolver.names_of(d)) for d in resolver.catalogue}
        self._known_tokens = frozenset(
            t for entry in resolver.catalogue.values()
            for name in (entry.display_name, *entry.aliases) for t in folded_words(name)
        )

    def read(self, frame: QueryFrame, text: str, earlier_turns: Sequence[str] = ()) -> QueryFrame:
        """The frame with its wording: ``earlier_turns`` are the conversation's previous user turns."""
        drug_words = {w for d in frame.drugs for name in self._names.get(d, ()) for w in folded_words(name)}
        asked = frame.indication or frame.condition or ""
        in_asked = self.lexicon.find(asked) if frame.is_reverse_lookup and asked else []
        wording = TurnWording(
            text=text, non_human=looks_non_human(text, self._known_tokens), asks_quantity=asks_a_quantity(text),
            typed_with_accents=typed_with_accents(text),
            topic_words=sorted(topic_words(text, drug_words)),
            impairments=[w for w in ORGAN_IMPAIRMENT_WORDS if has_phrase(text, (w,))],
            stated=[*earlier_turns, text],
            indication_parts=[_ref(m, fold(asked)) for m in in_asked if m.condition.patient_condition]
            if frame.is_reverse_lookup and asked else [],
            text_conditions=[_ref(m, fold(asked), len(in_asked) == 1) for m in self.lexicon.find(text)
                             if m.condition.patient_condition] if frame.is_reverse_lookup else [],
        )
        return frame.model_copy(update={"wording": wording})


def topic_words(text: str, drug_words: set[str]) -> frozenset[str]:
    """Folded content words of a question beyond the drug's names, the number asked and digits."""
    return frozenset(w for w in content_words(text) if w not in drug_words and w not in NUMBER_QUESTION_WORDS
                     and not any(ch.isdigit() for ch in w))


def _ref(mention: ConditionMention, asked: str, alone_in_asked: bool = False) -> ConditionRef:
    label = mention.condition.label
    is_asked = fold(label) == asked or fold(mention.surface) == asked
    return ConditionRef(surface=mention.surface, label=label, is_asked=is_asked,
                        cause_of_asked=states_a_cause_of(asked, fold(mention.surface)),
                        inside_asked=alone_in_asked and not is_asked and names_another_condition(asked, mention.surface))


def names_another_condition(asked: str, surface: str) -> bool:
    """"đau đầu vú" of "đau đầu": the asked words hold the condition and more, and the more is not how severe or
    how long it is — so the asked condition is another one, and the drugs for this one are not its answer."""
    asked_words, condition_words = folded_words(asked), folded_words(surface)
    n = len(condition_words)
    starts = [i for i in range(len(asked_words) - n + 1) if asked_words[i : i + n] == condition_words]
    return bool(starts) and len(asked_words) > n and modifies_into_another(words(surface), asked_words[starts[0]:])


def states_a_cause_of(asked: str, condition: str) -> bool:
    """"viem gan do nhin man hinh" of "viem gan": the asked condition (folded) is the condition with a cause."""
    asked_words, condition_words = asked.split(), condition.split()
    n = len(condition_words)
    return any(asked_words[i : i + n] == condition_words and i + n < len(asked_words)
               and asked_words[i + n] in CAUSE_WORDS for i in range(len(asked_words) - n + 1))
