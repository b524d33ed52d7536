"""The book's contraindications as typed facts: each sentence read once, at index time, into records.

Read: every sentence of Chống chỉ định; every age or weight group the dosing section declines (the
chunker's ``PopulationLimit``s); and a "không dùng …" sentence of another section when it says for
whom or for what ("không dùng cho trẻ sinh non", "không dùng để điều trị béo phì"). A sentence yields
one record per condition it names (each with the numbers that qualify it), else one record for its
population, allergy, purpose or co-medication. A Chống chỉ định sentence that yields no record is
reported (``duocthu corpus records``) and still screened by its words.

Conditions carry the labels of the condition lexicon (the ones the patient side produces), reduced to
the broad label plus a ``severity`` when the book names only a severe form ("suy thận nặng" →
``("suy thận",)``, ``"nặng"``), so a patient who says only "suy thận" is *touched but undecided*.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from duocthu.chunker import split_sentences
from duocthu.drug_classes import CLASS_NAMES, classes_named, classes_of
from duocthu.limits import NEWBORN_YEARS, parse_limits
from duocthu.measures import MEASURE_NAMES, PURPOSE_NAMES, purposes_named, read_thresholds
from duocthu.retrieval.reasoning import age_text
from duocthu.text import fold, normalize, word_forms
from duocthu.types import Chunk, ChunkKind, ContraindicationRecord, PopulationLimit, Threshold
from duocthu.understanding.conditions import ConditionLexicon, ConditionMention

CONTRAINDICATION_SECTION = "chong_chi_dinh"
DOSING_SECTION = "lieu_luong_va_cach_dung"
# Sections whose "không dùng …" sentences can state a contraindication (not storage, indications, overdose).
DECLINING_SECTIONS = frozenset({"than_trong", "thoi_ky_mang_thai", "thoi_ky_cho_con_bu", DOSING_SECTION,
                                "tuong_tac_thuoc"})

# Trailing words that make a book phrase the severe or active form of a condition of the lexicon.
_SEVERITY_WORDS = ("nặng", "đang tiến triển", "tiến triển", "mất bù", "chưa được kiểm soát", "không kiểm soát",
                   "có triệu chứng", "tái phát", "cấp", "kháng trị", "chưa được điều chỉnh", "nặng chưa được điều chỉnh")
_HYPERSENSITIVITY_RE = re.compile(r"\b(?:qua man|man cam|di ung|phan ung qua man|phan ung da)\b")
# "Tiền sử hen … khi dùng acid acetylsalicylic": a past reaction to a drug, told as the condition it caused.
_HISTORY_WITH_DRUG_RE = re.compile(r"^\s*(?:nguoi (?:co|mac) )?tien su\b.*\b(?:khi dung|lien quan den|do)\b")
_SEVERE_REACTION_RE = re.compile(r"(?<!\w)(?:nặng|tức thì|sốc phản vệ)(?!\w)")  # accented: "chức năng" is not "nặng"
_SELF_WORDS_RE = re.compile(r"\b(?:thanh phan|ta duoc)\b")
_PURPOSE_RE = re.compile(r"(?<!\w)để(?!\w)(?P<rest>.*)$")
_CO_MEDICATION_RE = re.compile(
    r"\b(?:dung dong thoi|phoi hop|dang dung|moi dung|dung cung|da dung)\b(?:[^:]*?\b(?:voi|thuoc)\b)?(?P<rest>.*)$")
_PRETERM_RE = re.compile(r"\b(?:sinh non|de non)\b")
_TERM_RE = re.compile(r"\bdu thang\b")
_JAUNDICE_RE = re.compile(r"\b(?:vang da|bilirubin)\b")
_JAUNDICE_LABEL_RE = re.compile(r"\b(?:vang da|bilirubin)\b")
# "không dùng [thuốc|X] cho/ở/trong/để …" — whom or what a sentence outside Chống chỉ định declines.
_DECLINES_RE = re.compile(r"\bkhong (?:duoc )?dung\b(?! duoc)(?P<rest>.*)$")
# "cho/ở <whom>", "để <what for>", "trong thời kỳ …"; not "trong phác đồ …" or "khi …" (a circumstance).
_DECLINED_TARGET_RE = re.compile(r"^\s*(?:(?!lieu\b|qua\b)\S+\s+){0,2}?(?:cho|o|de|trong thoi ky|trong \d|trong (?:ba|3|sau|6) thang)\b")
_ITEM_SPLIT_RE = re.compile(r",|;|/|\.|\bhoac\b|\bva\b|\bnhu\b|\(|\)|:")
# "… cho trẻ sinh non và trẻ sơ sinh có tăng bilirubin": each population its own clause (as limits.py reads them).
_NEW_POPULATION_RE = re.compile(r"\s+và\s+(?=(?:phụ nữ|trẻ|người)\b)", re.IGNORECASE)
# "truyền tĩnh mạch dung dịch chứa calci": a product given with the drug, named after what it contains.
_INFUSION_RE = re.compile(r"\bdung dich chua (\w+)")
_ALCOHOL_RE = re.compile(r"\buong ruou\b")
# Parts of a clause that are not what it contraindicates: reasons "(nguy cơ …)", "do nguy cơ …", exceptions
# "trừ khi …" (the opposite of the contraindication) and causes ("nhiễm toan ceton do đái tháo đường").
_EXCEPTION_RE = re.compile(r"\b(?:trừ khi|trừ trường hợp|ngoại trừ|trừ)\b.*$", re.IGNORECASE)
_ASIDE_RES = (  # on lower-cased text with its diacritics: "do" (because of) is not "độ" (degree)
    re.compile(r"\((?:do |vì |nguy cơ|thuốc gây|gây |trừ |làm |tác dụng|cần )[^)]*\)?"),
    re.compile(r"\b(?:trừ khi|trừ trường hợp|ngoại trừ|trừ)\b.*$"),
    re.compile(r",?\s*\b(?:do nguy cơ|vì nguy cơ|vì)\b.*$"),
    re.compile(r"\bdo\s+(?!tim\b|thuốc\b)\w+(?:\s+\w+){0,4}"),
    re.compile(r"\b(?:tiền hôn mê|hôn mê) đái tháo đường\b"),  # a coma of diabetes, not diabetes as such
)
# A label at the head of a clause limiting it to one form or route ("Dạng tiêm: …", "Thuốc nhỏ mắt: …").
_FORM_HEAD_RE = re.compile(
    r"^\s*(?P<form>dang tiem|thuoc tiem|duong tiem|tiem tinh mach|truyen tinh mach|dang tiem truyen|thuoc nho mat"
    r"|thuoc dan|dang giai phong[^:]*|dung dich[^:]*|che pham[^:]*|lo bot[^:]*|vien[^:]*|insulin[^:]*)\s*:")
_ROUTE_WORDS = frozenset({"duong", "dang", "tiem", "uong", "gel", "bo"})
_NOT_A_NAME = frozenset({"thuoc", "cac", "khac", "nhung", "mot", "so", "duong", "tiem", "uong", "lieu", "dang"})


@dataclass(frozen=True)
class BookVocabulary:
    """What the parser recognises in a sentence: conditions (the lexicon) and the book's drug names."""

    lexicon: ConditionLexicon
    drug_names: Mapping[str, str] = field(default_factory=dict)  # folded name/alias → drug_id
    drug_atc: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # drug_id → ATC codes

    def drugs_named(self, text: str) -> list[str]:
        """Drug ids of the book named in ``text`` (whole words, folded), in name order."""
        spaced = " " + " ".join(re.findall(r"\w+", fold(text))) + " "
        found = [drug_id for name, drug_id in self.drug_names.items() if f" {name} " in spaced]
        return list(dict.fromkeys(found))


