"""Query understanding: turn text (+ the conversation's frame) → :class:`QueryFrame`.

One module per concern: ``drugs`` (honest drug resolution), ``quantities`` (ages, weights,
pregnancy, kidney function), ``conditions`` (the corpus condition lexicon), ``patient`` (facts of
a turn), ``signals`` (crisis, overdose, emergency), ``intent`` (the trained model), ``cues`` (the
override table), ``frame_rules`` (first-match tables over typed facts: reconcile, settle), ``carryover`` (the inheritance table), and the understanders: ``learned`` (the
offline default) and ``llm``; the first version's phrase rules are a comparison baseline in
``duocthu.evaluation.baselines`` (notebook 07), never used at run time.
Pick one by name with :func:`get_understander`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from duocthu.errors import ProviderConfigError
from duocthu.providers.llm import JsonLlm
from duocthu.understanding.base import QueryUnderstander
from duocthu.understanding.conditions import ConditionLexicon
from duocthu.understanding.drugs import DrugResolver
from duocthu.understanding.frame import QueryFrame, TurnType


@dataclass
class UnderstandingParts:
    """What the understanders are built from (one set per served index)."""

    resolver: DrugResolver
    lexicon: ConditionLexicon
    embed_query: Callable[[str], np.ndarray]
    llm: JsonLlm | None = None


def _learned(parts: UnderstandingParts) -> QueryUnderstander:
    from duocthu.understanding.intent import IntentModel
    from duocthu.understanding.learned import EntityReader, LearnedUnderstander

    return LearnedUnderstander(EntityReader(parts.resolver, parts.lexicon), IntentModel.load(), parts.embed_query)


def _llm(parts: UnderstandingParts) -> QueryUnderstander:
    from duocthu.understanding.learned import EntityReader
    from duocthu.understanding.llm import LlmQueryUnderstander

    if parts.llm is None:
        raise ProviderConfigError(
            "UNDERSTANDER=llm needs a language model: set ANSWER_PROVIDER to bedrock-converse, "
            "openai-compatible or stub"
        )
    return LlmQueryUnderstander(parts.llm, EntityReader(parts.resolver, parts.lexicon))


UNDERSTANDERS: dict[str, Callable[[UnderstandingParts], QueryUnderstander]] = {
    "learned": _learned,
    "llm": _llm,
}


def get_understander(name: str, parts: UnderstandingParts) -> QueryUnderstander:
    try:
        factory = UNDERSTANDERS[name]
    except KeyError:
        raise ProviderConfigError(f"UNDERSTANDER={name!r} is not one of: {', '.join(UNDERSTANDERS)}") from None
    return factory(parts)


__all__ = ["UNDERSTANDERS", "QueryFrame", "QueryUnderstander", "TurnType", "UnderstandingParts", "get_understander"]
