"""A reply as a page: the answer's blocks, and one source card per section of the book they cite.

The blocks (``reply.blocks``: notices, the PDF warning, the safety block, prose, quote lists) are
the answer itself; this module numbers the cards they cite, in reading order, and marks the quoted
sentences inside the cards. Nothing is read back from the answer's text.

Citation numbers are the cards' numbers: one card per (drug, section), its parts merged.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from duocthu.agent.reply import AgentReply, EvidenceView, SafetyView
from duocthu.types import Block, Passages, Prose, Quote, QuoteList, SafetyBlock, VerifyPdf

RETRIEVAL_ONLY_LEAD = (
    "Các đoạn Dược thư (bản demo) tìm được, trích nguyên văn trong các thẻ nguồn dưới đây. "
    "Không có câu nào được tạo ra: hãy tự đọc và đối chiếu."
)
PAGES = re.compile(r"tr\.\s*(\d+)(?:\s*[–-]\s*(\d+))?")
_GUILLEMETS = re.compile(r"«(.+)»")


@dataclass(frozen=True)
class TableItem:
    """Consecutive table rows quoted from the book, shown as one table."""

    header: tuple[str, ...] | None
    rows: tuple[tuple[str, ...], ...]
    doc_ids: tuple[str, ...]


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
    """The answer's blocks, its source cards, and which card each cited chunk is on."""

    outcome: str
    blocks: tuple[Block, ...]
    cards: tuple[SourceCard, ...]
    generated: bool
    quotes_checked: bool
    card_of: Mapping[str, int] = field(default_factory=dict)  # doc_id → card number

    def card(self, number: int) -> SourceCard:
        return self.cards[number - 1]

    def numbers(self, doc_ids: Sequence[str]) -> tuple[int, ...]:
        """The cards of these chunks, each once, in their order."""
        return tuple(dict.fromkeys(self.card_of[d] for d in doc_ids if d in self.card_of))


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

    def numbers(self) -> dict[str, int]:
        """doc_id → the number of its card."""
        return {doc_id: n for n, key in enumerate(self._keys, start=1) for doc_id in self._docs[key]}

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


def quote_items(quotes: Sequence[Quote]) -> tuple[Quote | TableItem, ...]:
    """Quotes as the page shows them: consecutive table rows of the book merged into one table."""
    items: list[Quote | list[Quote]] = []
    for quote in quotes:
        if is_table_row(quote.text):
            if items and isinstance(items[-1], list):
                items[-1].append(quote)
            else:
                items.append([quote])
        else:
            items.append(quote)
    return tuple(_table(item) if isinstance(item, list) else item for item in items)


def _table(rows: list[Quote]) -> TableItem:
    header, body = rows_to_table([q.text for q in rows])
    return TableItem(header, body, tuple(dict.fromkeys(d for q in rows for d in q.doc_ids)))


def build_document(reply: AgentReply, names: Mapping[str, str] | None = None) -> AnswerDocument:
    """The reply laid out for reading: cards numbered in the order the blocks cite them, then the rest."""
    book = _CardBook(reply.evidence, reply.safety, names or {})
    blocks: list[Block] = []
    for block in reply.blocks:
        if isinstance(block, VerifyPdf):
            book.cite(block.doc_ids, cited=False)
        elif isinstance(block, SafetyBlock):
            for _drug, item in block.items:
                book.cite([item.doc_id], item.quote)
        elif isinstance(block, QuoteList):
            for quote in block.quotes:
                book.cite(quote.doc_ids, quoted_sentence(quote.text))
        elif isinstance(block, Passages):  # retrieval-only: the passages are the cards
            book.cite(block.doc_ids)
            block = Prose(RETRIEVAL_ONLY_LEAD)
        blocks.append(block)
    cards = book.cards()
    return AnswerDocument(reply.outcome, tuple(blocks), cards, reply.generated, reply.quotes_checked,
                          book.numbers())