def vocabulary(lexicon: ConditionLexicon, drugs: Iterable[tuple[str, str, tuple[str, ...], tuple[str, ...]]]) -> BookVocabulary:
    """A vocabulary from ``(drug_id, display_name, aliases, atc_codes)`` of the book's drugs."""
    names: dict[str, str] = {}
    atc: dict[str, tuple[str, ...]] = {}
    for drug_id, display, aliases, codes in drugs:
        atc[drug_id] = codes
        for name in (display, drug_id.replace("_", " "), *aliases):
            folded = " ".join(re.findall(r"\w+", fold(name)))
            if len(folded) >= 4:
                names.setdefault(folded, drug_id)
    return BookVocabulary(lexicon, names, atc)


# --- sentences to read ---------------------------------------------------------------------------


def contraindication_sentences(text: str) -> list[str]:
    """The sentences of a Chống chỉ định chunk (each line of the book's list is one or more)."""
    return [s for line in text.splitlines() for s in split_sentences(line) if s.strip()]


def records_of_chunk(chunk: Chunk, vocab: BookVocabulary) -> tuple[ContraindicationRecord, ...]:
    """Every record the chunk's sentences state (see the module docstring for which sentences)."""
    if chunk.section_key == CONTRAINDICATION_SECTION:
        return tuple(r for s in contraindication_sentences(chunk.text)
                     for r in parse_sentence(chunk.drug_id, chunk.section_key, s, vocab))
    records: list[ContraindicationRecord] = []
    if chunk.section_key == DOSING_SECTION:
        records += _declined_groups(chunk, vocab)
    if chunk.section_key in DECLINING_SECTIONS:
        limited = {r.sentence for r in records}
        for sentence in contraindication_sentences(chunk.text):
            target = declined_target(sentence)
            if target is not None and sentence not in limited:
                found = parse_sentence(chunk.drug_id, chunk.section_key, sentence, vocab, focus=target)
                if not found and _names_section_population(chunk.section_key, target):
                    found = [ContraindicationRecord(chunk.drug_id, chunk.section_key, sentence)]
                records += [_in_section_population(r) for r in found]
    return tuple(records)


