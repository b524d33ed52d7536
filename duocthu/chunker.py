"""Cut monograph sections into chunks: whole sentences only, tables as their own blocks."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from duocthu.corpus import Monograph, Prose, SectionText, Table
from duocthu.limits import limits_of_sentences, names_no_circumstance, route_of
from duocthu.text import count_tokens, fold
from duocthu.types import Chunk, ChunkKind, PopulationLimit

LIMIT_SECTIONS = frozenset({"chong_chi_dinh", "lieu_luong_va_cach_dung", "than_trong"})
"""Sections whose sentences are parsed for population limits at index time (the safety screen):
every sentence of Chống chỉ định; in the dosing and caution sections only an age or weight group the
book declines ("Trẻ em: không khuyến cáo cho trẻ dưới 16 tuổi", "Trẻ dưới 2 tuổi: không khuyến cáo")."""

_DECLINES_RE = re.compile(r"\b(?:khong khuyen cao|khong dung|khong duoc dung|khong nen dung|chong chi dinh)\b")


def _section_limits(section_key: str, text: str) -> tuple[PopulationLimit, ...]:
    sentences = split_sentences(text)
    if section_key == "chong_chi_dinh":
        return limits_of_sentences(sentences)
    # A dosing sentence that declines a children's age group declines it as a whole, unless it names a
    # circumstance ("… nếu không có chỉ định của thầy thuốc"): the decline is the whole sentence's point.
    declining = [s for s in sentences if _DECLINES_RE.search(fold(s))]
    declined = list(limits_of_sentences(declining))
    # "Trẻ em: chưa xác định được hiệu quả và an toàn, không khuyến cáo." and "Dạng tiêm không dùng cho trẻ
    # em." decline every child (the second only for that route).
    declined += [PopulationLimit("age", s, max_age_years=18.0, route=route_of(s)) for s in declining
                 if (_CHILDREN_HEADER_RE.match(fold(s)) or _FOR_CHILDREN_RE.search(fold(s)))
                 and not any(limit.sentence == s for limit in declined)]
    return tuple(
        replace(limit, conditional=limit.route is not None or not names_no_circumstance(limit.sentence))
        for limit in declined
        if (limit.kind == "age" and limit.max_age_years is not None) or limit.kind == "weight"
    )


_CHILDREN_HEADER_RE = re.compile(r"^\s*tre em\s*:")
_FOR_CHILDREN_RE = re.compile(r"\b(?:khong khuyen cao|khong dung|khong duoc dung|khong nen dung) (?:cho|o) tre em\b")

MAX_CHUNK_TOKENS = 320
"""Upper bound per prose chunk (estimated by :func:`duocthu.text.count_tokens`).

e5's window is 512 tokens; 320 keeps every chunk — prefix included — well inside it, and on
the demo formulary leaves most sections whole while the longest ones split into 2–3 parts.
"""

_SENTENCE_END_RE = re.compile(r"[.!?]\s+|\n+")
_OPENERS = "•-–(\"“"


def split_sentences(paragraph: str) -> list[str]:
    """Sentences (or lines) of a paragraph; joining them with spaces restores its words.

    A sentence ends at ``.``, ``!`` or ``?`` followed by space and an upper-case letter, a digit or
    a bullet, or at a line break. A ``;`` never ends one (the book's lists use it inside sentences).
    """
    sentences: list[str] = []
    start = 0
    for match in _SENTENCE_END_RE.finditer(paragraph):
        following = paragraph[match.end() : match.end() + 1]
        if "\n" not in match.group(0) and not (following.isupper() or following.isdigit() or following in _OPENERS):
            continue
        piece = paragraph[start : match.end()].strip()
        if piece:
            sentences.append(piece)
        start = match.end()
    tail = paragraph[start:].strip()
    if tail:
        sentences.append(tail)
    return sentences


def chunk_section(
    monograph: Monograph,
    section: SectionText,
    max_tokens: int = MAX_CHUNK_TOKENS,
    token_counter: Callable[[str], int] = count_tokens,
) -> list[Chunk]:
    texts: list[tuple[str, ChunkKind, bool]] = []
    pending: list[str] = []  # paragraphs (or sentence runs) of the prose chunk being built
    pending_tokens = 0

    def flush() -> None:
        nonlocal pending_tokens
        if pending:
            texts.append(("\n\n".join(pending), ChunkKind.PROSE, False))
        pending.clear()
        pending_tokens = 0

    for segment in section.segments:
        if isinstance(segment, Table):
            flush()
            texts.append((segment.text, ChunkKind.BLOCK, segment.quarantined))
            continue
        assert isinstance(segment, Prose)
        tokens = token_counter(segment.text)
        if pending_tokens + tokens <= max_tokens:
            pending.append(segment.text)
            pending_tokens += tokens
            continue
        flush()
        if tokens <= max_tokens:
            pending.append(segment.text)
            pending_tokens = tokens
            continue
        run: list[str] = []
        run_tokens = 0
        for sentence in split_sentences(segment.text):
            cost = token_counter(sentence)
            if run and run_tokens + cost > max_tokens:
                texts.append((" ".join(run), ChunkKind.PROSE, False))
                run, run_tokens = [], 0
            run.append(sentence)
            run_tokens += cost
        if run:
            pending.append(" ".join(run))
            pending_tokens = run_tokens
    flush()

    quarantined = section.has_quarantined_content
    first, last = monograph.pages_of(section.key)
    pages = tuple(range(first, last + 1)) if first > 0 else ()
    return [
        Chunk(
            doc_id=Chunk.make_doc_id(monograph.drug_id, section.key, index),
            drug_id=monograph.drug_id,
            display_name=monograph.name,
            section_key=section.key,
            section_title=section.title,
            part_index=index,
            chunk_kind=kind,
            text=text,
            text_folded=fold(text),
            source_refs=monograph.section_refs(section.key),
            requires_visual_check=is_quarantined_block,
            has_quarantined_content=quarantined,
            parent_id=None,
            atc_codes=monograph.atc_codes,
            aliases=monograph.aliases,
            population_limits=(
                _section_limits(section.key, text) if section.key in LIMIT_SECTIONS else ()
            ),
            pages=pages,
        )
        for index, (text, kind, is_quarantined_block) in enumerate(texts)
    ]


def chunk_monograph(monograph: Monograph, max_tokens: int = MAX_CHUNK_TOKENS) -> list[Chunk]:
    return [
        chunk
        for section in monograph.sections
        for chunk in chunk_section(monograph, section, max_tokens)
    ]
