"""QueryFrame: what one user turn asks, as a validated model (every understander's output)."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

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
    MEDICAL_QUESTION = "medical_question"  # a health question that names no drug and asks for none
    CRISIS = "crisis"  # self-harm intent
    EMERGENCY = "emergency"  # emergency signs described now
    OVERDOSE_TAKEN = "overdose_taken"  # too much has already been taken


class Population(StrEnum):
    ADULT = "adult"
    PEDIATRIC = "pediatric"
    ELDERLY = "elderly"


class ConditionRelation(StrEnum):
    INDICATION = "indication"  # drugs indicated for the condition — the only supported one
    CONTRAINDICATION = "contraindication"
    CAUTION = "caution"
    CAUSES = "causes"  # drugs that cause the condition (adverse effect)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PatientMeasure(_Model):
    """A number the user stated about the patient: "CrCl dưới 10", "kali 5,9 mmol/L" (issue 24).

    ``quantity`` is a ``measure.<id>`` key of the lexicon; ``unit`` normalised as in ``types.Threshold``.
    """

    quantity: str
    value: float
    unit: str = ""
    comparator: Literal["=", "<", "<=", ">", ">="] = "="


class PatientFacts(_Model):
    """What is known about the patient, gathered over the whole conversation."""

    current_medications: list[str] = Field(default_factory=list)  # drug_ids of the book being taken
    other_medications: list[str] = Field(default_factory=list)  # names of products not in the book being taken
    conditions: list[str] = Field(default_factory=list)  # condition labels of the lexicon ("hen phế quản")
    pregnant: bool = False
    trimester: int | None = Field(default=None, ge=1, le=3)
    breastfeeding: bool = False
    renal_clearance_ml_min: float | None = Field(default=None, gt=0, le=200)  # eGFR or creatinine clearance
    crisis: bool = False  # a self-harm signal was seen in this conversation
    allergies: list[str] = Field(default_factory=list)  # drug_ids or names the patient is allergic to / reacted to
    # Typed facts for reasoning on contraindications (issue 24): None is "not said", never "no".
    denied_conditions: list[str] = Field(default_factory=list)  # condition labels the user said the patient does NOT have
    measures: list[PatientMeasure] = Field(default_factory=list)
    gestation_weeks: float | None = Field(default=None, ge=20, le=45)  # weeks of pregnancy at birth (a baby)
    preterm: bool | None = None  # the baby was born before 37 weeks (True), at term (False)
    jaundice: bool | None = None  # the newborn is jaundiced (True), said not to be (False)
    purposes: list[str] = Field(default_factory=list)  # purpose ids: what the drug is wanted for
    allergy_classes: list[str] = Field(default_factory=list)  # drug_class ids of past reactions, any spelling
    unnamed_allergy: bool = False  # a reaction to "a medicine"/"an antibiotic" without a name: undecided
    no_known_drug_allergy: bool = False  # the user said the patient has no drug allergy

    @property
    def is_empty(self) -> bool:
        return not (
            self.current_medications or self.other_medications or self.conditions or self.pregnant
            or self.breastfeeding or self.renal_clearance_ml_min is not None or self.allergies
        )


class DrugReading(_Model):
    """How a misspelt name was read ("clopidogel" → clopidogrel): the answer says so."""

    surface: str
    drug_id: str


class AmbiguousName(_Model):
    """A near miss that could be several drugs, or is far from any: the user chooses."""

    surface: str
    candidates: list[str] = Field(default_factory=list)  # drug_ids


class ProductMention(_Model):
    """A combination or market product: which components the book covers."""

    name: str
    covered: list[str] = Field(default_factory=list)  # drug_ids of the book
    uncovered: list[str] = Field(default_factory=list)  # component names the book does not have


class ConditionRef(_Model):
    """A condition of the lexicon named in the user's words: as written, and the lexicon's label."""

    surface: str
    label: str
    is_asked: bool = False  # it is the condition asked about (the indication itself)
    cause_of_asked: bool = False  # the asked condition is this one with a cause the book does not name
    inside_asked: bool = False  # the asked condition is this one with a word that makes it another ("đau đầu vú")


class TurnWording(_Model):
    """What later stages need from the user's words, read once by understanding.

    After understanding, nothing reads the user's text again: the query for generation, the scope
    guard, the crisis gate, the "number not stated" check, the echo screen and the reverse-lookup
    fallbacks all read these fields.
    """

    text: str = ""  # the turn as read (normalised): generation's query starts with it
    non_human: bool = False  # code, symbol soup, keyboard mashing or an instruction attack
    asks_quantity: bool = False  # any amount asked for (tablets, units, mg, a dose)
    typed_with_accents: bool = False  # most words carry their diacritics: a bare word is meant bare
    topic_words: list[str] = Field(default_factory=list)  # folded content words beyond the drug and the unit
    impairments: list[str] = Field(default_factory=list)  # organ failures named ("suy gan")
    stated: list[str] = Field(default_factory=list)  # the conversation's user turns, this one last
    indication_parts: list[ConditionRef] = Field(default_factory=list)  # patient conditions inside the indication
    text_conditions: list[ConditionRef] = Field(default_factory=list)  # patient conditions of the whole turn


class QueryFrame(_Model):
    """The resolved meaning of a turn. ``drugs`` are drug_ids of the formulary."""

    turn_type: TurnType
    drugs: list[str] = Field(default_factory=list)
    unknown_drugs: list[str] = Field(default_factory=list)  # named products that are not in the book
    suggestions: dict[str, str] = Field(default_factory=dict)  # unknown name → a look-alike drug_id to offer
    readings: list[DrugReading] = Field(default_factory=list)
    ambiguous_names: list[AmbiguousName] = Field(default_factory=list)
    products: list[ProductMention] = Field(default_factory=list)
    section_key: str | None = None
    section_candidates: list[str] = Field(default_factory=list)  # when the section is uncertain
    attribute: str | None = None  # what is asked about the drug, in the user's words
    wants_section_overview: bool = False  # "the whole dosage section", not a calculation
    asks_number: str | None = None  # the unit of a number asked for ("%", "mg", "giờ" …)
    population: Population | None = None
    age_text: str | None = None
    age_years: float | None = Field(default=None, ge=0, le=130)
    weight_kg: float | None = Field(default=None, gt=0, le=400)
    route: str | None = None
    condition: str | None = None
    indication: str | None = None
    indication_alternatives: list[str] = Field(default_factory=list)  # the book's words for it (synonym table)
    condition_relation: ConditionRelation | None = None
    condition_ambiguous: bool = False
    needs_clarify: bool = False
    clarify_reason: str | None = None
    understanding_error: str | None = None
    out_of_scope_kind: str | None = None  # "attack" | "topic" | "unrelated" | "not_covered"
    uncovered_topic: str | None = None  # a ``not_covered.<topic>`` of the lexicon: what a formulary does not cover
    patient: PatientFacts = Field(default_factory=PatientFacts)
    intent_confidence: float | None = None  # the intent model's probability of its turn type
    cues: list[str] = Field(default_factory=list)  # cue-table rows that fired
    inherited: list[str] = Field(default_factory=list)  # carry-over rules (or fields) taken from the previous frame
    wording: TurnWording = Field(default_factory=TurnWording)  # what later stages need from the words

    @field_validator("section_key")
    @classmethod
    def _known_section(cls, value: str | None) -> str | None:
        if value is not None and value not in SECTION_ORDER:
            raise ValueError(f"unknown section_key {value!r}")
        return value

    @field_validator("section_candidates")
    @classmethod
    def _known_sections(cls, value: list[str]) -> list[str]:
        unknown = [v for v in value if v not in SECTION_ORDER]
        if unknown:
            raise ValueError(f"unknown section keys {unknown!r}")
        return value

    @property
    def is_reverse_lookup(self) -> bool:
        return self.turn_type in (TurnType.CONDITION_TO_DRUG, TurnType.SYMPTOM_TO_DRUG)

    @property
    def asks_dose(self) -> bool:
        return self.turn_type is TurnType.DOSING_CALC or self.section_key == "lieu_luong_va_cach_dung"
