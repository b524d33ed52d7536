"""The blocks of an answer about the book: notices, the PDF warning, the safety block, the quotes.

The order is the point: what the book says against this patient comes first ("⚠ Lưu ý cho trường
hợp này"), then what was asked. Each quote is verbatim and cites its chunks by doc_id; the answer's
evidence lists every chunk in the order it is cited, which is the order of the sources.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from duocthu.agent import messages as msg
from duocthu.agent.answering import Claim
from duocthu.retrieval.safety import FindingKind, SafetyFinding, SafetyScreen
from duocthu.types import (
    Block,
    DrugSafety,
    Hit,
    Notice,
    Outcome,
    Prose,
    Quote,
    QuoteList,
    SafetyBlock,
    SafetyItem,
    VerifyPdf,
)

_KIND_ORDER = list(FindingKind)


def finding_title(finding: SafetyFinding) -> str:
    """What the book calls this finding ("Chống chỉ định", "Giới hạn tuổi (…)")."""
    return msg.finding_title(finding.kind, finding.hit.chunk.section_title)


def ordered_findings(findings: Sequence[SafetyFinding]) -> list[SafetyFinding]:
    """Contraindications that apply first, then by kind in book order."""
    return sorted(findings, key=lambda f: (not f.applies, _KIND_ORDER.index(f.kind)))


def safety_block(screen: SafetyScreen, drug_names: Mapping[str, str], drugs: Sequence[str] | None = None,
                 only_found: bool = False) -> SafetyBlock | None:
    """The "⚠ Lưu ý" block: every finding quoted, and (unless ``only_found``) what was not found said plainly."""
    drugs = list(drugs if drugs is not None else screen.drugs)
    if not screen.facts or not drugs:
        return None
    entries: list[DrugSafety] = []
    for drug_id in drugs:
        # One item per quoted sentence, with every fact it matched, in the order of its first finding.
        grouped: dict[tuple[str, str], tuple[SafetyFinding, dict[str, None]]] = {}
        for finding in ordered_findings(screen.for_drug(drug_id)):
            _first, matched = grouped.setdefault((finding_title(finding), finding.quote), (finding, {}))
            matched[finding.matched] = None
        items = tuple(SafetyItem(title, tuple(matched), quote, first.doc_id, first.applies)
                      for (title, quote), (first, matched) in grouped.items())
        missing = () if only_found else screen.unmatched_facts(drug_id)
        if items or missing:
            entries.append(DrugSafety(drug_names.get(drug_id, drug_id), items, tuple(missing)))
    return SafetyBlock(tuple(screen.facts), tuple(entries))


def safety_hits(block: SafetyBlock | None, screen: SafetyScreen) -> list[Hit]:
    """The chunks the safety block quotes, in its order."""
    if block is None:
        return []
    by_id: dict[str, Hit] = {}
    for finding in screen.findings:
        by_id.setdefault(finding.doc_id, finding.hit)
    return [by_id[item.doc_id] for _drug, item in block.items]


def quote_lists(claims: Sequence[Claim], hits_by_id: Mapping[str, Hit]) -> list[QuoteList]:
    """The claims as quotes, one list per run of claims under the same group heading."""
    runs: list[tuple[str | None, list[Quote]]] = []
    for claim in claims:
        first = hits_by_id.get(claim.evidence_ids[0]) if claim.evidence_ids else None
        drug_id = first.chunk.drug_id if first else None
        quote = Quote(claim.text, tuple(claim.evidence_ids), claim.heading, drug_id)
        if runs and runs[-1][0] == claim.group:
            runs[-1][1].append(quote)
        else:
            runs.append((claim.group, [quote]))
    return [QuoteList(group, tuple(quotes)) for group, quotes in runs]


def quoted_hits(lists: Iterable[Block], hits_by_id: Mapping[str, Hit]) -> list[Hit]:
    """The chunks the quote lists cite, in their order."""
    return [hits_by_id[d] for b in lists if isinstance(b, QuoteList) for q in b.quotes for d in q.doc_ids
            if d in hits_by_id]


def cited_evidence(*groups: Iterable[Hit]) -> tuple[Hit, ...]:
    """The answer's evidence in the order it is cited (the text's [n] is its n-th chunk), each chunk once."""
    seen: dict[str, Hit] = {}
    for group in groups:
        for hit in group:
            seen.setdefault(hit.doc_id, hit)
    return tuple(seen.values())


def page(notices: Sequence[str], safety: SafetyBlock | None, body: Sequence[Block], evidence: Sequence[Hit],
         outcome: Outcome, heading: str | None = None) -> tuple[Block, ...]:
    """An answer about the book in reading order: notices, the PDF warning, the safety block, the rest."""
    blocks: list[Block] = [Notice(n) for n in notices]
    if outcome is Outcome.VERIFY_PDF:
        blocks.append(VerifyPdf(tuple(h.doc_id for h in evidence if h.chunk.needs_visual_check)))
    if safety is not None:
        blocks.append(safety)
    if heading:
        blocks.append(Prose(heading))
    return (*blocks, *body)
