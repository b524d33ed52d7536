"""The patient-safety screen: what the book says against *this* patient, for every drug of a reply.

The spec's stage-2 patient facets (reverse lookup only) grown to every route. For each drug and
the patient's facts it reads, with relation-specific matching:

| fact | sections read | finding kind |
|---|---|---|
| age (limits parsed at index time) | Chống chỉ định | ``age_limit`` |
| pregnancy, breastfeeding | Chống chỉ định; Thời kỳ mang thai / cho con bú | ``contraindication``; ``pregnancy`` / ``breastfeeding`` |
| conditions (and their severe forms) | Chống chỉ định; Thận trọng | ``contraindication``; ``caution`` |
| medicines being taken (names, brands, classes) | Chống chỉ định; Tương tác thuốc of both drugs | ``contraindication``; ``interaction`` |

Every finding is a verbatim sentence with its chunk. ``applies`` is True only when the book's
statement covers the patient for certain (a child under the stated age; a contraindicated condition
the patient has, not only a severe form of it); otherwise it is shown without changing the answer.
A fact with no finding is reported as not found — never as safe. It never creates candidates.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum

from duocthu.chunker import split_sentences
from duocthu.contraindications import CONTRAINDICATION_SECTION, DECLINING_SECTIONS
from duocthu.lexicon import LEXICON
from duocthu.qdrant_store import QdrantStore
from duocthu.retrieval.policy import EvidencePolicy
from duocthu.retrieval.reasoning import Status, Verdict, judge
from duocthu.text import (
    STOPWORDS_ACCENTED,
    find_phrase,
    fold,
    folded_words,
    normalize,
    token_matches,
    words,
)
from duocthu.types import Chunk, ChunkKind, DrugCandidate, Hit, PopulationLimit, ScoreKind
from duocthu.understanding.frame import PatientFacts, PatientMeasure


class FindingKind(StrEnum):
    CONTRAINDICATION = "contraindication"
    AGE_LIMIT = "age_limit"
    CAUTION = "caution"
    INTERACTION = "interaction"
    PREGNANCY = "pregnancy"
    BREASTFEEDING = "breastfeeding"


class CandidateStatus(StrEnum):
    CONTRAINDICATED = "contraindicated"  # a Chống chỉ định sentence applies to the patient
    SAFETY_EVIDENCE_FOUND = "safety_evidence_found"
    INSUFFICIENT_EVIDENCE = "insufficient_evidence"  # nothing found — never "safe"


@dataclass(frozen=True)
class ConditionTerm:
    """A patient's condition and the phrases that name it in the book."""

    label: str
    phrases: tuple[str, ...]  # the condition's own forms
    narrower: tuple[str, ...] = ()  # forms of its severe/specific forms ("suy thận nặng" for "suy thận")
    severe: bool = False  # the patient stated the severe form
    clearance_below: float | None = None


@dataclass(frozen=True)
class MedicationTerm:
    """A medicine being taken: the names, brands and classes the book may call it by."""

    label: str
    phrases: tuple[str, ...]
    drug_id: str | None = None
    taken: bool = True  # False: named in the conversation without saying it is being taken


@dataclass(frozen=True)
class AllergyTerm:
    """A medicine (or class) the patient is allergic to or reacted to, and the names the book may use."""

    label: str
    phrases: tuple[str, ...]
    drug_id: str | None = None


