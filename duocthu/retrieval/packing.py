"""Evidence packing to a token budget: whole blocks, in order, never a cut sentence."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from duocthu.text import count_tokens
from duocthu.types import EvidencePack, Hit


def pack_evidence(
    hits: Sequence[Hit],
    max_tokens: int | None,
    token_counter: Callable[[str], int] = count_tokens,
) -> EvidencePack:
    """Keep whole hits in retrieval order while they fit ``max_tokens``.

    A hit that does not fit is recorded in ``omitted_evidence_ids`` (and later, smaller hits
    may still fit); clinical text is never truncated. ``max_tokens=None`` keeps everything —
    the section route's "the whole section is the answer".
    """
    kept: list[Hit] = []
    omitted: list[str] = []
    used = 0
    for hit in hits:
        cost = token_counter(hit.text)
        if max_tokens is not None and used + cost > max_tokens:
            omitted.append(hit.doc_id)
            continue
        kept.append(hit)
        used += cost
    return EvidencePack(tuple(kept), tuple(omitted), used, max_tokens)
