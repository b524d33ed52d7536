"""Smalltalk: a greeting, thanks, or a question about the assistant — who it is and what it can be asked."""

from __future__ import annotations

from duocthu.agent import messages as msg
from duocthu.agent.actions.base import Request, Services
from duocthu.agent.answer import Answer
from duocthu.types import Closing, Outcome, Prose


def smalltalk(req: Request, ctx: Services) -> Answer:
    """The greeting; nothing is looked up."""
    return Answer(outcome=Outcome.ANSWERABLE, reason="smalltalk", blocks=(Prose(msg.SMALLTALK_REPLY),),
                  closing=Closing.INLINE)
