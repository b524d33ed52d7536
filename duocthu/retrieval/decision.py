"""The evidence decision: ANSWERABLE, ABSTAIN or VERIFY_PDF, from the evidence alone."""

from __future__ import annotations

from collections.abc import Sequence

from duocthu.types import Decision, Hit, Outcome, RetrievalResult


def decide(evidence: Sequence[Hit]) -> Decision:
    """Public so that a caller pooling several retrievals gets the same quarantine policy.

    No evidence → abstain; evidence without provenance → abstain; anything from a section
    with quarantined content → verify against the printed page; else answerable.
    """
    if not evidence:
        return Decision(Outcome.ABSTAIN, "parent_hydration_failed")
    if any(not hit.chunk.source_refs for hit in evidence):
        return Decision(Outcome.ABSTAIN, "missing_provenance")
    if any(hit.chunk.needs_visual_check for hit in evidence):
        return Decision(Outcome.VERIFY_PDF, "visual_verification_required")
    return Decision(Outcome.ANSWERABLE, "grounded_evidence_available")


def decide_result(result: RetrievalResult) -> Decision:
    """The decision on one route's own evidence (the retrieval-only mode and the notebooks)."""
    if result.abstain_reason:
        return Decision(Outcome.ABSTAIN, result.abstain_reason)
    return decide(result.hits)
