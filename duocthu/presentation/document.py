"""A reply as a document: notices, the safety block, the quoted claims and one source card per section.

Every quote, citation and source comes from the reply's structure (``safety``, ``claims``,
``evidence``, ``notices``). The reply carries no field for the agent's own connecting sentences
(the heading "Theo Dược thư … mục …", "Bạn hỏi cho: …", "không thấy … — không có nghĩa là an toàn",
a clarify question, a refusal), so :func:`build_document` walks ``answer`` line by line only to keep
those sentences in their place: a line that a structured part already shows is skipped, and any
other line is kept as text — nothing the agent said is dropped, whatever its wording.

Citation numbers are the cards' numbers: one card per (drug, section), its parts merged.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from duocthu.agent.compose import KIND_TITLES, SAFETY_HEADING, safety_title
from duocthu.agent.messages import DEMO_NOTICE
from duocthu.agent.reply import AgentReply, ClaimView, EvidenceView, SafetyView

VERIFY_PDF_PREFIX = "⚠ Cần đối chiếu bản in"
SOURCES_LINE = "Nguồn:"
RETRIEVAL_ONLY_LEAD = (
    "Các đoạn Dược thư (bản demo) tìm được, trích nguyên văn trong các thẻ nguồn dưới đây. "
    "Không có câu nào được tạo ra: hãy tự đọc và đối chiếu."
)
_KIND_ORDER = [kind.value for kind in KIND_TITLES]
PAGES = re.compile(r"tr\.\s*(\d+)(?:\s*[–-]\s*(\d+))?")
_GUILLEMETS = re.compile(r"«(.+)»")


@dataclass(frozen=True)
class QuoteItem:
    """One quoted sentence of the book, with the line it sits under and its source cards."""

    text: str
    heading: str | None
    cards: tuple[int, ...]


@dataclass(frozen=True)
class TableItem:
    """Consecutive table rows quoted from the book, shown as one table."""

    header: tuple[str, ...] | None
    rows: tuple[tuple[str, ...], ...]
    cards: tuple[int, ...]


@dataclass(frozen=True)
class SafetyItem:
    kind: str  # "Chống chỉ định", "Thận trọng", …
    drug: str
    matched: str  # the patient fact it matched
    quote: str
    applies: bool  # it covers this patient for certain
    cards: tuple[int, ...]


@dataclass(frozen=True)
class Notice:
    text: str


@dataclass(frozen=True)
class VerifyPdf:
    """The evidence holds a table not yet checked against the printed page."""

    tables: tuple[str, ...]  # "Gentamicin — Liều lượng và cách dùng"
    cards: tuple[int, ...]


@dataclass(frozen=True)
class SafetyBlock:
    title: str  # "⚠ Lưu ý cho trường hợp này (3 tuổi, mang thai)"
    items: tuple[SafetyItem, ...]
    notes: tuple[str, ...]  # what the book does not say for this patient ("không thấy …")


@dataclass(frozen=True)
class Prose:
    text: str
    bullet: bool = False


@dataclass(frozen=True)
class QuoteList:
    group: str | None
    items: tuple[QuoteItem | TableItem, ...]


Block = Notice | VerifyPdf | SafetyBlock | Prose | QuoteList


@dataclass(frozen=True)
class CardPart:
    doc_id: str
    part_index: int
    text: str
    quotes: tuple[str, ...]  # sentences of this part the answer quotes (highlighted)
    cited: bool
    needs_pdf: bool


@dataclass(frozen=True)
class SourceCard:
    number: int
    drug_id: str
    drug_name: str
    section_title: str
    parts: tuple[CardPart, ...]
    source_refs: tuple[str, ...]
    section_key: str = ""

    @property
    def needs_pdf(self) -> bool:
        return any(p.needs_pdf for p in self.parts)

    @property
    def part_label(self) -> str:
        numbers = [str(p.part_index + 1) for p in self.parts]
        return ("phần " if len(numbers) == 1 else "các phần ") + ", ".join(numbers)

    @property
    def pages(self) -> str:
        """"tr. 106–110" from the source references (the references themselves when none says a page)."""
        found = [m.group(0) for ref in self.source_refs for m in PAGES.finditer(ref)]
        return "; ".join(dict.fromkeys(found)) or "; ".join(self.source_refs)

    @property
    def first_page(self) -> int | None:
        for ref in self.source_refs:
            match = PAGES.search(ref)
            if match:
                return int(match.group(1))
        return None


@dataclass(frozen=True)
class AnswerDocument:
    outcome: str
    blocks: tuple[Block, ...]
    cards: tuple[SourceCard, ...]
    generated: bool
    quotes_checked: bool

    def card(self, number: int) -> SourceCard:
        return self.cards[number - 1]


# -- source cards ------------------------------------------------------------------------------------


@dataclass
class _CardBook:
    """Numbers cards in the order the document first cites them; one card per (drug, section)."""

    evidence: Sequence[EvidenceView]
    safety: Sequence[SafetyView]
    names: Mapping[str, str]
    _keys: list[tuple[str, str]] = field(default_factory=list)
    _docs: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    _quotes: dict[str, list[str]] = field(default_factory=dict)
    _cited: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self._evidence = {e.doc_id: e for e in self.evidence}
        self._safety = {s.doc_id: s for s in self.safety}

    def _key(self, doc_id: str) -> tuple[str, str] | None:
        if doc_id in self._evidence:
            e = self._evidence[doc_id]
            return e.drug_id, e.section_title
        if doc_id in self._safety:
            s = self._safety[doc_id]
            return s.drug_id, s.section_title
        return None

    def cite(self, doc_ids: Sequence[str], quote: str | None = None, cited: bool = True) -> tuple[int, ...]:
        numbers: list[int] = []
        for doc_id in doc_ids:
            key = self._key(doc_id)
            if key is None:
                continue
            if key not in self._docs:
                self._keys.append(key)
                self._docs[key] = []
            if doc_id not in self._docs[key]:
                self._docs[key].append(doc_id)
            if cited:
                self._cited.add(doc_id)
            if quote:
                self._quotes.setdefault(doc_id, []).append(quote)
            number = self._keys.index(key) + 1
            if number not in numbers:
                numbers.append(number)
        return tuple(numbers)

    def cards(self) -> tuple[SourceCard, ...]:
        for item in self.evidence:  # every evidence chunk gets a card, cited or not
            self.cite([item.doc_id], cited=False)
        cards = []
        for number, key in enumerate(self._keys, start=1):
            parts, refs = [], []
            for doc_id in self._docs[key]:
                e = self._evidence.get(doc_id)
                s = self._safety.get(doc_id)
                if e is not None:
                    parts.append(CardPart(doc_id, e.part_index, e.text, tuple(dict.fromkeys(self._quotes.get(doc_id, ()))),
                                          doc_id in self._cited, e.requires_visual_check))
                    refs += e.source_refs
                elif s is not None:  # a safety quote whose chunk is not in the evidence: the quote is all we have
                    parts.append(CardPart(doc_id, _part_of(doc_id), s.quote, (s.quote,), True, s.requires_visual_check))
                    refs += s.source_refs
            parts.sort(key=lambda p: p.part_index)
            drug_id, section = key
            first = self._evidence.get(self._docs[key][0])
            section_key = first.section_key if first else _section_of(self._docs[key][0])
            cards.append(SourceCard(number, drug_id, self.names.get(drug_id, drug_id), section, tuple(parts),
                                    tuple(dict.fromkeys(refs)), section_key))
        return tuple(cards)


def _section_of(doc_id: str) -> str:
    pieces = doc_id.split("__")
    return pieces[1] if len(pieces) == 3 else ""


def _part_of(doc_id: str) -> int:
    tail = doc_id.rsplit("__", 1)[-1]
    return int(tail) if tail.isdigit() else 0


def quoted_sentence(claim_text: str) -> str:
    """The book's sentence inside a claim ("Ibuprofen: «…»" in a list answer → "…")."""
    match = _GUILLEMETS.search(claim_text)
    return match.group(1) if match else claim_text