@dataclass(frozen=True)
class PatientProfile:
    """Facts about the patient that select safety sentences (they are not evidence themselves)."""

    age_years: float | None = None
    age_text: str | None = None
    weight_kg: float | None = None
    pediatric: bool = False
    elderly: bool = False
    pregnant: bool = False
    trimester: int | None = None
    breastfeeding: bool = False
    conditions: tuple[ConditionTerm, ...] = ()
    medications: tuple[MedicationTerm, ...] = ()
    renal_clearance_ml_min: float | None = None
    allergies: tuple[AllergyTerm, ...] = ()
    route: str | None = None  # the route asked about ("tiêm bắp" → "tiêm"): a limit for that form applies
    typed: PatientFacts | None = None  # the typed facts each contraindication record is judged on (issue 24)
    classes_by_drug: Mapping[str, frozenset[str]] = field(default_factory=dict)  # drug_id → its class ids

    @property
    def is_empty(self) -> bool:
        return not (self.age_years is not None or self.pediatric or self.elderly or self.pregnant
                    or self.breastfeeding or self.conditions or self.medications or self.allergies
                    or self._has_typed_facts)

    @property
    def _has_typed_facts(self) -> bool:
        """A fact only the records can use: a number, a purpose, a class reacted to, prematurity, jaundice."""
        f = self.typed
        return f is not None and bool(f.measures or f.purposes or f.allergy_classes or f.unnamed_allergy
                                      or f.preterm is not None or f.jaundice is not None or f.gestation_weeks)

    def facts(self) -> tuple[str, ...]:
        """The facts screened, as shown back ("6 tuổi", "mang thai", "hen phế quản", "đang dùng warfarin")."""
        shown: list[str] = []
        if self.age_text:
            shown.append(self.age_text)
        elif self.pediatric:
            shown.append("trẻ em")
        elif self.elderly:
            shown.append("người cao tuổi")
        if self.pregnant:
            shown.append("mang thai" + (f" (3 tháng {('đầu', 'giữa', 'cuối')[self.trimester - 1]})"
                                        if self.trimester else ""))
        if self.breastfeeding:
            shown.append("cho con bú")
        shown += [c.label for c in self.conditions]
        shown += [self.medication_fact(m) for m in self.medications]
        shown += [f"dị ứng {a.label}" for a in self.allergies]
        if self.typed is not None:
            shown += [_measure_fact(m) for m in self.typed.measures]
            if self.typed.preterm is not None:
                shown.append("sinh non" if self.typed.preterm else "sinh đủ tháng")
            if self.typed.jaundice is not None:
                shown.append("vàng da" if self.typed.jaundice else "không vàng da")
            shown += [f"dùng để: {purpose}" for purpose in self.typed.purposes]
        return tuple(dict.fromkeys(shown))

    @staticmethod
    def medication_fact(medication: MedicationTerm) -> str:
        return f"đang dùng {medication.label}" if medication.taken else medication.label


@dataclass(frozen=True)
class SafetyFinding:
    drug_id: str
    kind: FindingKind
    matched: str  # the patient fact it matched
    quote: str  # a verbatim sentence of the book
    hit: Hit
    applies: bool  # covers this patient for certain (changes the answer)
    undetermined: bool = False  # the patient's facts touch it but do not decide it: ask before any dose
    question: str | None = None  # the one question that decides an undetermined one
    decided_by: tuple[str, ...] = ()  # the stated facts that decided it (research mode)

    @property
    def doc_id(self) -> str:
        return self.hit.doc_id

    @property
    def status(self) -> str:
        """``applies`` (a stated fact meets it), ``undetermined`` or ``shown`` (said, not decided)."""
        return "applies" if self.applies else "undetermined" if self.undetermined else "shown"


@dataclass(frozen=True)
class SafetyScreen:
    drugs: tuple[str, ...]
    facts: tuple[str, ...]
    findings: tuple[SafetyFinding, ...] = ()
    own_facts: tuple[tuple[str, str], ...] = ()  # (drug_id, "đang dùng X"): a drug's own use is no fact about it

    @property
    def hits(self) -> tuple[Hit, ...]:
        return tuple({f.hit.doc_id: f.hit for f in self.findings}.values())

    def for_drug(self, drug_id: str) -> tuple[SafetyFinding, ...]:
        return tuple(f for f in self.findings if f.drug_id == drug_id)

    def contraindicated(self, drug_id: str | None = None) -> tuple[SafetyFinding, ...]:
        """Findings that forbid the drug for this patient (a Chống chỉ định, or an age limit, that applies)."""
        return tuple(
            f for f in self.findings
            if f.applies and (f.hit.chunk.section_key == "chong_chi_dinh" or f.kind is FindingKind.AGE_LIMIT
                              or bool(f.decided_by))
            and (drug_id is None or f.drug_id == drug_id)
        )

    def in_contraindications(self, drug_id: str | None = None) -> tuple[SafetyFinding, ...]:
        """Findings quoted from Chống chỉ định, applying for certain or not (a severe form, a circumstance)."""
        return tuple(f for f in self.findings if f.hit.chunk.section_key == "chong_chi_dinh"
                     and (drug_id is None or f.drug_id == drug_id))

    def undetermined_for(self, drug_id: str | None = None) -> tuple[SafetyFinding, ...]:
        """Contraindications the patient's facts touch without deciding (none when one already applies)."""
        return tuple(f for f in self.findings if f.undetermined and (drug_id is None or f.drug_id == drug_id)
                     and not self.contraindicated(f.drug_id))

    def unmatched_facts(self, drug_id: str) -> tuple[str, ...]:
        matched = {f.matched for f in self.for_drug(drug_id)} | {fact for d, fact in self.own_facts if d == drug_id}
        return tuple(fact for fact in self.facts if fact not in matched)

    @property
    def is_empty(self) -> bool:
        return not self.findings


