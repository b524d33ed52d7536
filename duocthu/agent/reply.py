"""AgentReply: the record of one turn — the CLI's JSON contract and the app's inspection data."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from duocthu.types import Hit


class EvidenceView(BaseModel):
    doc_id: str
    drug_id: str
    section_key: str
    section_title: str
    part_index: int
    chunk_kind: str
    score: float
    score_kind: str
    route: str
    source_refs: list[str]
    requires_visual_check: bool
    text: str

    @classmethod
    def from_hit(cls, hit: Hit) -> EvidenceView:
        return cls(
            doc_id=hit.doc_id, drug_id=hit.chunk.drug_id, section_key=hit.chunk.section_key,
            section_title=hit.chunk.section_title, part_index=hit.chunk.part_index,
            chunk_kind=hit.chunk.chunk_kind.value, score=round(hit.score, 4), score_kind=hit.score_kind.value,
            route=hit.route, source_refs=list(hit.chunk.source_refs),
            requires_visual_check=hit.chunk.needs_visual_check, text=hit.chunk.text,
        )


class AgentReply(BaseModel):
    conversation_id: str
    outcome: str  # answerable | clarify | abstain | verify_pdf
    reason: str
    rule: int | None
    frame: dict[str, Any] | None
    answer: str
    quick_replies: list[str] = Field(default_factory=list)
    evidence: list[EvidenceView] = Field(default_factory=list)
    omitted_evidence_ids: list[str] = Field(default_factory=list)
    budget: dict[str, float | int] = Field(default_factory=dict)
    # Inspection extras (not part of the minimal CLI contract, always present).
    reason_text: str = ""
    rule_condition: str | None = None
    route: str | None = None
    steps: list[str] = Field(default_factory=list)
    failures: list[str] = Field(default_factory=list)
    memory: str = "ok"  # ok | unavailable | none

    def to_json_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")
