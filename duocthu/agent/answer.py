"""Answer: what an action returns — the blocks the user reads, and the record of how they were found.

The blocks (``duocthu.types``: notices, the PDF warning, the safety block, prose, quote lists) say
what the answer says; ``render_text`` (``duocthu.agent.render``) writes them as the CLI's text and the
app lays them out as a page. Neither parses the other: the blocks are the answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from duocthu.retrieval.safety import SafetyFinding
from duocthu.types import Block, Closing, Hit, Notice, Outcome, Prose, Quote, QuoteList


@dataclass(frozen=True, kw_only=True)
class Answer:
    """One turn's answer: outcome, reason, blocks, and the evidence, findings and trace behind them."""

    outcome: Outcome
    reason: str
    blocks: tuple[Block, ...] = ()
    evidence: tuple[Hit, ...] = ()  # in citation order: the text's [n] is evidence[n - 1]
    omitted: tuple[str, ...] = ()  # evidence ids that did not fit the budget
    quick_replies: tuple[str, ...] = ()
    route: str | None = None
    steps: tuple[str, ...] = ()
    failures: tuple[str, ...] = ()
    safety: tuple[SafetyFinding, ...] = ()  # every finding of the screen, shown or not
    notices: tuple[str, ...] = ()  # the reply's ``notices`` field
    quotes_checked: bool = False  # every quote contains what it is cited for
    closing: Closing = Closing.NONE

    @property
    def quotes(self) -> tuple[tuple[Quote, str | None], ...]:
        """Every quoted sentence with its group, in reading order (the reply's ``claims``)."""
        return tuple((q, b.group) for b in self.blocks if isinstance(b, QuoteList) for q in b.quotes)


def spoken(text: str, notices: Sequence[str] = ()) -> tuple[Block, ...]:
    """The blocks of a message in the assistant's own words (a question, a refusal), after any notices."""
    return (*(Notice(n) for n in notices), Prose(text))


def abstained(reason: str, text: str, *, route: str | None = None, steps: Sequence[str] = (),
              failures: Sequence[str] = ()) -> Answer:
    """An abstention in the assistant's own words."""
    return Answer(outcome=Outcome.ABSTAIN, reason=reason, blocks=spoken(text), route=route, steps=tuple(steps),
                  failures=tuple(failures))