_SEVERITY_AFTER = LEXICON.phrases("severity_after")
_CONDITIONAL_RE = re.compile(r"^\s*(?:dang tiem|dang uong|dang giai phong|thuoc dan|thuoc nho|truyen tinh mach|che pham)"
                             r"|\bkhi dung\b|\bneu\b|\bphoi hop voi\b|\bdung dong thoi\b")
_CLEARANCE_RE = re.compile(r"(?:duoi|<)\s*(\d+(?:[.,]\d+)?)\s*ml\s*/\s*phut")
# A contraindicated combination ("Dùng đồng thời với …", "Đang dùng IMAO …"), not a history that
# merely names the other medicine ("tiền sử hen khi dùng … thuốc chống viêm không steroid").
_TOGETHER_RE = re.compile(r"\b(?:dung dong thoi|dang dung|phoi hop voi|ket hop voi|dung cung|moi ngung)\b")


def _sentences(chunk: Chunk) -> list[str]:
    if chunk.chunk_kind is ChunkKind.BLOCK:
        return [line.strip() for line in chunk.text.split("\n") if line.strip().startswith("|")
                and not set(line.strip()) <= set("|-: ")]
    return [s for line in chunk.text.split("\n") if line.strip() for s in split_sentences(line)]


def _phrase_at(sentence_tokens: list[str], phrases: Iterable[str]) -> tuple[int, int] | None:
    for phrase in phrases:
        target = folded_words(phrase)
        position = find_phrase(sentence_tokens, target)
        if position >= 0:
            return position, position + len(target)
    return None


def _phrase_spans(sentence_tokens: list[str], phrases: Iterable[str]) -> list[tuple[int, int]]:
    """Where the phrases occur; a span inside a longer one is dropped ("hen" inside "hen phế quản nặng"
    must not hide the severity word that follows the whole phrase)."""
    spans = set()
    for phrase in phrases:
        target = folded_words(phrase)
        position = find_phrase(sentence_tokens, target)
        if position >= 0 and target:
            spans.add((position, position + len(target)))
    return sorted(s for s in spans if not any(o != s and o[0] <= s[0] and s[1] <= o[1] for o in spans))


# A contraindication written for a population ("Phụ nữ có thai bị động kinh …") is certain only for it.
_POPULATION_OPENERS: tuple[tuple[str, Callable[[PatientProfile], bool]], ...] = (
    ("phu nu co kha nang mang thai", lambda p: False),  # cannot be known from the conversation
    ("phu nu co thai", lambda p: p.pregnant), ("phu nu mang thai", lambda p: p.pregnant),
    ("nguoi mang thai", lambda p: p.pregnant), ("thai phu", lambda p: p.pregnant),
    ("phu nu cho con bu", lambda p: p.breastfeeding), ("nguoi cho con bu", lambda p: p.breastfeeding),
    ("tre", lambda p: p.pediatric), ("nguoi cao tuoi", lambda p: p.elderly),
)


def _written_for_another_population(folded_sentence: str, profile: PatientProfile) -> bool:
    opening = folded_sentence.lstrip()
    for opener, concerns in _POPULATION_OPENERS:
        if opening == opener or opening.startswith(opener + " "):
            return not concerns(profile)
    return False


def _condition_applies(term: ConditionTerm, tokens: list[str], span: tuple[int, int], via_narrower: bool,
                       folded_sentence: str, profile: PatientProfile) -> bool:
    if _written_for_another_population(folded_sentence, profile):
        return False
    threshold = _CLEARANCE_RE.search(folded_sentence)
    if threshold and "than" in folded_sentence and profile.renal_clearance_ml_min is not None:
        # A measured kidney function decides against the book's own threshold.
        return profile.renal_clearance_ml_min < float(threshold.group(1).replace(",", "."))
    if via_narrower and not term.severe:
        return False  # the book names a severe form; the patient did not say theirs is severe
    after = " ".join(tokens[span[1] : span[1] + 3])
    if not term.severe and any(after.startswith(word) for word in _SEVERITY_AFTER):
        return False
    if threshold and "than" in folded_sentence:
        return term.severe and term.clearance_below is not None
    return not _CONDITIONAL_RE.search(folded_sentence)