def _declined_groups(chunk: Chunk, vocab: BookVocabulary) -> list[ContraindicationRecord]:
    """The age and weight groups the dosing section declines (the chunker's limits), each a record; a sentence
    that declines preterm or jaundiced newborns is read whole, so that a term baby is not taken for one."""
    records: list[ContraindicationRecord] = []
    for sentence in dict.fromkeys(limit.sentence for limit in chunk.population_limits):
        if _PRETERM_RE.search(fold(sentence)) or _JAUNDICE_RE.search(fold(sentence)):
            records += parse_sentence(chunk.drug_id, chunk.section_key, sentence, vocab,
                                      focus=declined_target(sentence))
            continue
        records += [ContraindicationRecord(chunk.drug_id, chunk.section_key, sentence, population=limit)
                    for limit in chunk.population_limits if limit.sentence == sentence]
    return records


_SECTION_POPULATION = {"thoi_ky_mang_thai": "pregnancy", "thoi_ky_cho_con_bu": "breastfeeding"}


_SECTION_POPULATION_RE = {"thoi_ky_mang_thai": re.compile(r"\b(?:mang thai|co thai|thai ky|phu nu)\b"),
                          "thoi_ky_cho_con_bu": re.compile(r"\b(?:cho con bu|bu me|phu nu)\b")}


def _names_section_population(section_key: str, target: str) -> bool:
    """"Không dùng thuốc trong thời kỳ mang thai" in the pregnancy section: pregnant women as such."""
    pattern = _SECTION_POPULATION_RE.get(section_key)
    return bool(pattern and pattern.search(fold(target)))


def _in_section_population(record: ContraindicationRecord) -> ContraindicationRecord:
    """A sentence of the pregnancy (breastfeeding) section is about pregnant (breastfeeding) women."""
    kind = _SECTION_POPULATION.get(record.section_key)
    if kind is None or record.population is not None:
        return record
    return replace(record, population=PopulationLimit(kind, record.sentence))


def declined_target(sentence: str) -> str | None:
    """The part of a "không dùng …" sentence that says for whom or for what, or None.

    >>> declined_target("Không dùng ceftriaxon cho trẻ sinh non.")
    'không dùng ceftriaxon cho trẻ sinh non.'
    >>> declined_target("Lậu, khi không dùng được ceftriaxon.") is None
    True
    """
    if not _DECLINES_RE.search(fold(sentence)):
        return None
    clean = normalize(sentence)
    folded = fold(clean)
    match = _DECLINES_RE.search(folded)
    if match is None:
        return None
    head = folded[: match.start()].rstrip()
    if _DECLINED_TARGET_RE.match(match["rest"]):
        start = match.start()
        end = _clause_end(folded, match.end("rest") - len(match["rest"]))
        return clean[start:end]
    if head.endswith(":") and re.match(r"\s*(?:$|[.;,]|vi\b|do\b)", match["rest"]):
        # "Trẻ em dưới 16 tuổi bị sốt do virus: không dùng vì …" declines the head as a whole
        start = head.rfind(". ") + 1 if ". " in head else 0
        return clean[start: match.end()]
    return None


def _clause_end(folded: str, start: int) -> int:
    stop = re.search(r"[.;]\s|[.;]$", folded[start:])
    return start + stop.end() if stop else len(folded)


