"""Value objects passed between pipeline stages. Frozen: a stage never edits another's output."""

from __future__ import annotations

import uuid
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from typing import Any, Literal

_POINT_NAMESPACE = uuid.UUID("6f1d8a52-3c1e-4b7e-9a57-0d5c6b1e2f10")


class ChunkKind(StrEnum):
    PROSE = "prose"
    BLOCK = "block"


@dataclass(frozen=True)
class DrugEntry:
    """One drug of the served formulary: what the resolver matches names against."""

    drug_id: str
    display_name: str
    aliases: tuple[str, ...]
    atc_codes: tuple[str, ...]


@dataclass(frozen=True)
class PopulationLimit:
    """A population a sentence of the book limits, parsed at index time.

    "Trẻ em dưới 12 tuổi" → ``kind="age", max_age_years=12``; "trẻ sơ sinh" →
    ``max_age_years=28/365``; "3 tháng cuối thai kỳ" → ``kind="pregnancy", trimesters=(3,)``;
    "phụ nữ cho con bú" → ``kind="breastfeeding"``. The sentence is kept verbatim: it is what
    the safety screen quotes.
    """

    kind: str  # "age" | "weight" | "pregnancy" | "breastfeeding"
    sentence: str
    max_age_years: float | None = None  # applies below this age (exclusive)
    min_age_years: float | None = None  # applies from this age on
    trimesters: tuple[int, ...] = ()  # pregnancy: the trimesters named (empty: the whole pregnancy)
    conditional: bool = False  # only for a use, form or circumstance ("dạng tiêm", "dùng để …")
    max_weight_kg: float | None = None  # weight: applies below this body weight ("cân nặng dưới 35 kg")
    route: str | None = None  # only for this route ("Dạng tiêm không dùng cho trẻ em" → "tiêm"); then conditional

    def to_payload(self) -> dict[str, Any]:
        data = asdict(self)
        data["trimesters"] = list(self.trimesters)
        return data

    @classmethod
    def from_payload(cls, data: dict[str, Any]) -> PopulationLimit:
        return cls(
            kind=str(data["kind"]), sentence=str(data["sentence"]),
            max_age_years=data.get("max_age_years"), min_age_years=data.get("min_age_years"),
            trimesters=tuple(int(t) for t in data.get("trimesters") or ()),
            conditional=bool(data.get("conditional", False)), max_weight_kg=data.get("max_weight_kg"),
            route=data.get("route"),
        )


@dataclass(frozen=True)
class Threshold:
    """A number a sentence of the book compares a patient's measure with: "CrCl < 10 ml/phút".

    ``quantity`` is a ``measure.<id>`` key of the lexicon ("creatinine_clearance", "potassium", …);
    ``unit`` is normalised (lower case, "ml/phút", "mmol/l", "mg/tuần", …).
    """

    quantity: str
    comparator: str  # "<" | "<=" | ">" | ">="
    value: float
    unit: str = ""


@dataclass(frozen=True)
class ContraindicationRecord:
    """One contraindication of the book as typed facts, parsed at index time from one sentence.

    A record applies when every constraint it carries holds for the patient: any of ``conditions``
    (condition labels of the lexicon) at ``severity`` if given, each of ``thresholds``, the
    ``population``, ``preterm``/``jaundice`` for neonates, a ``purposes`` id, a ``co_medications``
    drug or class, a ``hypersensitivity`` to the drug itself (``"self"``) or a class
    (``drug_class.<id>`` keys of the lexicon). The sentence is kept verbatim: it is what is quoted.
    """

    drug_id: str
    section_key: str
    sentence: str
    conditions: tuple[str, ...] = ()
    severity: str | None = None  # "nặng", "mất bù", … when only the severe form is contraindicated
    thresholds: tuple[Threshold, ...] = ()
    population: PopulationLimit | None = None
    preterm: bool | None = None  # True: only preterm babies; False: only term babies
    jaundice: bool | None = None  # True: only jaundiced neonates
    hypersensitivity: tuple[str, ...] = ()  # "self" and/or drug_class ids
    purposes: tuple[str, ...] = ()  # purpose ids ("weight_loss", "opioid_withdrawal")
    co_medications: tuple[str, ...] = ()  # drug_ids or drug_class ids taken with it (or a folded name not in the book)
    form: str | None = None  # only for this form or route of the drug ("dạng tiêm", "thuốc nhỏ mắt")

    def to_payload(self) -> dict[str, Any]:
        data = asdict(self)
        data["population"] = self.population.to_payload() if self.population else None
        data["thresholds"] = [asdict(t) for t in self.thresholds]
        for key in ("conditions", "hypersensitivity", "purposes", "co_medications"):
            data[key] = list(data[key])
        return data

    @classmethod
    def from_payload(cls, data: dict[str, Any]) -> ContraindicationRecord:
        population = data.get("population")
        return cls(
            drug_id=str(data["drug_id"]), section_key=str(data["section_key"]), sentence=str(data["sentence"]),
            conditions=tuple(data.get("conditions") or ()), severity=data.get("severity"),
            thresholds=tuple(Threshold(str(t["quantity"]), str(t["comparator"]), float(t["value"]), str(t.get("unit", "")))
                             for t in data.get("thresholds") or ()),
            population=PopulationLimit.from_payload(population) if population else None,
            preterm=data.get("preterm"), jaundice=data.get("jaundice"),
            hypersensitivity=tuple(data.get("hypersensitivity") or ()), purposes=tuple(data.get("purposes") or ()),
            co_medications=tuple(data.get("co_medications") or ()), form=data.get("form"),
        )