def _limit_applies(limit: PopulationLimit, profile: PatientProfile) -> tuple[bool, str] | None:
    """(applies, matched fact) when a parsed limit concerns this patient, else None."""
    circumstance_met = limit.conditional and (
        _names_a_condition(limit.sentence, profile) or (limit.route is not None and limit.route == profile.route))
    if limit.kind == "weight":
        if profile.weight_kg is not None and limit.max_weight_kg is not None and profile.weight_kg < limit.max_weight_kg:
            return (not limit.conditional or circumstance_met, f"{profile.weight_kg:g} kg")
        return None
    if limit.kind == "age":
        if profile.age_years is not None:
            younger = limit.max_age_years is not None and profile.age_years < limit.max_age_years
            older = limit.min_age_years is not None and profile.age_years >= limit.min_age_years
            if younger or older:
                return (not limit.conditional or circumstance_met, profile.age_text or f"{profile.age_years:g} tuổi")
            return None
        if profile.pediatric and limit.max_age_years is not None and limit.max_age_years <= 18:
            return (False, "trẻ em")  # the child's age is not known yet
        if profile.elderly and limit.min_age_years is not None and limit.min_age_years >= 60:
            return (False, "người cao tuổi")
        return None
    # A pregnancy or breastfeeding contraindication with a circumstance attached ("khi dùng cho bệnh không
    # phải ung thư") applies: the circumstance cannot be checked from the conversation, and the quote
    # shown says it — no dose is given as if it did not concern her.
    if limit.kind == "pregnancy" and profile.pregnant:
        fact = next(f for f in profile.facts() if f.startswith("mang thai"))
        if not limit.trimesters:
            return (True, fact)
        if profile.trimester is None:
            return (False, fact)
        return (True, fact) if profile.trimester in limit.trimesters else None
    if limit.kind == "breastfeeding" and profile.breastfeeding:
        return (True, "cho con bú")
    return None


def _names_a_condition(sentence: str, profile: PatientProfile) -> bool:
    """A conditional limit ("… dùng để giảm đau sau cắt amidan") whose circumstance the patient stated."""
    tokens = folded_words(sentence)
    return any(_phrase_spans(tokens, term.phrases) for term in profile.conditions)


def screen_drug(
    store: QdrantStore, drug_id: str, profile: PatientProfile, other_drug_names: dict[str, Sequence[str]] | None = None,
) -> list[SafetyFinding]:
    """Every sentence of one drug's book text that concerns this patient."""
    findings: list[SafetyFinding] = []

    def add(kind: FindingKind, matched: str, quote: str, hit: Hit, applies: bool) -> None:
        if not any(f.quote == quote and f.matched == matched for f in findings):
            findings.append(SafetyFinding(drug_id, kind, matched, quote, hit, applies))

    for hit in store.find_by_section(drug_id, "chong_chi_dinh"):
        safety_hit = Hit(hit.chunk, 1.0, ScoreKind.EXACT, "safety")
        for limit in hit.chunk.population_limits:
            verdict = _limit_applies(limit, profile)
            if verdict is not None:
                kind = FindingKind.AGE_LIMIT if limit.kind == "age" else FindingKind.CONTRAINDICATION
                add(kind, verdict[1], limit.sentence, safety_hit, verdict[0])
        own_names = (other_drug_names or {}).get(drug_id, ())
        for sentence in _sentences(hit.chunk):
            _match_sentence(sentence, profile, FindingKind.CONTRAINDICATION, safety_hit, add, own_names=own_names)
    knows_age_or_weight = profile.age_years is not None or profile.pediatric or profile.elderly \
        or profile.weight_kg is not None
    declining_sections = ("lieu_luong_va_cach_dung", "than_trong") if knows_age_or_weight else ()
    for hit in (h for section in declining_sections for h in store.find_by_section(drug_id, section)):
        # An age group the dosing or caution section declines ("Trẻ dưới 2 tuổi: không khuyến cáo") is an
        # age limit, wherever the book put it.
        for limit in hit.chunk.population_limits:
            verdict = _limit_applies(limit, profile)
            if verdict is not None:
                add(FindingKind.AGE_LIMIT, verdict[1], limit.sentence, Hit(hit.chunk, 1.0, ScoreKind.EXACT, "safety"),
                    verdict[0])
    for hit in store.find_by_section(drug_id, "than_trong"):
        safety_hit = Hit(hit.chunk, 1.0, ScoreKind.EXACT, "safety")
        for sentence in _sentences(hit.chunk):
            _match_sentence(sentence, profile, FindingKind.CAUTION, safety_hit, add, medications=False)
    if profile.medications:
        for hit in store.find_by_section(drug_id, "tuong_tac_thuoc"):
            safety_hit = Hit(hit.chunk, 1.0, ScoreKind.EXACT, "safety")
            for sentence in _sentences(hit.chunk):
                tokens = folded_words(sentence)
                for medication in profile.medications:
                    if medication.drug_id != drug_id and _phrase_at(tokens, medication.phrases):
                        add(FindingKind.INTERACTION, PatientProfile.medication_fact(medication), sentence, safety_hit,
                            False)
        # The other direction: the taken medicine's own interaction section naming this drug.
        names = (other_drug_names or {}).get(drug_id, ())
        for medication in profile.medications:
            if medication.drug_id is None or medication.drug_id == drug_id or not names:
                continue
            for hit in store.find_by_section(medication.drug_id, "tuong_tac_thuoc"):
                safety_hit = Hit(hit.chunk, 1.0, ScoreKind.EXACT, "safety")
                for sentence in _sentences(hit.chunk):
                    if _phrase_at(folded_words(sentence), names):
                        add(FindingKind.INTERACTION, PatientProfile.medication_fact(medication), sentence, safety_hit,
                            False)
    for flag, section, kind, fact in (
        (profile.pregnant, "thoi_ky_mang_thai", FindingKind.PREGNANCY, "mang thai"),
        (profile.breastfeeding, "thoi_ky_cho_con_bu", FindingKind.BREASTFEEDING, "cho con bú"),
    ):
        if flag:
            shown = next((f for f in profile.facts() if f.startswith(fact)), fact)
            for hit in store.find_by_section(drug_id, section):
                safety_hit = Hit(hit.chunk, 1.0, ScoreKind.EXACT, "safety")
                for sentence in _sentences(hit.chunk):
                    add(kind, shown, sentence, safety_hit, False)
    return _settled(findings, _verdicts(store, drug_id, profile), drug_id)