# --- one sentence into records -------------------------------------------------------------------


def parse_sentence(
    drug_id: str, section_key: str, sentence: str, vocab: BookVocabulary, focus: str | None = None,
) -> list[ContraindicationRecord]:
    """The records one sentence states; ``focus`` narrows reading to part of it (the sentence is still quoted).

    Each clause (cut at ";" outside parentheses) is read on its own: population, allergy, purpose and
    co-medication belong to the clause; numbers belong to the condition named last before them.
    """
    records: list[ContraindicationRecord] = []
    text = focus if focus is not None else sentence
    head = _FORM_HEAD_RE.match(fold(text))
    form = normalize(text)[: len(head["form"])].strip().lower() if head else None
    for clause in (part for c in _clauses(text) for part in _NEW_POPULATION_RE.split(c) if part.strip()):
        base = ContraindicationRecord(drug_id, section_key, sentence, form=form)
        records += _clause_records(base, clause, vocab)
    return list(dict.fromkeys(records))


def _clauses(text: str, separators: str = ";") -> list[str]:
    """``text`` cut at ``separators`` outside parentheses."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")" and depth > 0
        if ch in separators and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in parts if p.strip()]


def without_asides(clause: str) -> str:
    """The clause without its reasons, exceptions and causes (what it contraindicates, and nothing else).

    >>> without_asides("Nhiễm toan ceton do đái tháo đường, tiền hôn mê")
    'Nhiễm toan ceton , tiền hôn mê'
    """
    lowered = normalize(clause).lower()
    if len(lowered) != len(clause):
        return clause
    keep = list(clause)
    for pattern in _ASIDE_RES:
        for match in pattern.finditer(lowered):
            keep[match.start():match.end()] = [" "] * (match.end() - match.start())
    return re.sub(r"\s{2,}", " ", "".join(keep)).strip()


def _clause_records(base: ContraindicationRecord, clause: str, vocab: BookVocabulary) -> list[ContraindicationRecord]:
    # A past reaction "do aminoglycosid" names its cause: read allergies before causes are set aside.
    allergy_text = _EXCEPTION_RE.sub("", clause)
    hypersensitivity = _hypersensitivity(base.drug_id, allergy_text, fold(allergy_text), vocab)
    clause = without_asides(clause)
    folded = fold(clause)
    limits = [replace(limit, sentence=base.sentence) for limit in parse_limits(clause)]
    if _PRETERM_RE.search(folded):  # "trẻ sinh non đến tuổi điều chỉnh 41 tuần": prematurity, not 28 days of age
        limits = [limit for limit in limits if not (limit.kind == "age" and limit.max_age_years == NEWBORN_YEARS)]
    neonatal = any(limit.kind == "age" and (limit.max_age_years or 99) <= 1 for limit in limits)
    shared = replace(
        base,
        hypersensitivity=hypersensitivity,
        purposes=_purposes(clause),
        co_medications=_co_medications(base.drug_id, clause, folded, vocab),
        preterm=True if _PRETERM_RE.search(folded) else (False if _TERM_RE.search(folded) else None),
        jaundice=True if neonatal and _JAUNDICE_RE.search(folded) else None,
    )
    if shared.hypersensitivity and _SEVERE_REACTION_RE.search(normalize(clause).lower()):
        shared = replace(shared, severity="nặng")
    # In Chống chỉ định, "dùng … để điều trị chấn thương sọ não" is against treating that condition with it;
    # elsewhere ("không dùng montelukast để điều trị cơn hen cấp") it is about the use, not the patient.
    keep_treated = bool(limits) or (base.section_key == CONTRAINDICATION_SECTION and not shared.purposes)
    conditions = _condition_records(clause, vocab, shared, skip_jaundice=shared.jaundice is not None,
                                    has_population=keep_treated)
    has_own = _has_constraint(shared) or bool(limits)
    if conditions and _HYPERSENSITIVITY_RE.search(folded):
        conditions = []  # "Quá mẫn với …": what follows names drugs, not conditions
    if not conditions:
        thresholds = tuple(read_thresholds(clause))
        conditions = [replace(shared, thresholds=thresholds)] if has_own or thresholds else []
    elif shared.jaundice:
        conditions.append(shared)
    if not limits:
        return conditions
    return [replace(record, population=limit) for record in conditions or [shared] for limit in limits]


def _has_constraint(record: ContraindicationRecord) -> bool:
    return bool(record.conditions or record.thresholds or record.population or record.hypersensitivity
                or record.purposes or record.co_medications or record.preterm is not None
                or record.jaundice is not None)


def _condition_records(
    clause: str, vocab: BookVocabulary, shared: ContraindicationRecord, skip_jaundice: bool, has_population: bool,
) -> list[ContraindicationRecord]:
    """One record per condition named, each with the numbers written after it in its part of the clause.

    "X kèm Y" / "X có tiền sử Y" is one record: Y qualifies X (kept in ``severity``: "kèm hội chứng WPW").
    A condition after "để" is what the drug would treat, not what the patient has: kept only beside a
    population ("Phụ nữ có thai dùng để điều trị rối loạn lưỡng cực"), else dropped ("Không dùng montelukast
    để điều trị cơn hen cấp" says nothing against asthmatics).
    """
    records: list[ContraindicationRecord] = []
    after_purpose = False  # "để" seen in an earlier part of the clause
    for part in _clauses(clause, ","):
        raw = [w.lower() for w in word_forms(part)[0]]
        mentions = [m for m in vocab.lexicon.find(part)
                    if _kept(m, raw, part, shared, skip_jaundice, has_population, after_purpose)]
        after_purpose = after_purpose or "để" in raw
        thresholds = tuple(read_thresholds(part)) if mentions else ()
        index = 0
        while index < len(mentions):
            mention = mentions[index]
            label, severity = condition_label(mention, vocab.lexicon)
            severity = severity or _severity_after(raw, mention.end)
            qualifier = _qualifier(raw, mention, mentions[index + 1] if index + 1 < len(mentions) else None)
            if qualifier:
                severity = " ".join(filter(None, (severity, qualifier)))
                index += 1
            own = thresholds if index == len(mentions) - 1 else ()
            records.append(replace(shared, conditions=(label,), severity=severity or shared.severity, thresholds=own,
                                   jaundice=None))
            index += 1
    return records


def _severity_after(raw: list[str], end: int) -> str | None:
    """A severity written right after a condition's name ("loét dạ dày tá tràng đang tiến triển")."""
    following = " ".join(raw[end: end + 4])
    for word in sorted(_SEVERITY_WORDS, key=len, reverse=True):
        if following == word or following.startswith(word + " "):
            return word
    return None


def _qualifier(raw: list[str], mention: ConditionMention, following: ConditionMention | None) -> str | None:
    """"kèm hội chứng wpw" when the next condition is joined to this one by "kèm"/"có" (not "hoặc"/"và")."""
    if following is None:
        return None
    between = raw[mention.end: following.start]
    if not _QUALIFIER_WORDS & set(between):
        return None
    offset = next(i for i, word in enumerate(between) if word in _QUALIFIER_WORDS)
    if {"hoặc", "và", "hay"} & set(between[offset:]):  # "X kèm A hoặc B": not one qualified condition
        return None
    return " ".join(raw[mention.end + offset: following.end])


_QUALIFIER_WORDS = frozenset({"kèm", "có"})


def _kept(mention: ConditionMention, raw: list[str], part: str, shared: ContraindicationRecord,
          skip_jaundice: bool, has_population: bool, after_purpose: bool) -> bool:
    """Whether a condition named in the clause is one the patient would have (see ``_condition_records``)."""
    label = fold(mention.condition.label)
    if not mention.condition.patient_condition:
        return False
    if (after_purpose or "để" in raw[: mention.start]) and not has_population:
        return False
    if skip_jaundice and _JAUNDICE_LABEL_RE.search(label):
        return False
    if shared.preterm is not None and (_PRETERM_RE.search(label) or _TERM_RE.search(label)):
        return False
    return not shared.co_medications or _in_patient_part(part, mention)


def _in_patient_part(part: str, mention: ConditionMention) -> bool:
    """In a co-medication clause, a condition counts only where the patient is described ("ở người suy thận"),
    not where the other drugs are ("các thuốc có thể gây xoắn đỉnh")."""
    folded = fold(part)
    trigger = _CO_MEDICATION_RE.search(folded)
    person = re.search(r"\b(?:o nguoi|o benh nhan|nguoi)\b", folded)
    words_before = len(folded[: trigger.start()].split()) if trigger else 0
    if mention.start < words_before:
        return True
    return bool(person and (not trigger or person.start() > trigger.start())
                and mention.start >= len(folded[: person.start()].split()))


def condition_label(mention: ConditionMention, lexicon: ConditionLexicon) -> tuple[str, str | None]:
    """The broad label and the severity word of a condition the book names ("suy thận nặng" → "suy thận", "nặng")."""
    condition = mention.condition
    if condition.broader:
        rest = condition.label[len(condition.broader):].strip() if condition.label.startswith(condition.broader) else ""
        return condition.broader, rest or condition.label
    for word in sorted(_SEVERITY_WORDS, key=len, reverse=True):
        if condition.label.endswith(" " + word):
            core = condition.label[: -len(word) - 1].strip()
            broad = lexicon.find(core)
            if len(broad) == 1 and fold(broad[0].surface) == fold(core):
                return broad[0].condition.label, word
    return condition.label, None


def _hypersensitivity(drug_id: str, clause: str, folded: str, vocab: BookVocabulary) -> tuple[str, ...]:
    """"self" and the class ids (and book drug ids) a clause says a past reaction to rules out."""
    if not (_HYPERSENSITIVITY_RE.search(folded) or _HISTORY_WITH_DRUG_RE.search(folded)):
        return ()
    named = vocab.drugs_named(clause)
    if not _HYPERSENSITIVITY_RE.search(folded) and not named and not classes_named(clause):
        return ()
    found: list[str] = []
    classes = classes_named(clause)
    # "Mẫn cảm với valproat." in its own monograph names the drug by a word the book's names may lack.
    if drug_id in named or _SELF_WORDS_RE.search(folded) or not (set(named) - {drug_id} or classes):
        found.append("self")
    found += classes
    for other in named:
        if other != drug_id:
            found += [other, *sorted(classes_of(vocab.drug_atc.get(other, ())))]
    return tuple(dict.fromkeys(found))


def _purposes(clause: str) -> tuple[str, ...]:
    """Purpose ids named after "để" ("để điều trị béo phì hoặc giảm cân" → weight_loss); "dễ" is not "để"."""
    match = _PURPOSE_RE.search(normalize(clause).lower())
    return tuple(purposes_named(match["rest"])) if match else ()


def _co_medications(drug_id: str, clause: str, folded: str, vocab: BookVocabulary) -> tuple[str, ...]:
    """Drugs of the book, classes, and other products named as taken together with this one."""
    match = _CO_MEDICATION_RE.search(folded)
    infusion = _INFUSION_RE.search(folded)
    if match is None:
        return ("rượu",) if _ALCOHOL_RE.search(folded) else ((infusion.group(1),) if infusion else ())
    rest_start = match.start("rest")
    rest = clause[rest_start:] if len(clause) == len(folded) else normalize(clause)[rest_start:]
    found = [d for d in vocab.drugs_named(rest) if d != drug_id]
    found += classes_named(rest)
    for item in _ITEM_SPLIT_RE.split(fold(rest)):
        words = item.split()
        if len(words) > 1 and words[1] in _ROUTE_WORDS:  # "miconazol đường toàn thân"
            words = words[:1]
        if len(words) == 1 and len(words[0]) >= 5 and words[0].isalpha() and words[0] not in _NOT_A_NAME:
            name = words[0]
            if name not in vocab.drug_names and not any(c for c in classes_named(name)):
                found.append(name)
    return tuple(dict.fromkeys(found))


def with_records(chunks: list[Chunk]) -> list[Chunk]:
    """The chunks with their records set, read with the condition lexicon of these same chunks."""
    from duocthu.understanding.conditions import LEXICON_SECTIONS, build_lexicon

    lexicon = build_lexicon([(c.section_key, c.text) for c in chunks
                             if c.section_key in LEXICON_SECTIONS and c.chunk_kind == ChunkKind.PROSE])
    drugs = {c.drug_id: (c.drug_id, c.display_name, c.aliases, c.atc_codes) for c in chunks}
    vocab = vocabulary(lexicon, drugs.values())
    return [replace(c, records=records_of_chunk(c, vocab)) if c.chunk_kind == ChunkKind.PROSE else c for c in chunks]


# --- the parse report ----------------------------------------------------------------------------


@dataclass(frozen=True)
class DrugRecords:
    """One drug's records and the Chống chỉ định sentences that yielded none."""

    drug_id: str
    records: tuple[ContraindicationRecord, ...]
    unparsed: tuple[str, ...]
    sentences: int  # Chống chỉ định sentences read


def parse_report(chunks: Iterable[Chunk]) -> list[DrugRecords]:
    """Per drug (in book order): its records and the Chống chỉ định sentences not parsed into any record."""
    by_drug: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        by_drug.setdefault(chunk.drug_id, []).append(chunk)
    report = []
    for drug_id, own in by_drug.items():
        records = tuple(r for c in own for r in c.records)
        parsed = {r.sentence for r in records}
        sentences = [s for c in own if c.section_key == CONTRAINDICATION_SECTION
                     for s in contraindication_sentences(c.text)]
        unparsed = tuple(s for s in sentences if s not in parsed)
        report.append(DrugRecords(drug_id, records, unparsed, len(sentences)))
    return report


def format_report(report: list[DrugRecords], unparsed_only: bool = False) -> str:
    """The parse report as text: a summary line, then per drug its records and its sentences not read."""
    sentences = sum(r.sentences for r in report)
    unparsed = sum(len(r.unparsed) for r in report)
    share = 100.0 * (sentences - unparsed) / sentences if sentences else 100.0
    lines = [f"Chống chỉ định: {sentences} câu, {sentences - unparsed} đọc được thành dữ kiện ({share:.1f} %), "
             f"{unparsed} chưa đọc được; {sum(len(r.records) for r in report)} bản ghi."]
    for drug in report:
        if unparsed_only and not drug.unparsed:
            continue
        lines.append(f"\n## {drug.drug_id} — {len(drug.records)} bản ghi, {len(drug.unparsed)} câu chưa đọc được")
        if not unparsed_only:
            lines += [f"  [{r.section_key}] {describe(r)}  ← {r.sentence}" for r in drug.records]
        lines += [f"  CHƯA ĐỌC: {sentence}" for sentence in drug.unparsed]
    return "\n".join(lines)


def describe(record: ContraindicationRecord) -> str:
    """One line saying what a record holds ("suy thận (nặng); CrCl < 10 ml/phút")."""
    parts: list[str] = []
    if record.conditions:
        parts.append(", ".join(record.conditions) + (f" ({record.severity})" if record.severity else ""))
    parts += [_threshold_text(t) for t in record.thresholds]
    if record.population is not None:
        parts.append(_population_text(record.population))
    if record.preterm is not None:
        parts.append("sinh non" if record.preterm else "sinh đủ tháng")
    if record.jaundice:
        parts.append("vàng da sơ sinh")
    if record.hypersensitivity:
        severity = f" ({record.severity})" if record.severity and not record.conditions else ""
        parts.append("dị ứng: " + ", ".join(_class_text(h) for h in record.hypersensitivity) + severity)
    if record.purposes:
        parts.append("mục đích: " + ", ".join(PURPOSE_NAMES.get(p, (p,))[0] for p in record.purposes))
    if record.co_medications:
        parts.append("dùng cùng: " + ", ".join(_class_text(m) for m in record.co_medications))
    if record.form:
        parts.append(f"chỉ với {record.form}")
    return "; ".join(parts)


def _class_text(item: str) -> str:
    """How a record's allergy or co-medication item reads: a class by its first name, "self" as "chính thuốc này"."""
    if item == "self":
        return "chính thuốc này"
    return CLASS_NAMES[item][0] if item in CLASS_NAMES else item


def _threshold_text(threshold: Threshold) -> str:
    value = f"{threshold.value:g}".replace(".", ",")
    name = MEASURE_NAMES.get(threshold.quantity, (threshold.quantity,))[0]
    comparator = {"<=": "≤", ">=": "≥"}.get(threshold.comparator, threshold.comparator)
    return f"{name} {comparator} {value} {threshold.unit}".rstrip()


def _population_text(limit: PopulationLimit) -> str:
    if limit.kind == "age":
        if limit.max_age_years is not None:
            text = f"tuổi < {age_text(limit.max_age_years)}"
        else:
            text = f"tuổi ≥ {age_text(limit.min_age_years or 0)}"
    elif limit.kind == "weight":
        text = f"cân nặng < {limit.max_weight_kg:g} kg"
    elif limit.kind == "pregnancy":
        text = "mang thai" + (" (3 tháng " + ", ".join(str(t) for t in limit.trimesters) + ")" if limit.trimesters else "")
    else:
        text = "cho con bú"
    if limit.route:
        text += f", đường {limit.route}"
    return text + (" — có điều kiện" if limit.conditional else "")
