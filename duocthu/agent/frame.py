"""QueryFrame: what one user turn asks, as a validated model (the understanders' output)."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, field_validator

from duocthu.retrieval.safety import PatientContext
from duocthu.sections import SECTION_ORDER


class TurnType(StrEnum):
    DRUG_ATTRIBUTE = "drug_attribute"
    DRUG_OVERVIEW = "drug_overview"
    DOSING_CALC = "dosing_calc"
    INTERACTION = "interaction"
    CONDITION_TO_DRUG = "condition_to_drug"
    SYMPTOM_TO_DRUG = "symptom_to_drug"
    CONDITION_RELATION = "condition_relation"
    SMALLTALK = "smalltalk"
    OUT_OF_SCOPE = "out_of_scope"


class Population(StrEnum):
    ADULT = "adult"
    PEDIATRIC = "pediatric"
    ELDERLY = "elderly"


class ConditionRelation(StrEnum):
    INDICATION = "indication"  # drugs indicated for the condition — the only supported one
    CONTRAINDICATION = "contraindication"
    CAUTION = "caution"
    CAUSES = "causes"  # drugs that cause the condition (adverse effect)


class PatientFacts(BaseModel):
    model_config = ConfigDict(extra="forbid")

    current_medications: list[str] = Field(default_factory=list)
    conditions: list[str] = Field(default_factory=list)
    pregnant: bool = False
    breastfeeding: bool = False

    def context(self) -> PatientContext:
        return PatientContext(
            tuple(self.current_medications), tuple(self.conditions), self.pregnant, self.breastfeeding
        )

    @property
    def is_empty(self) -> bool:
        return not (self.current_medications or self.conditions or self.pregnant or self.breastfeeding)


class QueryFrame(BaseModel):
    """The resolved meaning of a turn. ``drugs`` are drug_ids of the formulary."""

    model_config = ConfigDict(extra="forbid")

    turn_type: TurnType
    drugs: list[str] = Field(default_factory=list)
    unknown_drugs: list[str] = Field(default_factory=list)
    section_key: str | None = None
    attribute: str | None = None  # what is asked about the drug, in the user's words
    wants_section_overview: bool = False  # "the whole dosage section", not a calculation
    population: Population | None = None
    age_text: str | None = None
    age_years: float | None = None
    weight_kg: float | None = Field(default=None, gt=0, le=400)
    route: str | None = None
    condition: str | None = None
    indication: str | None = None
    condition_relation: ConditionRelation | None = None
    condition_ambiguous: bool = False
    needs_clarify: bool = False
    clarify_reason: str | None = None
    understanding_error: str | None = None
    out_of_scope_kind: str | None = None  # "attack" | "topic" | "unrelated" (no drug or medical word)
    patient: PatientFacts = Field(default_factory=PatientFacts)
    inherited: list[str] = Field(default_factory=list)  # fields taken from the previous frame

    @field_validator("section_key")
    @classmethod
    def _known_section(cls, value: str | None) -> str | None:
        if value is not None and value not in SECTION_ORDER:
            raise ValueError(f"unknown section_key {value!r}")
        return value

    @property
    def is_reverse_lookup(self) -> bool:
        return self.turn_type in (TurnType.CONDITION_TO_DRUG, TurnType.SYMPTOM_TO_DRUG)