def _measure_fact(measure: PatientMeasure) -> str:
    comparator = "" if measure.comparator == "=" else f"{measure.comparator} "
    return f"{measure.quantity} {comparator}{measure.value:g} {measure.unit}".strip()


RECORD_SECTIONS = (CONTRAINDICATION_SECTION, *sorted(DECLINING_SECTIONS))


def _verdicts(store: QdrantStore, drug_id: str, profile: PatientProfile) -> list[tuple[Verdict, Chunk]]:
    """Each contraindication record of the drug the patient's facts touch, with its verdict (issue 24)."""
    if profile.typed is None:
        return []
    found = []
    for chunk in store.chunks_where(drug_id, list(RECORD_SECTIONS)):
        for record in chunk.records:
            verdict = judge(record, profile.typed, profile.age_years, profile.weight_kg,
                            profile.classes_by_drug.get(drug_id, frozenset()), profile.classes_by_drug, profile.route)
            if verdict.status is not Status.NOT_RAISED:
                found.append((verdict, chunk))
    return found


def _settled(findings: list[SafetyFinding], verdicts: list[tuple[Verdict, Chunk]], drug_id: str) -> list[SafetyFinding]:
    """The findings once each record's verdict is known: a record that applies makes its sentence apply; one a
    stated fact rules out is no warning; one left undecided asks its question (it is never taken as safe)."""
    said: dict[str, list[Verdict]] = {}
    for verdict, _ in verdicts:
        said.setdefault(verdict.record.sentence, []).append(verdict)
    settled: list[SafetyFinding] = []
    for finding in findings:
        statuses = {v.status for v in said.get(finding.quote, [])}
        if Status.APPLIES in statuses:
            decided = _first(said[finding.quote], Status.APPLIES)
            settled.append(replace(finding, applies=True, undetermined=False, decided_by=decided.decided_by))
        elif Status.UNDETERMINED in statuses and (not finding.applies or finding.kind is FindingKind.AGE_LIMIT):
            # an age band read alone ("trẻ sinh non đến 41 tuần" as an age) is decided by the record's prematurity;
            # a condition the words already matched in full keeps applying
            left_open = _first(said[finding.quote], Status.UNDETERMINED)
            settled.append(replace(finding, applies=False, undetermined=True, question=left_open.question,
                                   decided_by=left_open.decided_by))
        elif statuses != {Status.RULED_OUT} or (finding.applies and finding.kind is not FindingKind.AGE_LIMIT):
            # ruled out hides a sentence only when the words alone did not find it applying (an age band read
            # without its prematurity excepted): fail closed where the two readings disagree
            settled.append(finding)
    known = {f.quote for f in findings}
    for verdict, chunk in verdicts:
        sentence = verdict.record.sentence
        if sentence in known or verdict.status is Status.RULED_OUT:
            continue
        known.add(sentence)
        applies = any(v.status is Status.APPLIES for v in said[sentence])
        chosen = _first(said[sentence], Status.APPLIES if applies else Status.UNDETERMINED)
        population = verdict.record.population
        kind = FindingKind.AGE_LIMIT if population is not None and population.kind == "age" \
            else FindingKind.CONTRAINDICATION
        settled.append(SafetyFinding(
            drug_id, kind, "; ".join(chosen.decided_by) or sentence, sentence, Hit(chunk, 1.0, ScoreKind.EXACT, "safety"),
            applies, undetermined=not applies, question=None if applies else chosen.question,
            decided_by=chosen.decided_by))
    return settled


