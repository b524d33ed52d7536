"""Stage-2 patient-specific safety evidence for drugs already found by reverse lookup.

It never creates candidates. Each facet runs its own relation-specific search so that, e.g.,
a kidney term cannot make an unrelated interaction chunk look supported. Absence of a hit is
recorded as INSUFFICIENT_EVIDENCE — never as "safe".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from duocthu.lexical import lexical_query_tokens
from duocthu.qdrant_store import QdrantStore
from duocthu.retrieval.policy import EvidencePolicy
from duocthu.text import find_phrase, folded_words
from duocthu.types import DrugCandidate, Hit


class CandidateStatus(StrEnum):
    SAFETY_EVIDENCE_FOUND = "safety_evidence_found"
    INSUFFICIENT_EVIDENCE = "insufficient_evidence"


@dataclass(frozen=True)
class PatientContext:
    """Facts about the patient that select safety sections (not evidence themselves)."""

    current_medications: tuple[str, ...] = ()
    conditions: tuple[str, ...] = ()  # comorbidities, e.g. "suy thận", "loét dạ dày"
    pregnant: bool = False
    breastfeeding: bool = False

    @property
    def requires_safety_review(self) -> bool:
        return bool(self.current_medications or self.conditions or self.pregnant or self.breastfeeding)

    def interaction_queries(self) -> tuple[str, ...]:
        return self.current_medications

    def warning_query(self) -> tuple[str, ...]:
        return self.conditions

    def dosage_context_query(self) -> tuple[str, ...]:
        renal_hepatic = ("suy thận", "suy gan", "thận", "gan", "cao tuổi", "trẻ em")
        return tuple(c for c in self.conditions if any(t in c for t in renal_hepatic))


@dataclass(frozen=True)
class CandidateAssessment:
    drug_id: str
    status: CandidateStatus
    facets: dict[str, tuple[Hit, ...]] = field(default_factory=dict)

    @property
    def hits(self) -> tuple[Hit, ...]:
        return tuple(h for hits in self.facets.values() for h in hits)


def _anchored(chunk_text_folded: str, anchors: Sequence[str]) -> bool:
    """A real clinical anchor: one of the patient's phrases, whole and contiguous, in the text.

    Overlap on generic words ("chức năng", "người") does not count.
    """
    tokens = folded_words(chunk_text_folded)
    return any(find_phrase(tokens, folded_words(anchor)) >= 0 for anchor in anchors if anchor.strip())


def retrieve_patient_drug_context(
    store: QdrantStore, drug_id: str, patient: PatientContext, policy: EvidencePolicy
) -> dict[str, tuple[Hit, ...]]:
    per_section = policy.safety_hits_per_section
    facets: dict[str, tuple[Hit, ...]] = {}
    interaction_hits: list[Hit] = []
    for medication in patient.interaction_queries():
        # The medication itself must match inside the interaction section.
        found = [
            h for h in store.search_lexical(lexical_query_tokens(medication), drug_id, ["tuong_tac_thuoc"])
            if _anchored(h.chunk.text_folded, [medication])
        ]
        interaction_hits.extend(found[:per_section])
    if interaction_hits:
        facets["interaction"] = tuple(_dedupe(interaction_hits))
    for facet, anchors, sections in (
        ("warnings", patient.warning_query(), ("chong_chi_dinh", "than_trong")),
        ("dosage_context", patient.dosage_context_query(), ("lieu_luong_va_cach_dung",)),
    ):
        if not anchors:
            continue
        tokens = lexical_query_tokens(" ".join(anchors))
        matched: list[Hit] = []
        for section in sections:
            hits = [h for h in store.search_lexical(tokens, drug_id, [section]) if _anchored(h.chunk.text_folded, anchors)]
            matched.extend(hits[:per_section])
        if matched:
            facets[facet] = tuple(matched)
    if patient.pregnant:
        facets["pregnancy"] = tuple(store.find_by_section(drug_id, "thoi_ky_mang_thai"))
    if patient.breastfeeding:
        facets["breastfeeding"] = tuple(store.find_by_section(drug_id, "thoi_ky_cho_con_bu"))
    return _cap_sections(facets, policy.safety_sections_per_candidate)


def assess_patient_candidates(
    store: QdrantStore,
    candidates: Sequence[DrugCandidate],
    patient: PatientContext,
    policy: EvidencePolicy,
) -> list[CandidateAssessment]:
    assessments = []
    for candidate in candidates[: policy.patient_candidate_limit]:
        facets = retrieve_patient_drug_context(store, candidate.drug_id, patient, policy)
        status = CandidateStatus.SAFETY_EVIDENCE_FOUND if facets else CandidateStatus.INSUFFICIENT_EVIDENCE
        assessments.append(CandidateAssessment(candidate.drug_id, status, facets))
    return assessments


def _dedupe(hits: Sequence[Hit]) -> list[Hit]:
    return list({h.doc_id: h for h in hits}.values())


def _cap_sections(facets: dict[str, tuple[Hit, ...]], max_sections: int) -> dict[str, tuple[Hit, ...]]:
    sections: list[str] = []
    capped: dict[str, tuple[Hit, ...]] = {}
    for facet, hits in facets.items():
        kept = []
        for hit in hits:
            key = hit.chunk.section_key
            if key not in sections:
                if len(sections) >= max_sections:
                    continue
                sections.append(key)
            kept.append(hit)
        if kept:
            capped[facet] = tuple(kept)
    return capped
