"""The printed page behind a quarantined table: the page image a VERIFY_PDF reply asks a person to check.

``duocthu.book.pages`` renders a page of the typeset book with the table's box outlined; it is
imported lazily, so the demo still runs (and says where the page is) without it or without a book.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from duocthu.presentation.document import SourceCard
from duocthu.qdrant_store import QdrantStore

TABLE_CAPTION = "Bảng:"


@dataclass(frozen=True)
class PageView:
    """A page of the book for a card: its number, its image when one could be made, and why not otherwise."""

    page: int | None
    image: Path | None = None
    problem: str | None = None

    @property
    def label(self) -> str:
        return f"Xem trang {self.page}" if self.page else "Xem trang sách"


def _caption(texts: list[str]) -> str:
    for text in texts:
        first = text.split("\n", 1)[0].strip()
        if first.startswith(TABLE_CAPTION):
            return first[len(TABLE_CAPTION):].strip()
    return ""


@lru_cache(maxsize=256)
def _region(pdf: str, version: int, pages: tuple[int, ...], caption: str) -> tuple[int, tuple[float, ...] | None]:
    del version  # the cache key: the book's modification time
    from duocthu.book.pages import table_region

    found = table_region(Path(pdf), pages, caption)
    if found is None:
        return pages[0], None
    return found[0], tuple(found[1])


def card_page(card: SourceCard, store: QdrantStore, book_pdf: Path) -> PageView:
    """The page (and its image) of the table in a quarantined card's section."""
    hits = store.find_by_section(card.drug_id, card.section_key) if card.section_key else []
    wanted = {p.part_index for p in card.parts}
    chosen = [h for h in hits if h.chunk.part_index in wanted and h.chunk.needs_visual_check] or hits
    pages = tuple(sorted({p for h in chosen for p in h.chunk.pages})) or ((card.first_page,) if card.first_page else ())
    if not pages:
        return PageView(None, problem="Không rõ trang của mục này.")
    if not book_pdf.is_file():
        return PageView(pages[0], problem="Chưa có bản PDF của sách (chạy `duocthu book build` hoặc đặt DUOCTHU_BOOK_PDF).")
    try:
        from duocthu.book.pages import page_png

        page, box = _region(str(book_pdf), book_pdf.stat().st_mtime_ns, pages,
                            _caption([h.chunk.text for h in chosen]))
        return PageView(page, page_png(book_pdf, page, box))  # type: ignore[arg-type]
    except Exception as exc:  # no page module, an unreadable PDF: say where the page is instead
        return PageView(pages[0], problem=f"Không hiển thị được trang ({type(exc).__name__}).")