def is_table_row(text: str) -> bool:
    stripped = text.strip()
    return len(stripped) > 1 and stripped.startswith("|") and stripped.endswith("|")


def table_cells(row: str) -> tuple[str, ...]:
    return tuple(cell.strip() for cell in row.strip().strip("|").split("|"))


def is_separator_row(row: str) -> bool:
    return all(re.fullmatch(r":?-{2,}:?", cell) for cell in table_cells(row))


def rows_to_table(rows: Sequence[str]) -> tuple[tuple[str, ...] | None, tuple[tuple[str, ...], ...]]:
    """(header, body rows) of Markdown table lines; the header only when a separator row follows it."""
    header = table_cells(rows[0]) if len(rows) > 1 and is_separator_row(rows[1]) else None
    body = [table_cells(r) for r in (rows[2:] if header else rows) if not is_separator_row(r)]
    return header, tuple(body)


# -- the document ------------------------------------------------------------------------------------


@dataclass
class _Builder:
    book: _CardBook
    blocks: list[Block | list] = field(default_factory=list)

    def quote(self, claim: ClaimView) -> None:
        cards = self.book.cite(claim.evidence_ids, quoted_sentence(claim.text))
        last = self.blocks[-1] if self.blocks else None
        if not (isinstance(last, list) and last[0] == claim.group):
            last = [claim.group]
            self.blocks.append(last)
        if is_table_row(claim.text):
            previous = last[-1] if len(last) > 1 else None
            if isinstance(previous, dict):
                previous["rows"].append(claim.text)
                previous["cards"] = tuple(dict.fromkeys((*previous["cards"], *cards)))
            else:
                last.append({"rows": [claim.text], "cards": cards})
        else:
            last.append(QuoteItem(claim.text, claim.heading, cards))

    def freeze(self) -> tuple[Block, ...]:
        frozen: list[Block] = []
        for block in self.blocks:
            if isinstance(block, list):
                items: list[QuoteItem | TableItem] = []
                for item in block[1:]:
                    if isinstance(item, dict):
                        header, rows = rows_to_table(item["rows"])
                        items.append(TableItem(header, rows, item["cards"]))
                    else:
                        items.append(item)
                frozen.append(QuoteList(block[0], tuple(items)))
            else:
                frozen.append(block)
        return tuple(frozen)


