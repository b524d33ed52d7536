"""AgentReply: the record of one turn — the CLI's JSON contract and the app's inspection data."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field

from duocthu.types import Block, Hit

# A block in JSON names its kind: {"type": "notice" | "verify_pdf" | "safety" | "prose" | "quotes" | "passages", …}
TaggedBlock = Annotated[Block, Field(discriminator="type")]


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


class SafetyView(BaseModel):
    """What the book says against this patient: one verbatim sentence and the fact it matched."""

    drug_id: str
    kind: str  # contraindication | age_limit | caution | interaction | pregnancy | breastfeeding
    matched: str
    doc_id: str
    quote: str
    applies: bool  # covers this patient for certain (it changed the answer)
    status: str = "shown"  # applies | undetermined | shown (docs/behaviour.md)
    question: str | None = None  # for an undetermined one: the question that decides it
    decided_by: list[str] = Field(default_factory=list)  # the stated facts that decided it
    section_title: str = ""
    source_refs: list[str] = Field(default_factory=list)
    requires_visual_check: bool = False


class ClaimView(BaseModel):
    """One quoted sentence of the answer, with what it is cited from."""

    text: str
    evidence_ids: list[str]
    drug_id: str | None = None
    heading: str | None = None  # the line it sits under (route, population), shown with it
    group: str | None = None  # e.g. "Người lớn (để đối chiếu)" in a child's dose answer


class AgentReply(BaseModel):
    conversation_id: str
    outcome: str  # answerable | clarify | abstain | verify_pdf
    reason: str
    rule: int | None
    frame: dict[str, Any] | None
    answer: str  # the blocks as text
    blocks: list[TaggedBlock] = Field(default_factory=list)  # what the answer says, typed (the page is built from them)
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
    safety: list[SafetyView] = Field(default_factory=list)
    claims: list[ClaimView] = Field(default_factory=list)
    notices: list[str] = Field(default_factory=list)  # what the answer says before its quotes
    quotes_checked: bool = False  # every quote contains what it is cited for
    generated: bool = True  # False in retrieval-only mode: the evidence is shown as found

    def to_json_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")
