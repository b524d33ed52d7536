"""HTML for the answer document, its source cards and the formulary browser.

Every piece of text from a user or the formulary goes through :func:`html.escape` before it is
placed in the markup built here; the app passes the result to ``st.html`` (sanitised again by
DOMPurify in the browser), never to ``unsafe_allow_html``.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence

from duocthu.agent import messages as msg
from duocthu.presentation.document import (
    AnswerDocument,
    SourceCard,
    TableItem,
    is_separator_row,
    is_table_row,
    quote_items,
    rows_to_table,
)
from duocthu.types import Notice, Prose, Quote, QuoteList, SafetyBlock, VerifyPdf

CSS = """
<style>
.dt-doc{line-height:1.6;font-size:1rem}
.dt-doc p{margin:0 0 .5rem 0}
.dt-doc ul{margin:.25rem 0 .75rem 0;padding-left:1.4rem}
.dt-doc li{margin:.2rem 0}
.dt-notice{background:#eef4fb;border-left:4px solid #4a86c5;padding:.45rem .7rem;margin:.35rem 0 .6rem 0;border-radius:.3rem}
.dt-safety{background:#fff4e5;border:1px solid #f0b461;border-left:5px solid #e8890c;padding:.55rem .8rem;margin:.35rem 0 .8rem 0;border-radius:.4rem}
.dt-safety-title{font-weight:700;margin-bottom:.2rem}
.dt-kind{font-weight:600}
.dt-applies{display:inline-block;background:#c62828;color:#fff;border-radius:.6rem;padding:0 .45rem;font-size:.78rem;margin-left:.3rem}
.dt-note{font-style:italic;color:#5a4a2a}
.dt-verify{background:#fff0e0;border:1px solid #f09a3e;padding:.5rem .75rem;border-radius:.4rem;margin:.35rem 0 .75rem 0}
.dt-group{font-weight:700;margin:.6rem 0 .1rem 0}
.dt-qhead{font-weight:600}
.dt-chip{display:inline-block;min-width:1.6rem;text-align:center;font-size:.78rem;font-weight:600;line-height:1.35;
  border:1px solid #7aa7d6;background:#eef4fb;color:#1c4f86 !important;border-radius:.7rem;padding:0 .35rem;
  margin-left:.2rem;text-decoration:none !important;vertical-align:baseline}
.dt-chip:hover{background:#d7e7f7}
.dt-table{overflow-x:auto;margin:.4rem 0 .8rem 0}
.dt-table table{border-collapse:collapse;font-size:.9rem;width:100%}
.dt-table th,.dt-table td{border:1px solid #d5d9e0;padding:.3rem .5rem;vertical-align:top;text-align:left}
.dt-table th{background:#f3f5f8}
.dt-table tr.dt-hl td{background:#fff7c2}
.dt-cards-title{font-weight:700;font-size:.95rem;margin:.3rem 0 .4rem 0;color:#31333f}
.dt-card{border:1px solid #d5d9e0;border-radius:.5rem;padding:.55rem .8rem;margin:0;background:#fff;
  scroll-margin-top:5rem;transition:box-shadow .2s}
.dt-card:target{border-color:#1c4f86;box-shadow:0 0 0 3px #9cc3ea}
.dt-card-head{display:flex;flex-wrap:wrap;gap:.4rem;align-items:baseline;font-weight:600}
.dt-card-num{color:#1c4f86}
.dt-flag{background:#e8890c;color:#fff;border-radius:.6rem;padding:0 .5rem;font-size:.78rem;font-weight:600}
.dt-card-meta{color:#6b7280;font-size:.85rem;margin:.1rem 0 .35rem 0}
.dt-cards-grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(22rem,1fr));gap:.6rem;align-items:start}
.dt-card-body{font-size:.92rem;line-height:1.55;max-height:17rem;overflow-y:auto;padding-right:.3rem}
.dt-card-body p{margin:0 0 .35rem 0}
.dt-part-label{color:#6b7280;font-size:.8rem;font-weight:600;margin-top:.3rem}
.dt-card-body details summary{cursor:pointer;color:#4b5563;font-size:.85rem}
.dt-page-ref{color:#6b7280;font-size:.85rem;margin-top:.3rem}
.dt-doc mark,.dt-card mark,.dt-section mark{background:#fff1a8;padding:0 .1rem;border-radius:.15rem}
.dt-section{border:1px solid #d5d9e0;border-radius:.5rem;padding:.6rem .9rem;margin:0 0 .8rem 0;background:#fff}
.dt-section h4{margin:0 0 .15rem 0;font-size:1.05rem}
.dt-section .dt-card-meta{margin-bottom:.5rem}
</style>
"""


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def anchor(key: str, number: int) -> str:
    """The id of source card ``number`` of the turn ``key`` (a chip links to it)."""
    return f"{key}-src-{number}"


def chips(key: str, numbers: Sequence[int]) -> str:
    return "".join(
        f'<a class="dt-chip" href="#{anchor(key, n)}" title="Xem nguồn [{n}]">[{n}]</a>' for n in numbers
    )


# -- text of the book ---------------------------------------------------------------------------------


def _marked(line: str, quotes: Sequence[str]) -> str:
    """``line`` escaped, with every quoted sentence it contains wrapped in <mark>."""
    spans: list[tuple[int, int]] = []
    for quote in quotes:
        quote = quote.strip()
        start = line.find(quote) if quote else -1
        if start >= 0:
            spans.append((start, start + len(quote)))
    spans.sort()
    out, position = [], 0
    for start, end in spans:
        if start < position:
            continue
        out += [esc(line[position:start]), "<mark>", esc(line[start:end]), "</mark>"]
        position = end
    out.append(esc(line[position:]))
    return "".join(out)


def table_html(header: Sequence[str] | None, rows: Sequence[Sequence[str]], highlighted: Sequence[int] = ()) -> str:
    head = "<thead><tr>" + "".join(f"<th>{esc(c)}</th>" for c in header) + "</tr></thead>" if header else ""
    body = "".join(
        ('<tr class="dt-hl">' if i in highlighted else "<tr>") + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>"
        for i, row in enumerate(rows)
    )
    return f'<div class="dt-table"><table>{head}<tbody>{body}</tbody></table></div>'


def text_html(text: str, quotes: Sequence[str] = ()) -> str:
    """A chunk of the book as HTML: paragraphs, "- " lists and Markdown tables as tables; quotes marked."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        if is_table_row(line):
            rows = []
            while i < len(lines) and is_table_row(lines[i]):
                rows.append(lines[i].strip())
                i += 1
            header, body = rows_to_table(rows)
            wanted = {q.strip() for q in quotes}
            body_lines = [r for r in rows[(2 if header else 0):] if not is_separator_row(r)]
            out.append(table_html(header, body, [j for j, r in enumerate(body_lines) if r in wanted]))
            continue
        if line.lstrip().startswith("- "):
            items = []
            while i < len(lines) and lines[i].lstrip().startswith("- "):
                items.append(f"<li>{_marked(lines[i].lstrip()[2:], quotes)}</li>")
                i += 1
            out.append("<ul>" + "".join(items) + "</ul>")
            continue
        if line.strip():
            out.append(f"<p>{_marked(line.strip(), quotes)}</p>")
        i += 1
    return "".join(out)


# -- the answer -----------------------------------------------------------------------------------------


def _quote_items(key: str, doc: AnswerDocument, quotes: Sequence[Quote]) -> str:
    out: list[str] = []
    bullets: list[str] = []

    def flush() -> None:
        if bullets:
            out.append("<ul>" + "".join(bullets) + "</ul>")
            bullets.clear()

    for item in quote_items(quotes):
        cards = doc.numbers(item.doc_ids)
        if isinstance(item, TableItem):
            flush()
            out.append(table_html(item.header, item.rows) + (f"<div>{chips(key, cards)}</div>" if cards else ""))
        else:
            head = item.heading or (f"{item.source}:" if item.source else None)
            head_html = f'<span class="dt-qhead">{esc(head)}</span> ' if head else ""
            bullets.append(f"<li>{head_html}{esc(item.text)}{chips(key, cards)}</li>")
    flush()
    return "".join(out)


def _verify_html(key: str, doc: AnswerDocument, block: VerifyPdf) -> str:
    cards = doc.numbers(block.doc_ids)
    tables = "; ".join(dict.fromkeys(f"{doc.card(n).drug_name} — {doc.card(n).section_title}" for n in cards))
    return (
        '<div class="dt-verify"><b>⚠ Cần đối chiếu bản in.</b> Bằng chứng có bảng chưa được kiểm tra với '
        f"bản PDF ({esc(tables)}). Không dùng số liệu trong bảng khi chưa xem trang sách."
        f"{chips(key, cards)}</div>"
    )


def _safety_html(key: str, doc: AnswerDocument, block: SafetyBlock) -> str:
    items = [
        f'<li><span class="dt-kind">{esc(i.title)}</span> — {esc(drug)} ({esc(", ".join(i.matched))}): '
        f"«{esc(i.quote)}»{chips(key, doc.numbers([i.doc_id]))}"
        + ('<span class="dt-applies">áp dụng cho người bệnh này</span>' if i.applies else "") + "</li>"
        for drug, i in block.items
    ]
    items += [f'<li class="dt-note">{esc(msg.nothing_said_about(d.drug, d.not_found))}</li>' for d in block.notes]
    return (f'<div class="dt-safety"><div class="dt-safety-title">{esc(msg.safety_heading(block.facts))}</div>'
            f'<ul>{"".join(items)}</ul></div>')


def document_html(doc: AnswerDocument, key: str) -> str:
    """The answer body: notices, the PDF warning, the safety block, the agent's sentences and the quotes."""
    out: list[str] = []
    prose: list[str] = []

    def flush() -> None:
        if prose:
            out.append("<ul>" + "".join(prose) + "</ul>")
            prose.clear()

    for block in doc.blocks:
        if isinstance(block, Prose) and block.bullet:
            prose.append(f"<li>{esc(block.text)}</li>")
            continue
        flush()
        if isinstance(block, Notice):
            out.append(f'<div class="dt-notice">{esc(block.text)}</div>')
        elif isinstance(block, VerifyPdf):
            out.append(_verify_html(key, doc, block))
        elif isinstance(block, SafetyBlock):
            out.append(_safety_html(key, doc, block))
        elif isinstance(block, Prose):
            if block.text:
                out.append(f"<p>{esc(block.text)}</p>")
        elif isinstance(block, QuoteList):
            if block.group:
                out.append(f'<div class="dt-group">{esc(block.group)}</div>')
            out.append(_quote_items(key, doc, block.quotes))
    flush()
    return f'<div class="dt-doc">{"".join(out)}</div>'


def card_html(card: SourceCard, key: str, page_note: Callable[[SourceCard], str] | None = None) -> str:
    flag = '<span class="dt-flag">cần đối chiếu PDF</span>' if card.needs_pdf else ""
    body: list[str] = []
    for part in card.parts:
        label = f'<div class="dt-part-label">Phần {part.part_index + 1}</div>' if len(card.parts) > 1 else ""
        text = text_html(part.text, part.quotes)
        if part.cited:
            body.append(label + text)
        else:
            body.append(f"<details><summary>Phần {part.part_index + 1} — đoạn đi kèm, không được trích</summary>"
                        f"{text}</details>")
    note = page_note(card) if page_note else ""
    return (
        f'<div class="dt-card{" dt-card-pdf" if card.needs_pdf else ""}" id="{anchor(key, card.number)}">'
        f'<div class="dt-card-head"><span class="dt-card-num">[{card.number}]</span>'
        f"<span>{esc(card.drug_name)} — {esc(card.section_title)}</span>{flag}</div>"
        f'<div class="dt-card-meta" title="{esc("; ".join(card.source_refs))}">{esc(card.part_label)} · '
        f"{esc(card.pages)}</div>"
        f'<div class="dt-card-body">{"".join(body)}</div>{note}</div>'
    )


def cards_html(doc: AnswerDocument, key: str, page_note: Callable[[SourceCard], str] | None = None) -> str:
    if not doc.cards:
        return ""
    return ('<div class="dt-cards"><div class="dt-cards-title">Nguồn trong Dược thư (bản demo)</div>'
            '<div class="dt-cards-grid">' + "".join(card_html(c, key, page_note) for c in doc.cards) + "</div></div>")


def page_reference(card: SourceCard, page: int | None = None, image_below: bool = False) -> str:
    """Where the printed page is: shown below the cards when its image could be made, else named."""
    where = f"trang {page}" if page else (f"trang {card.first_page}" if card.first_page else card.pages)
    if image_below:
        return (f'<div class="dt-page-ref">Bảng chưa đối chiếu: ảnh {esc(where)} của sách ở dưới các thẻ nguồn '
                f"(«Xem {esc(where)}»).</div>")
    return (f'<div class="dt-page-ref">Bảng chưa đối chiếu: mở Dược thư (bản demo) bản in ở {esc(where)} '
            f"({esc(card.drug_name)}, mục {esc(card.section_title)}) để kiểm tra số liệu.</div>")


def section_html(title: str, meta: str, parts: Sequence[tuple[int, str, bool]], quarantine_note: str,
                 anchor_id: str = "", records: Sequence[tuple[str, str]] = ()) -> str:
    """One section of a monograph for the formulary browser; ``parts`` are (part index, text, quarantined),
    ``records`` the section's contraindications read as facts ((what the record holds, its sentence))."""
    body: list[str] = []
    for part_index, text, quarantined in parts:
        if quarantined:
            body.append(f'<div class="dt-verify">⚠ Phần {part_index + 1}: {esc(quarantine_note)}</div>')
        body.append(text_html(text))
    if records:
        body.append(records_html(records))
    ident = f' id="{esc(anchor_id)}"' if anchor_id else ""
    return (f'<div class="dt-section"{ident}><h4>{esc(title)}</h4><div class="dt-card-meta">{esc(meta)}</div>'
            f'{"".join(body)}</div>')


def records_html(records: Sequence[tuple[str, str]]) -> str:
    """A folded table of the contraindications read as facts: what each record holds, and its sentence."""
    rows = "".join(f"<tr><td>{esc(held)}</td><td>{esc(sentence)}</td></tr>" for held, sentence in records)
    return (f'<details class="dt-records"><summary>Đọc thành dữ kiện ({len(records)})</summary>'
            f'<div class="dt-table"><table><tr><th>Dữ kiện</th><th>Câu trong Dược thư</th></tr>{rows}</table></div>'
            "</details>")


def page_notes(links: Mapping[int, str]) -> Callable[[SourceCard], str]:
    """A card footer naming the page to open for quarantined cards (``links``: card number → HTML)."""
    def note(card: SourceCard) -> str:
        if not card.needs_pdf:
            return ""
        return links.get(card.number) or page_reference(card)
    return note
