"""A page of the book as a PNG, with a table's box outlined: what VERIFY_PDF asks a person to check.

Rendered with pypdfium2 and cached under ``$DUOCTHU_HOME/book/pages/`` (a file per book version,
page, box and scale), so the app shows a page in milliseconds after the first time.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from functools import lru_cache
from pathlib import Path

from duocthu.book.importer import page_offset
from duocthu.book.pdftext import Box, PdfReadError, open_pdf, read_page, read_pages
from duocthu.errors import DuocthuError
from duocthu.text import fold

OUTLINE = (200, 30, 30)
_SAMPLE_PAGES = 8


def default_cache_dir() -> Path:
    """``$DUOCTHU_HOME/book/pages`` (settings read in the one place that reads them)."""
    from duocthu.config import Settings

    return Settings.from_env().home / "book" / "pages"


def _book_key(pdf_path: Path) -> tuple[str, int, int]:
    stat = pdf_path.stat()
    return str(pdf_path.resolve()), stat.st_mtime_ns, stat.st_size


@lru_cache(maxsize=16)
def _offset(key: tuple[str, int, int]) -> tuple[int, int]:
    """(printed − file page number, page count) of a book, from a sample of its running heads."""
    document = open_pdf(Path(key[0]))
    try:
        count = len(document)
        start = max(0, count // 2 - _SAMPLE_PAGES // 2)
        sample = read_pages(document, range(start, min(count, start + _SAMPLE_PAGES)))
    finally:
        document.close()
    offset, found = page_offset(sample)
    return (offset if found else 0), count


def file_page(pdf_path: Path, page: int) -> int:
    """The 1-based page of the file that carries the printed page number ``page``."""
    if not pdf_path.is_file():
        raise PdfReadError(f"book PDF {pdf_path} not found: run `duocthu book build` or set DUOCTHU_BOOK_PDF")
    offset, count = _offset(_book_key(pdf_path))
    index = page - offset
    if not 1 <= index <= count:
        raise DuocthuError(f"page {page} is not in {pdf_path.name} (printed pages {1 + offset}–{count + offset})")
    return index


def page_png(pdf_path: Path, page: int, box: Box | None = None, *, cache_dir: Path | None = None,
             scale: float = 1.5) -> Path:
    """Render page ``page`` of the book at ``pdf_path`` to a PNG and return its path.

    Args:
        pdf_path: the book (``Settings.book_pdf_path``: ``DUOCTHU_BOOK_PDF`` or the built demo book).
        page: the page number as cited ("tr. 245" → 245), i.e. ``Chunk.pages`` and ``source_pages``;
            for a book whose printed numbers differ from the file's, the offset is found from its
            running heads.
        box: optional ``(x0, top, x1, bottom)`` in PDF points from the page's top-left corner
            (what :func:`table_region` returns and ``import-pdf`` records); drawn as a red frame.
        cache_dir: where PNGs are kept (default ``$DUOCTHU_HOME/book/pages``).
        scale: pixels per point (1.5 ≈ 108 dpi: an A4 page is 893 × 1263 px).

    Raises :class:`duocthu.book.pdftext.PdfReadError` when the PDF is missing or unreadable and
    :class:`duocthu.errors.DuocthuError` when the page is not in the book. The PNG is written
    atomically, so concurrent app sessions never read half a file.
    """
    index = file_page(pdf_path, page)
    folder = cache_dir or default_cache_dir()
    version = hashlib.sha256(repr(_book_key(pdf_path)).encode()).hexdigest()[:12]
    box_tag = "full" if box is None else "-".join(f"{v:.0f}" for v in box)
    target = folder / f"{version}-p{page}-{box_tag}-x{scale:g}.png"
    if target.exists():
        return target
    import pypdfium2 as pdfium
    from PIL import ImageDraw

    document = open_pdf(pdf_path)
    try:
        image = document[index - 1].render(scale=scale).to_pil().convert("RGB")
    except pdfium.PdfiumError as exc:
        raise PdfReadError(f"{pdf_path}: page {page} cannot be rendered ({exc})") from exc
    finally:
        document.close()
    if box is not None:
        x0, top, x1, bottom = (v * scale for v in box)
        pad = 3 * scale
        ImageDraw.Draw(image).rectangle((x0 - pad, top - pad, x1 + pad, bottom + pad), outline=OUTLINE,
                                        width=max(2, round(2 * scale)))
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".png.tmp")
    os.close(fd)
    try:
        image.save(tmp, format="PNG", optimize=False)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def table_region(pdf_path: Path, pages: tuple[int, ...], caption: str = "") -> tuple[int, Box] | None:
    """(page, box) of the table captioned ``caption`` on ``pages`` (cited numbers), else of the first table.

    For a quarantined block chunk: ``table_region(pdf, chunk.pages, caption)``, where the caption
    is the text after ``"Bảng: "`` on the chunk's first line. ``None`` when no ruled table is there.
    """
    if not pages:
        return None
    first_table: tuple[int, Box] | None = None
    wanted = " ".join(fold(caption).split())
    document = open_pdf(pdf_path)
    try:
        for page in pages:
            try:
                index = file_page(pdf_path, page)
            except DuocthuError:
                continue
            content = read_page(document, index - 1)
            lines = content.lines
            for table in content.tables:
                first_table = first_table or (page, table.bbox)
                above = [ln for ln in lines if ln.baseline <= table.top and table.top - ln.baseline < 40]
                if wanted and any(wanted in " ".join(fold(ln.text).split()) for ln in above):
                    return page, table.bbox
    finally:
        document.close()
    return first_table