@dataclass(frozen=True)
class Chunk:
    """One indexed unit: a part of one section of one monograph. Its payload is the contract."""

    doc_id: str
    drug_id: str
    display_name: str
    section_key: str
    section_title: str
    part_index: int
    chunk_kind: ChunkKind
    text: str
    text_folded: str
    source_refs: tuple[str, ...]
    requires_visual_check: bool = False
    has_quarantined_content: bool = False
    parent_id: str | None = None
    atc_codes: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    population_limits: tuple[PopulationLimit, ...] = ()
    pages: tuple[int, ...] = ()  # pages of the source book this chunk's section spans
    records: tuple[ContraindicationRecord, ...] = ()  # its contraindications as typed facts (issue 24)

    @staticmethod
    def make_doc_id(drug_id: str, section_key: str, part_index: int) -> str:
        return f"{drug_id}__{section_key}__{part_index}"

    @property
    def point_id(self) -> str:
        """Deterministic Qdrant point id, so re-indexing the same chunk is idempotent."""
        return str(uuid.uuid5(_POINT_NAMESPACE, self.doc_id))

    @property
    def needs_visual_check(self) -> bool:
        return self.requires_visual_check or self.has_quarantined_content

    def payload(self) -> dict[str, Any]:
        data = asdict(self)
        data["chunk_kind"] = self.chunk_kind.value
        data["source_refs"] = list(self.source_refs)
        data["atc_codes"] = list(self.atc_codes)
        data["aliases"] = list(self.aliases)
        data["population_limits"] = [limit.to_payload() for limit in self.population_limits]
        data["pages"] = list(self.pages)
        data["records"] = [record.to_payload() for record in self.records]
        # Every ATC prefix (C, C09, C09A, C09AA, C09AA02) so a class filter is an exact match.
        data["atc_levels"] = sorted(
            {code[:n] for code in self.atc_codes for n in (1, 3, 4, 5, 7) if len(code) >= n}
        )
        return data

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> Chunk:
        return cls(
            doc_id=payload["doc_id"],
            drug_id=payload["drug_id"],
            display_name=payload["display_name"],
            section_key=payload["section_key"],
            section_title=payload["section_title"],
            part_index=int(payload["part_index"]),
            chunk_kind=ChunkKind(payload["chunk_kind"]),
            text=payload["text"],
            text_folded=payload["text_folded"],
            source_refs=tuple(payload.get("source_refs") or ()),
            requires_visual_check=bool(payload.get("requires_visual_check", False)),
            has_quarantined_content=bool(payload.get("has_quarantined_content", False)),
            parent_id=payload.get("parent_id"),
            atc_codes=tuple(payload.get("atc_codes") or ()),
            aliases=tuple(payload.get("aliases") or ()),
            population_limits=tuple(
                PopulationLimit.from_payload(item) for item in payload.get("population_limits") or ()
            ),
            pages=tuple(int(p) for p in payload.get("pages") or ()),
            records=tuple(ContraindicationRecord.from_payload(item) for item in payload.get("records") or ()),
        )


class ScoreKind(StrEnum):
    """What a hit's score means; scores of different kinds must never be compared."""

    EXACT = "exact"  # 1.0 by construction: an exact payload-filter match
    SIMILARITY = "similarity"  # cosine similarity of e5 vectors
    LEXICAL_COUNT = "lexical_count"  # count of distinct matched query tokens
    BM25 = "bm25"
    RRF = "rrf"  # reciprocal-rank fusion of dense and BM25
    PHRASE = "phrase"  # 1 + 1/(1+position) + 1/(1 + words/40)
    RERANK = "rerank"


@dataclass(frozen=True)
class Hit:
    chunk: Chunk
    score: float
    score_kind: ScoreKind
    route: str
    display_text: str | None = None  # text with a 【display name】 prefix on the overview route

    @property
    def doc_id(self) -> str:
        return self.chunk.doc_id

    @property
    def text(self) -> str:
        return self.display_text if self.display_text is not None else self.chunk.text

    def rescored(self, score: float, score_kind: ScoreKind) -> Hit:
        return replace(self, score=score, score_kind=score_kind)


class Outcome(StrEnum):
    ANSWERABLE = "answerable"
    ABSTAIN = "abstain"
    VERIFY_PDF = "verify_pdf"
    CLARIFY = "clarify"


