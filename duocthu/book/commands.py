"""The ``duocthu book …`` and ``duocthu import-pdf`` commands (registered by :mod:`duocthu.cli`).

* ``duocthu book build [--out PDF] [--source DIR] [--update-pages | --check-pages]``
* ``duocthu book page N [--box X0,TOP,X1,BOTTOM] [--pdf PDF]`` — render one page to a PNG
* ``duocthu import-pdf BOOK.pdf --out DIR [--force]``

Heavy imports (reportlab, pdfium) happen inside the commands, never at CLI start-up.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from duocthu.config import Settings
from duocthu.errors import DuocthuError
from duocthu.extras import require_extra


def cmd_book_build(args: argparse.Namespace, settings: Settings) -> int:
    """Build the demo book; optionally write or check the pages of every monograph."""
    require_extra("reportlab", "book", "duocthu book build")
    from duocthu.book.frontmatter import mismatches, update_pages
    from duocthu.book.render import build_book
    from duocthu.corpus import load_formulary

    source = Path(args.source) if args.source else settings.formulary_dir
    out = Path(args.out) if args.out else settings.demo_book_pdf
    started = time.perf_counter()
    monographs = load_formulary(source)
    built = build_book(monographs, out)
    print(f"built {out}: {built.page_count} pages, {len(monographs)} monographs in "
          f"{time.perf_counter() - started:.1f} s")
    if args.update_pages:
        changed = update_pages(monographs, built)
        print(f"pages written into {len(changed)} of {len(monographs)} monographs in {source}")
    elif args.check_pages:
        wrong = mismatches(monographs, built)
        for item in wrong:
            print(f"{item.path}: pages differ from the built book\n  committed: "
                  f"{item.committed.replace(chr(10), '; ')}\n  built:     {item.built.replace(chr(10), '; ')}",
                  file=sys.stderr)
        if wrong:
            print(f"{len(wrong)} monographs carry stale pages: run `duocthu book build --update-pages`",
                  file=sys.stderr)
            return 1
        print("the pages of every monograph match the built book")
    return 0


def cmd_book_page(args: argparse.Namespace, settings: Settings) -> int:
    """Render one page of the book (the built demo book unless --pdf) and print the PNG's path."""
    require_extra("pypdfium2", "book", "duocthu book page")
    require_extra("PIL", "book", "duocthu book page")
    from duocthu.book.pages import page_png

    box = tuple(float(v) for v in args.box.split(",")) if args.box else None
    if box is not None and len(box) != 4:
        raise DuocthuError("--box takes four numbers: x0,top,x1,bottom (points, origin top-left)")
    pdf = Path(args.pdf) if args.pdf else settings.book_pdf_path
    print(page_png(pdf, args.page, box, cache_dir=settings.home / "book" / "pages"))
    return 0


def cmd_import_pdf(args: argparse.Namespace, settings: Settings) -> int:
    """Import a Dược thư-layout PDF into a formulary folder and print what to check."""
    require_extra("pypdfium2", "book", "duocthu import-pdf")
    from duocthu.book.pdfimport import import_pdf, silent_progress, tqdm_progress

    started = time.perf_counter()
    result = import_pdf(Path(args.pdf), Path(args.out), force=args.force,
                        progress=silent_progress if args.no_progress else tqdm_progress)
    seconds = time.perf_counter() - started
    print(f"wrote {len(result.files)} monographs to {result.out} in {seconds:.1f} s "
          f"({result.report.pages / seconds:.1f} pages/s)")
    print(result.report.render())
    return result.report.exit_status


def add_cli_commands(sub: Any) -> None:
    """Register ``book`` and ``import-pdf`` on the CLI's subparsers."""
    book = sub.add_parser("book", help="the formulary as a typeset book (demo, not the Dược thư)")
    book_sub = book.add_subparsers(dest="book_command", required=True)
    build = book_sub.add_parser("build", help="typeset the formulary into one A4 PDF")
    build.add_argument("--out", help="PDF to write (default: $DUOCTHU_HOME/book/duoc-thu-demo.pdf)")
    build.add_argument("--source", help="formulary folder (default: data/formulary)")
    pages = build.add_mutually_exclusive_group()
    pages.add_argument("--update-pages", action="store_true",
                       help="write source_pages and section_pages of every monograph from the built book")
    pages.add_argument("--check-pages", action="store_true",
                       help="fail if a monograph's committed pages differ from the built book")
    build.set_defaults(func=cmd_book_build)
    page = book_sub.add_parser("page", help="render one page of the book as a PNG (cached) and print its path")
    page.add_argument("page", type=int, help="page number as cited (tr. N)")
    page.add_argument("--box", help="outline this box: x0,top,x1,bottom in points from the top-left")
    page.add_argument("--pdf", help="the book (default: DUOCTHU_BOOK_PDF, else the built demo book)")
    page.set_defaults(func=cmd_book_page)

    importer = sub.add_parser(
        "import-pdf", help="read a typeset Dược thư PDF into the formulary format",
        description="Exit status: 0 imported, nothing to look at; 1 imported with warnings (read the report); "
                    "2 failed (nothing usable imported, or an unreadable PDF).")
    importer.add_argument("pdf", help="the book as a PDF with a text layer")
    importer.add_argument("--out", required=True, help="new formulary folder to write")
    importer.add_argument("--force", action="store_true", help="replace --out if it is not empty")
    importer.add_argument("--no-progress", action="store_true", help="no progress bar")
    importer.set_defaults(func=cmd_import_pdf)