def _first(verdicts: list[Verdict], status: Status) -> Verdict:
    return next(v for v in verdicts if v.status is status)


# A sentence about an allergy or a past reaction ("Quá mẫn với …", "tiền sử dị ứng với bất kỳ penicilin
# nào", "Tiền sử hen … khi dùng acid acetylsalicylic").
_ALLERGY_SENTENCE_RE = re.compile(r"\b(?:man cam|qua man|di ung|phan ung|phan ve|tien su)\b")
_DOUBLED_RE = re.compile(r"([a-z])\1")


def _undoubled(tokens: Sequence[str]) -> list[str]:
    """"penicillin" and "penicilin" compare equal: the book writes Vietnamese INN spellings."""
    return [_DOUBLED_RE.sub(r"\1", t) for t in tokens]


def _allergy_matches(sentence_tokens: list[str], allergy: AllergyTerm, drug_id: str,
                     own_names: Sequence[str]) -> bool:
    tokens = _undoubled(sentence_tokens)
    phrases = list(allergy.phrases) + (list(own_names) if allergy.drug_id == drug_id else [])
    if any(find_phrase(tokens, _undoubled(folded_words(p))) >= 0 for p in phrases if p):
        return True
    # Allergic to the drug asked about: its "quá mẫn với thuốc / bất kỳ thành phần nào" sentence.
    return allergy.drug_id == drug_id and find_phrase(tokens, ["thuoc"]) >= 0 and find_phrase(tokens, ["man"]) >= 0


def _match_sentence(sentence: str, profile: PatientProfile, kind: FindingKind, hit: Hit,
                    add: Callable[..., None], medications: bool = True, own_names: Sequence[str] = ()) -> None:
    tokens = folded_words(sentence)
    folded_sentence = fold(sentence)
    if profile.allergies and _ALLERGY_SENTENCE_RE.search(folded_sentence):
        for allergy in profile.allergies:
            if _allergy_matches(tokens, allergy, hit.chunk.drug_id, own_names):
                add(kind, f"dị ứng {allergy.label}", sentence, hit, kind is FindingKind.CONTRAINDICATION)
    exception_at = _exception_start(tokens)
    for term in profile.conditions:
        matches = [(span, False) for span in _phrase_spans(tokens, term.phrases)]
        matches += [(span, True) for span in _phrase_spans(tokens, term.narrower)]
        # "Bệnh cơ tim phì đại (trừ khi có rung nhĩ kèm suy tim)": named as the exception, not the contraindication.
        matches = [(span, narrower) for span, narrower in matches if span[0] < exception_at]
        if matches:
            applies = kind is FindingKind.CONTRAINDICATION and any(
                _condition_applies(term, tokens, span, via_narrower, folded_sentence, profile)
                for span, via_narrower in matches)
            add(kind, term.label, sentence, hit, applies)
    if medications:
        together = bool(_TOGETHER_RE.search(folded_sentence))
        for medication in profile.medications:
            if medication.drug_id == hit.chunk.drug_id:
                continue  # taking the drug is not being allergic to it ("Quá mẫn với digoxin")
            if _phrase_at(tokens, medication.phrases):
                add(kind, PatientProfile.medication_fact(medication), sentence, hit, together and medication.taken)
    if kind is FindingKind.CAUTION:
        for flag, phrases, fact in ((profile.elderly, ("người cao tuổi", "người già"), "người cao tuổi"),
                                    (profile.pediatric, ("trẻ em", "trẻ nhỏ", "trẻ sơ sinh"), "trẻ em")):
            if flag and _phrase_at(tokens, phrases):
                add(kind, profile.age_text or fact, sentence, hit, False)


