"""Write the pages of the built book into the monographs' front matter (``--update-pages``).

Only the ``source_pages`` and ``section_pages`` keys are rewritten; every other byte of the file
is kept, so the chunk texts (and the committed embedding cache keyed by them) do not change.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from duocthu.book.render import BookLayout, MonographPages
from duocthu.corpus import Monograph

_PAGE_KEYS = ("source_pages:", "section_pages:")


@dataclass(frozen=True)
class PageMismatch:
    """A monograph whose committed pages differ from the pages of the built book."""

    drug_id: str
    path: Path
    committed: str
    built: str


def page_lines(pages: MonographPages, section_order: Iterable[str]) -> list[str]:
    """The front-matter lines for one monograph: ``source_pages`` then the ``section_pages`` block."""
    lines = [f"source_pages: [{pages.pages[0]}, {pages.pages[1]}]", "section_pages:"]
    for key in section_order:
        first, last = pages.sections[key]
        lines.append(f"  {key}: [{first}, {last}]")
    return lines


def rewrite_front_matter(text: str, new_lines: list[str]) -> str:
    """``text`` with its page keys replaced by ``new_lines`` (placed where ``source_pages`` was)."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        raise ValueError("no front matter")
    end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    kept: list[str] = []
    insert_at: int | None = None
    skipping_block = False
    for line in lines[1:end]:
        if skipping_block and line.startswith((" ", "\t")):
            continue
        skipping_block = False
        if line.startswith(_PAGE_KEYS):
            if insert_at is None:
                insert_at = len(kept)
            skipping_block = line.startswith("section_pages:")
            continue
        kept.append(line)
    position = len(kept) if insert_at is None else insert_at
    front = kept[:position] + new_lines + kept[position:]
    return "\n".join([lines[0], *front, *lines[end:]])


def committed_lines(mono: Monograph) -> list[str]:
    """The page lines the monograph carries now, in the same form as :func:`page_lines`."""
    pages = MonographPages(mono.drug_id, mono.name, mono.source_pages,
                           {key: (first, last) for key, first, last in mono.section_pages})
    if set(pages.sections) != {s.key for s in mono.sections}:
        return [f"source_pages: [{mono.source_pages[0]}, {mono.source_pages[1]}]", "section_pages: (missing)"]
    return page_lines(pages, [s.key for s in mono.sections])


def mismatches(monographs: Iterable[Monograph], built: BookLayout) -> list[PageMismatch]:
    """Monographs whose committed ``source_pages``/``section_pages`` differ from the built book."""
    found = []
    for mono in monographs:
        expected = page_lines(built.monographs[mono.drug_id], [s.key for s in mono.sections])
        have = committed_lines(mono)
        if have != expected:
            found.append(PageMismatch(mono.drug_id, mono.path, "\n".join(have), "\n".join(expected)))
    return found


def update_pages(monographs: Iterable[Monograph], built: BookLayout) -> list[Path]:
    """Write the built book's pages into each monograph file; return the files that changed."""
    changed = []
    for mono in monographs:
        text = mono.path.read_text(encoding="utf-8")
        new = rewrite_front_matter(text, page_lines(built.monographs[mono.drug_id], [s.key for s in mono.sections]))
        if new != text:
            mono.path.write_text(new, encoding="utf-8")
            changed.append(mono.path)
    return changed