@dataclass(frozen=True)
class Decision:
    outcome: Outcome
    reason: str


@dataclass(frozen=True)
class EvidencePack:
    """Evidence in the order it is used, and what did not fit the token budget."""

    hits: tuple[Hit, ...]
    omitted_evidence_ids: tuple[str, ...] = ()
    tokens_used: int = 0
    max_tokens: int | None = None


@dataclass(frozen=True)
class RetrievalResult:
    """What one retrieval route found. It decides nothing: the caller decides once, on its final pool
    (``duocthu.retrieval.decision.decide``); ``abstain_reason`` says why a route found nothing at all."""

    route: str
    pack: EvidencePack
    steps: tuple[str, ...] = ()
    failures: tuple[str, ...] = ()
    abstain_reason: str | None = None

    @property
    def hits(self) -> tuple[Hit, ...]:
        return self.pack.hits


@dataclass(frozen=True)
class DrugCandidate:
    """A drug found by reverse lookup, with the chunks that named the indication."""

    drug_id: str
    display_name: str
    score: float
    hits: tuple[Hit, ...] = field(default_factory=tuple)


# -- answers: what a reply says, as typed blocks rendered to text and HTML at the edge ---------------
# Blocks cite evidence by doc_id; numbers ([1], card 2) are given when a block is rendered. The
# ``type`` tag names each block in the reply's JSON.


@dataclass(frozen=True)
class Notice:
    """A sentence said before the answer proper: how a name was read, what the book does not cover."""

    text: str
    type: Literal["notice"] = field(default="notice", init=False)


@dataclass(frozen=True)
class VerifyPdf:
    """The evidence holds tables not yet checked against the printed page: these chunks."""

    doc_ids: tuple[str, ...]
    type: Literal["verify_pdf"] = field(default="verify_pdf", init=False)


@dataclass(frozen=True)
class SafetyItem:
    """One sentence of the book against this patient, quoted, with every patient fact it matched."""

    title: str  # what the book calls it: "Chống chỉ định", "Giới hạn tuổi (Liều lượng và cách dùng)"
    matched: tuple[str, ...]
    quote: str
    doc_id: str
    applies: bool  # it covers this patient for certain


@dataclass(frozen=True)
class DrugSafety:
    """What the book says about one drug against this patient, and the patient facts it says nothing about."""

    drug: str  # display name
    items: tuple[SafetyItem, ...] = ()
    not_found: tuple[str, ...] = ()  # "không thấy … — không có nghĩa là an toàn"


@dataclass(frozen=True)
class SafetyBlock:
    """"⚠ Lưu ý cho trường hợp này (…)": the patient facts screened and, drug by drug, what the book says."""

    facts: tuple[str, ...]
    drugs: tuple[DrugSafety, ...] = ()
    type: Literal["safety"] = field(default="safety", init=False)

    @property
    def items(self) -> tuple[tuple[str, SafetyItem], ...]:
        """(drug, item) for every quoted sentence, drug by drug."""
        return tuple((d.drug, item) for d in self.drugs for item in d.items)

    @property
    def notes(self) -> tuple[DrugSafety, ...]:
        """The drugs with patient facts the book says nothing about."""
        return tuple(d for d in self.drugs if d.not_found)


@dataclass(frozen=True)
class Prose:
    """The assistant's own sentence: a heading, a connecting sentence, a question, a refusal."""

    text: str
    bullet: bool = False
    indented: bool = False  # a note under the line above it (a candidate drug of a list)
    type: Literal["prose"] = field(default="prose", init=False)


@dataclass(frozen=True)
class Quote:
    """One sentence of the book, verbatim, with the chunks it is cited from."""

    text: str
    doc_ids: tuple[str, ...]
    heading: str | None = None  # the line it sits under in the book ("Truyền tĩnh mạch, trẻ sơ sinh:")
    drug_id: str | None = None
    source: str | None = None  # "Tương tác thuốc — Ibuprofen": where it was found, said before it


@dataclass(frozen=True)
class QuoteList:
    """Quoted sentences under one group heading ("Người lớn (để đối chiếu)"), or under none."""

    group: str | None
    quotes: tuple[Quote, ...]
    type: Literal["quotes"] = field(default="quotes", init=False)


@dataclass(frozen=True)
class Passages:
    """Retrieval-only mode: the evidence chunks shown whole and numbered; nothing was generated."""

    doc_ids: tuple[str, ...]
    type: Literal["passages"] = field(default="passages", init=False)


Block = Notice | VerifyPdf | SafetyBlock | Prose | QuoteList | Passages


class Closing(StrEnum):
    """How an answer's text ends (the page shows the demo notice as a banner and sources as cards)."""

    NONE = "none"  # a message of the assistant's own
    SOURCES = "sources"  # the sources list ("Nguồn:"), then the demo notice
    NOTICE = "notice"  # the demo notice alone (the passages carry their numbers)
    INLINE = "inline"  # the demo notice after the last sentence