_EXCEPTION_OPENERS = (("tru", "khi"), ("ngoai", "tru"), LEXICON.phrases("exception_openers"))


def _exception_start(tokens: Sequence[str]) -> int:
    """Where an exception clause ("trừ khi …", "ngoại trừ …") opens in a sentence, or past its end."""
    found = [find_phrase(list(tokens), list(opener)) for opener in _EXCEPTION_OPENERS]
    return min([f for f in found if f >= 0], default=len(tokens))


def screen_patient(
    store: QdrantStore, drug_ids: Sequence[str], profile: PatientProfile,
    drug_names: dict[str, Sequence[str]] | None = None, stated: Sequence[str] = (),
) -> SafetyScreen:
    """The screen of every drug of a reply against the patient's facts.

    ``stated`` are the user's own turns: a Chống chỉ định sentence that shares a distinctive phrase
    with them is shown too (see ``echo_drug``), for what the facts' lexicon does not know.
    """
    drugs = tuple(dict.fromkeys(drug_ids))
    if (profile.is_empty and not stated) or not drugs:
        return SafetyScreen(drugs, profile.facts())
    findings = [] if profile.is_empty else [f for d in drugs for f in screen_drug(store, d, profile, drug_names)]
    shown = {(f.drug_id, f.quote) for f in findings}
    echoed = [f for d in drugs for f in echo_drug(store, d, stated, (drug_names or {}).get(d, ()))
              if (f.drug_id, f.quote) not in shown]
    if echoed and not profile.is_empty:  # a sentence a stated fact rules out is not shown for sharing words
        ruled_out = {(d, v.record.sentence) for d in {f.drug_id for f in echoed}
                     for v, _ in _verdicts(store, d, profile) if v.status is Status.RULED_OUT}
        echoed = [f for f in echoed if (f.drug_id, f.quote) not in ruled_out]
    facts = profile.facts()
    facts += tuple(dict.fromkeys(f.matched for f in echoed if f.matched not in facts))
    own = tuple((m.drug_id, PatientProfile.medication_fact(m)) for m in profile.medications if m.drug_id in drugs)
    return SafetyScreen(drugs, facts, tuple(findings + echoed), own)


# Words too common in Chống chỉ định sentences, or in the way people describe themselves, for a shared
# phrase made only of them to mean the sentence concerns the patient. Compared as the book writes them
# (with diacritics): folded, "gần" would be the "gan" of "viêm gan", "đây" the "day" of "dạ dày".
_ECHO_FILLER = frozenset(normalize(w) for w in LEXICON.phrases("echo_filler")) | STOPWORDS_ACCENTED
# A shared phrase that the two texts continue in opposite ways ("nhịp tim chậm" / "nhịp tim nhanh").
_OPPOSITES = frozenset(frozenset(fold(w) for w in pair) for pair in (
    ("chậm", "nhanh"), ("cao", "thấp"), ("tăng", "giảm"), ("tăng", "hạ"), ("thừa", "thiếu"), ("cường", "suy"),
    ("nhiều", "ít"),
))
# "Thuốc này có gây viêm gan không?": an effect asked about, not a fact about the patient.
_EFFECT_VERBS = frozenset(LEXICON.phrases("safety.effect_verbs"))
_FOREIGN_WORD_RE = re.compile(r"^(?:[a-z]{8,}|[a-z]*[fjwz][a-z]*)$")


def _distinctive(run: Sequence[str], own_words: frozenset[str]) -> bool:
    """Two meaningful words of the book ("viêm gan", "bổ sung kali"), or one name that cannot be a
    Vietnamese syllable ("rilpivirin")."""
    content = [fold(w) for w in run if w not in _ECHO_FILLER and fold(w) not in own_words and not w.isdigit()]
    if len(content) >= 2:
        return True
    return len(content) == 1 and bool(_FOREIGN_WORD_RE.match(content[0]))


def _continues_oppositely(book: Sequence[str], said: Sequence[str], book_end: int, said_end: int) -> bool:
    return book_end < len(book) and said_end < len(said) \
        and frozenset((fold(book[book_end]), fold(said[said_end]))) in _OPPOSITES