def _safety_items(safety: Sequence[SafetyView], book: _CardBook, names: Mapping[str, str]) -> tuple[SafetyItem, ...]:
    drugs = list(dict.fromkeys(s.drug_id for s in safety))
    ordered = sorted(safety, key=lambda s: (drugs.index(s.drug_id), not s.applies,
                                            _KIND_ORDER.index(s.kind) if s.kind in _KIND_ORDER else 99))
    return tuple(
        SafetyItem(safety_title(s.kind, s.section_title), names.get(s.drug_id, s.drug_id), s.matched, s.quote, s.applies,
                   book.cite([s.doc_id], s.quote))
        for s in ordered
    )


def _verify_pdf(evidence: Sequence[EvidenceView], book: _CardBook, names: Mapping[str, str]) -> VerifyPdf:
    flagged = [e for e in evidence if e.requires_visual_check]
    tables = tuple(dict.fromkeys(f"{names.get(e.drug_id, e.drug_id)} — {e.section_title}" for e in flagged))
    return VerifyPdf(tables, book.cite([e.doc_id for e in flagged], cited=False))


def _claim_line(line: str, claim: ClaimView) -> bool:
    return line.startswith("- ") and claim.text in line


def build_document(reply: AgentReply, names: Mapping[str, str] | None = None) -> AnswerDocument:
    """The reply laid out for reading (see the module docstring for what comes from where)."""
    names = names or {}
    book = _CardBook(reply.evidence, reply.safety, names)
    out = _Builder(book)
    if not reply.generated and reply.evidence:
        out.blocks += [Notice(n) for n in reply.notices]
        out.blocks.append(Prose(RETRIEVAL_ONLY_LEAD))
        for e in reply.evidence:
            book.cite([e.doc_id], cited=True)
        return AnswerDocument(reply.outcome, out.freeze(), book.cards(), False, False)

    # Cards are numbered in reading order: the PDF warning and the safety block come first.
    verify = _verify_pdf(reply.evidence, book, names) if reply.outcome == "verify_pdf" else None
    safety_items = _safety_items(reply.safety, book, names)
    claims = list(reply.claims)
    groups = {f"{c.group}:" for c in claims if c.group}
    safety_quotes = [f"«{s.quote}»" for s in reply.safety]
    next_claim = 0
    shown_notices: set[str] = set()
    safety_at: int | None = None
    safety_title = SAFETY_HEADING
    notes: list[str] = []
    verify_placed = False
    in_safety = False
    for raw in reply.answer.split("\n"):
        line = raw.strip()
        if not line:
            in_safety = False
            continue
        if line == SOURCES_LINE:
            break  # the source list: shown as the cards
        line = line.replace(DEMO_NOTICE, "").strip()  # the page shows the notice once, as a banner
        if not line:
            continue
        if line in reply.notices:
            if line not in shown_notices:
                out.blocks.append(Notice(line))
                shown_notices.add(line)
            continue
        if line.startswith(VERIFY_PDF_PREFIX):
            if not verify_placed:
                out.blocks.append(verify or _verify_pdf(reply.evidence, book, names))
                verify_placed = True
            continue
        if line.startswith(SAFETY_HEADING) and safety_at is None:
            safety_at, safety_title, in_safety = len(out.blocks), line.rstrip(":"), True
            out.blocks.append(Prose(""))  # the place of the safety block
            continue
        if in_safety and line.startswith("- "):
            if not any(q in line for q in safety_quotes):
                notes.append(line[2:])
            continue
        in_safety = False
        if next_claim < len(claims) and _claim_line(line, claims[next_claim]):
            out.quote(claims[next_claim])
            next_claim += 1
            continue
        if line in groups:
            continue  # a claim group's heading: the quote list shows it
        out.blocks.append(Prose(line[2:] if line.startswith("- ") else line, bullet=line.startswith("- ")))

    for claim in claims[next_claim:]:  # claims whose lines were not recognised still show, at the end
        out.quote(claim)
    if reply.safety or safety_at is not None:
        block = SafetyBlock(safety_title, safety_items, tuple(notes))
        if safety_at is None:
            safety_at = sum(isinstance(b, Notice) for b in out.blocks)
            out.blocks.insert(safety_at, block)
        else:
            out.blocks[safety_at] = block
    missing: list[Block] = [Notice(n) for n in reply.notices if n not in shown_notices]
    if verify is not None and not verify_placed:
        missing.append(verify)
    out.blocks[:0] = missing
    return AnswerDocument(reply.outcome, out.freeze(), book.cards(), reply.generated, reply.quotes_checked)
