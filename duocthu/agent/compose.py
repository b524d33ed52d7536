"""The answer a user reads, assembled from its parts: notices, the safety block, the quotes, the sources.

The order is the point: what the book says against this patient comes first ("⚠ Lưu ý cho trường
hợp này"), then what was asked. Each quote is verbatim and cites its evidence number; the sources
list every chunk cited, with its pages.
"""

from __future__ import annotations

from collections.abc import Sequence

from duocthu.agent import messages as msg
from duocthu.agent.answering import Claim
from duocthu.agent.reply import ClaimView
from duocthu.retrieval.safety import FindingKind, SafetyFinding, SafetyScreen
from duocthu.sections import SECTION_TITLES
from duocthu.types import Hit, Outcome

KIND_TITLES = {
    FindingKind.CONTRAINDICATION: "Chống chỉ định",
    FindingKind.AGE_LIMIT: "Chống chỉ định theo tuổi",
    FindingKind.CAUTION: "Thận trọng",
    FindingKind.INTERACTION: "Tương tác thuốc",
    FindingKind.PREGNANCY: "Thời kỳ mang thai",
    FindingKind.BREASTFEEDING: "Thời kỳ cho con bú",
}
_KIND_ORDER = list(KIND_TITLES)
_TITLES_BY_KIND = {kind.value: title for kind, title in KIND_TITLES.items()}
SAFETY_HEADING = "⚠ Lưu ý cho trường hợp này"


class Citations:
    """Evidence numbers [1], [2] … in the order the answer cites them."""

    def __init__(self) -> None:
        self.hits: list[Hit] = []
        self._index: dict[str, int] = {}

    def number(self, hit: Hit) -> int:
        if hit.doc_id not in self._index:
            self.hits.append(hit)
            self._index[hit.doc_id] = len(self.hits)
        return self._index[hit.doc_id]

    def of(self, doc_id: str) -> int | None:
        return self._index.get(doc_id)

    def sources(self) -> str:
        lines = [
            f"[{i}] {h.chunk.display_name} — {h.chunk.section_title}, phần {h.chunk.part_index + 1}; "
            + "; ".join(h.chunk.source_refs) + (" (bảng chưa đối chiếu bản in)" if h.chunk.needs_visual_check else "")
            for i, h in enumerate(self.hits, start=1)
        ]
        return "Nguồn:\n" + "\n".join(lines)


def safety_title(kind: str, section_title: str) -> str:
    """What the book calls a finding: an age group the dosing section declines is not a "Chống chỉ định"."""
    if kind == FindingKind.AGE_LIMIT.value and section_title != SECTION_TITLES["chong_chi_dinh"]:
        return f"Giới hạn tuổi ({section_title})"
    return _TITLES_BY_KIND.get(kind, kind)


def finding_title(finding: SafetyFinding) -> str:
    return safety_title(finding.kind.value, finding.hit.chunk.section_title)


def ordered_findings(findings: Sequence[SafetyFinding]) -> list[SafetyFinding]:
    """Contraindications that apply first, then by kind in book order."""
    return sorted(findings, key=lambda f: (not f.applies, _KIND_ORDER.index(f.kind)))


def safety_block(screen: SafetyScreen, drug_names: dict[str, str], citations: Citations,
                 drugs: Sequence[str] | None = None, only_found: bool = False) -> list[str]:
    """The "⚠ Lưu ý" lines: every finding quoted and cited, and what was not found said plainly."""
    drugs = list(drugs if drugs is not None else screen.drugs)
    if not screen.facts or not drugs:
        return []
    lines = [f"{SAFETY_HEADING} ({', '.join(screen.facts)}):"]
    for drug_id in drugs:
        name = drug_names.get(drug_id, drug_id)
        # One line per quoted sentence, with every fact it matched, in the order of its first finding.
        grouped: dict[tuple[str, str], tuple[SafetyFinding, dict[str, None]]] = {}
        for finding in ordered_findings(screen.for_drug(drug_id)):
            _first, matched = grouped.setdefault((finding_title(finding), finding.quote), (finding, {}))
            matched[finding.matched] = None
        for (title, quote), (first, matched) in grouped.items():
            lines.append(f"- {title} — {name} ({', '.join(matched)}): «{quote}» [{citations.number(first.hit)}]")
        missing = screen.unmatched_facts(drug_id)
        if missing and not only_found:
            lines.append(
                f"- {name}: không thấy trong Dược thư (bản demo) nội dung nào về {', '.join(missing)} — "
                "điều này không có nghĩa là an toàn."
            )
    return lines


def claim_lines(claims: Sequence[Claim], citations: Citations, hits_by_id: dict[str, Hit]) -> tuple[list[str], list[ClaimView]]:
    lines: list[str] = []
    views: list[ClaimView] = []
    group: str | None = None
    for claim in claims:
        refs = "".join(f"[{citations.number(hits_by_id[i])}]" for i in claim.evidence_ids if i in hits_by_id)
        if claim.group and claim.group != group:
            group = claim.group
            lines.append(f"{group}:")
        prefix = f"{claim.heading} " if claim.heading else ""
        lines.append(f"- {prefix}{claim.text} {refs}".rstrip())
        drug_id = hits_by_id[claim.evidence_ids[0]].chunk.drug_id if claim.evidence_ids and \
            claim.evidence_ids[0] in hits_by_id else None
        views.append(ClaimView(text=claim.text, evidence_ids=list(claim.evidence_ids), drug_id=drug_id,
                               heading=claim.heading, group=claim.group))
    return lines, views


def verify_pdf_line(hits: Sequence[Hit]) -> str:
    tables = sorted({f"{h.chunk.display_name} — {h.chunk.section_title}" for h in hits if h.chunk.needs_visual_check})
    pages = sorted({ref for h in hits if h.chunk.needs_visual_check for ref in h.chunk.source_refs})
    return (
        "⚠ Cần đối chiếu bản in: bằng chứng có bảng chưa được kiểm tra với bản PDF (" + "; ".join(tables)
        + (" — " + "; ".join(pages) if pages else "") + "). Không dùng số liệu trong bảng khi chưa kiểm tra."
    )


def assemble(
    notices: Sequence[str], safety_lines: Sequence[str], heading: str | None, body: Sequence[str],
    citations: Citations, outcome: Outcome,
) -> str:
    parts = list(notices)
    if outcome is Outcome.VERIFY_PDF:
        parts.append(verify_pdf_line(citations.hits))
    parts += list(safety_lines)
    if heading:
        parts.append(heading)
    parts += list(body)
    if citations.hits:
        parts.append(citations.sources())
    parts.append(msg.DEMO_NOTICE)
    return "\n".join(parts)