def _shared_runs(book_raw: Sequence[str], said_raw: Sequence[str]) -> list[tuple[int, int]]:
    """Maximal runs of the book sentence's words that the user also wrote in a row (accent-aware),
    except those the two texts go on to qualify in opposite ways."""
    book = [fold(w) for w in book_raw]
    said = [fold(w) for w in said_raw]
    where_said: dict[str, list[int]] = {}
    for j, word in enumerate(said):
        if not (j >= 2 and _EFFECT_VERBS & set(said[j - 2 : j])):
            where_said.setdefault(word, []).append(j)
    runs: list[tuple[int, int]] = []
    for i, word in enumerate(book):
        for j in where_said.get(word, ()):
            if i and j and book[i - 1] == said[j - 1] and token_matches(said_raw[j - 1], book_raw[i - 1]):
                continue  # inside a longer run
            k = 0
            while i + k < len(book) and j + k < len(said) and token_matches(said_raw[j + k], book_raw[i + k]):
                k += 1
            if k and not _continues_oppositely(book_raw, said_raw, i + k, j + k):
                runs.append((i, i + k))
    return runs


def echo_drug(store: QdrantStore, drug_id: str, stated: Sequence[str], own_names: Sequence[str] = ()) -> list[SafetyFinding]:
    """Chống chỉ định sentences that share a distinctive phrase with what the user wrote.

    The lexicon of conditions cannot know every circumstance a monograph names ("sản phẩm có nguồn
    gốc từ lợn", "độc tính trên tai", "đang dùng rilpivirin"); when the user said it, the sentence
    is shown — never as applying for certain, so it does not change the answer by itself.
    """
    said = [words(text) for text in stated if text]
    if not any(said):
        return []
    own_words = frozenset(w for name in own_names for w in folded_words(name))
    findings: list[SafetyFinding] = []
    for hit in store.find_by_section(drug_id, "chong_chi_dinh"):
        safety_hit = Hit(hit.chunk, 1.0, ScoreKind.EXACT, "safety")
        for sentence in _sentences(hit.chunk):
            book_raw = words(sentence)
            for said_raw in said:
                phrases = [" ".join(book_raw[a:b]) for a, b in _shared_runs(book_raw, said_raw)
                           if _distinctive(book_raw[a:b], own_words)]
                if phrases and not any(f.quote == sentence for f in findings):
                    findings.append(SafetyFinding(drug_id, FindingKind.CONTRAINDICATION, _trimmed(phrases[0]),
                                                  sentence, safety_hit, False))
    return findings


def _trimmed(phrase: str) -> str:
    """The shared phrase without filler at its ends ("bị viêm gan" → "viêm gan")."""
    kept = words(phrase)
    while kept and kept[0] in _ECHO_FILLER:
        kept = kept[1:]
    while kept and kept[-1] in _ECHO_FILLER:
        kept = kept[:-1]
    return " ".join(kept) or phrase


@dataclass(frozen=True)
class CandidateAssessment:
    drug_id: str
    status: CandidateStatus
    findings: tuple[SafetyFinding, ...] = field(default_factory=tuple)

    @property
    def hits(self) -> tuple[Hit, ...]:
        return tuple({f.hit.doc_id: f.hit for f in self.findings}.values())


def assess_patient_candidates(
    store: QdrantStore, candidates: Sequence[DrugCandidate], profile: PatientProfile, policy: EvidencePolicy,
    drug_names: dict[str, Sequence[str]] | None = None,
) -> list[CandidateAssessment]:
    """Stage 2 of reverse lookup: every candidate screened, none dropped, none created.

    A candidate with a Chống chỉ định that applies is ``CONTRAINDICATED``; one with nothing found
    is ``INSUFFICIENT_EVIDENCE`` — which is neither "safe" nor "unusable". ``policy`` keeps the
    spec's per-candidate bound on safety sections shown.
    """
    screen = screen_patient(store, [c.drug_id for c in candidates], profile, drug_names)
    assessments = []
    for candidate in candidates:
        findings = screen.for_drug(candidate.drug_id)
        sections: list[str] = []
        kept = []
        forbidding = screen.contraindicated(candidate.drug_id)
        for finding in findings:
            key = finding.hit.chunk.section_key
            if finding in forbidding:
                kept.append(finding)  # what forbids the drug is quoted whatever the cap (it is the answer)
                continue
            if key not in sections:
                if len(sections) >= policy.safety_sections_per_candidate:
                    continue
                sections.append(key)
            kept.append(finding)
        if forbidding:
            status = CandidateStatus.CONTRAINDICATED
        elif kept:
            status = CandidateStatus.SAFETY_EVIDENCE_FOUND
        else:
            status = CandidateStatus.INSUFFICIENT_EVIDENCE
        assessments.append(CandidateAssessment(candidate.drug_id, status, tuple(kept)))
    return assessments
