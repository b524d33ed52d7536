"""The answer as text: the CLI's and the JSON reply's ``answer``, written from the blocks.

One line per notice and sentence; the safety block as its heading and one "- " line per quoted
sentence or unfound fact; quotes as "- " lines with their citation numbers. A number is the
position of the cited chunk in the answer's evidence, so the sources list at the end reads in the
same order. The page (``duocthu.presentation``) lays out the same blocks as HTML.
"""

from __future__ import annotations

from collections.abc import Mapping

from duocthu.agent import messages as msg
from duocthu.agent.answer import Answer
from duocthu.types import (
    Block,
    Closing,
    Hit,
    Notice,
    Passages,
    Prose,
    Quote,
    QuoteList,
    SafetyBlock,
    VerifyPdf,
)


def render_text(answer: Answer) -> str:
    """The answer's text, blocks first, then its closing (the sources list and the demo notice)."""
    hits = {h.doc_id: h for h in answer.evidence}
    numbers = {h.doc_id: n for n, h in enumerate(answer.evidence, start=1)}
    lines: list[str] = []
    group: str | None = None  # the last group heading written: a list of the same group goes on under it
    for block in answer.blocks:
        if isinstance(block, QuoteList):
            if block.group and block.group != group:
                group = block.group
                lines.append(f"{group}:")
            lines += [_quote_line(q, numbers) for q in block.quotes]
            continue
        group = None
        lines += _block_lines(block, hits, numbers)
    return "\n".join(_closed(lines, answer))


def _block_lines(block: Block, hits: Mapping[str, Hit], numbers: Mapping[str, int]) -> list[str]:
    if isinstance(block, Notice):
        return [block.text]
    if isinstance(block, Prose):
        return [("- " if block.bullet else "") + ("  " if block.indented else "") + block.text]
    if isinstance(block, VerifyPdf):
        flagged = [hits[d] for d in block.doc_ids]
        tables = sorted({f"{h.chunk.display_name} — {h.chunk.section_title}" for h in flagged})
        pages = sorted({ref for h in flagged for ref in h.chunk.source_refs})
        return [msg.verify_pdf(tables, pages)]
    if isinstance(block, SafetyBlock):
        return _safety_lines(block, numbers)
    if isinstance(block, Passages):
        return [line for d in block.doc_ids for line in ("", msg.passage(numbers[d], hits[d]))]
    raise TypeError(f"no text for {type(block).__name__}")


def _safety_lines(block: SafetyBlock, numbers: Mapping[str, int]) -> list[str]:
    lines = [msg.safety_heading(block.facts) + ":"]
    for drug in block.drugs:
        lines += [f"- {i.title} — {drug.drug} ({', '.join(i.matched)}): «{i.quote}» [{numbers[i.doc_id]}]"
                  for i in drug.items]
        if drug.not_found:
            lines.append("- " + msg.nothing_said_about(drug.drug, drug.not_found))
    return lines


def _quote_line(quote: Quote, numbers: Mapping[str, int]) -> str:
    refs = "".join(f"[{numbers[d]}]" for d in quote.doc_ids if d in numbers)
    if quote.source:
        return f"- {quote.source}: «{quote.text}» {refs}"
    heading = f"{quote.heading} " if quote.heading else ""
    return f"- {heading}{quote.text} {refs}".rstrip()


def _closed(lines: list[str], answer: Answer) -> list[str]:
    if answer.closing is Closing.SOURCES:
        if answer.evidence:
            lines += [msg.SOURCES_HEADING, *(msg.source_line(n, h) for n, h in enumerate(answer.evidence, start=1))]
        return [*lines, msg.DEMO_NOTICE]
    if answer.closing is Closing.NOTICE:
        return [*lines, msg.DEMO_NOTICE]
    if answer.closing is Closing.INLINE:
        return [*lines[:-1], f"{lines[-1]} {msg.DEMO_NOTICE}" if lines else msg.DEMO_NOTICE]
    return lines
