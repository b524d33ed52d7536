"""The page geometry, fonts and paragraph styles of the demo book.

One place for every measure, because two modules depend on them: :mod:`duocthu.book.render`
sets the book with them, and :mod:`duocthu.book.importer` reads a book back by the same cues a
person sees (a bold line is a heading, a large bold centred line a monograph title, an indented
line a new paragraph, text above the top rule or below the bottom one a running head or foot).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from reportlab.lib import colors
from reportlab.lib.enums import TA_CENTER, TA_JUSTIFY, TA_LEFT
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle

FONT_DIR = Path(__file__).resolve().parent / "fonts"
SERIF, SERIF_BOLD, SERIF_ITALIC = "DTSerif", "DTSerif-Bold", "DTSerif-Italic"
_FONT_FILES = {
    SERIF: "DejaVuSerifCondensed.ttf",
    SERIF_BOLD: "DejaVuSerifCondensed-Bold.ttf",
    SERIF_ITALIC: "DejaVuSerifCondensed-Italic.ttf",
}

PAGE_WIDTH, PAGE_HEIGHT = A4
MARGIN_LEFT = MARGIN_RIGHT = 56.0
MARGIN_TOP = 64.0  # the running head sits in this band, above a rule
MARGIN_BOTTOM = 58.0  # the running foot sits in this band
HEAD_BASELINE = PAGE_HEIGHT - 40.0
FOOT_BASELINE = 30.0
FRAME_WIDTH = PAGE_WIDTH - MARGIN_LEFT - MARGIN_RIGHT

BODY_SIZE = 9.5
HEADING_SIZE = 10.5
TITLE_SIZE = 15.0
PARAGRAPH_INDENT = 12.0
"""First-line indent of a paragraph (a blank-line-separated block of the Markdown)."""
LINE_INDENT = 6.0
"""First-line indent of a line that follows a hard line break inside a paragraph (list-like lines)."""

QUARANTINE_LABEL = "Bảng chưa đối chiếu với bản in — cần kiểm tra trực quan"
QUARANTINE_COLOR = colors.HexColor("#b3261e")
TABLE_CAPTION_PREFIX = "Bảng: "
FOOTER_TEXT = (
    "duocthu — bản demo do dự án tự soạn, không phải Dược thư Quốc gia Việt Nam; "
    "không dùng cho lâm sàng"
)


@lru_cache(maxsize=1)
def register_fonts() -> tuple[str, str, str]:
    """Register the shipped DejaVu Serif Condensed faces with reportlab (once per process)."""
    from reportlab.lib.fonts import addMapping
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    for name, file_name in _FONT_FILES.items():
        pdfmetrics.registerFont(TTFont(name, str(FONT_DIR / file_name)))
    addMapping(SERIF, 0, 0, SERIF)
    addMapping(SERIF, 1, 0, SERIF_BOLD)
    addMapping(SERIF, 0, 1, SERIF_ITALIC)
    addMapping(SERIF, 1, 1, SERIF_BOLD)
    return SERIF, SERIF_BOLD, SERIF_ITALIC


@lru_cache(maxsize=1)
def styles() -> dict[str, ParagraphStyle]:
    """The paragraph styles of the book, by name."""
    register_fonts()
    body = ParagraphStyle(
        "body", fontName=SERIF, fontSize=BODY_SIZE, leading=12.4, alignment=TA_JUSTIFY,
        firstLineIndent=PARAGRAPH_INDENT, spaceBefore=3.0,
    )
    return {
        "body": body,
        "line": ParagraphStyle("line", parent=body, firstLineIndent=LINE_INDENT, spaceBefore=0.0),
        "heading": ParagraphStyle(
            "heading", fontName=SERIF_BOLD, fontSize=HEADING_SIZE, leading=13.0, alignment=TA_LEFT,
            spaceBefore=7.0, spaceAfter=1.5,
        ),
        "title": ParagraphStyle(
            "title", fontName=SERIF_BOLD, fontSize=TITLE_SIZE, leading=19.0, alignment=TA_CENTER,
            spaceBefore=18.0, spaceAfter=4.0,
        ),
        "caption": ParagraphStyle(
            "caption", fontName=SERIF_ITALIC, fontSize=9.0, leading=11.5, alignment=TA_LEFT,
            spaceBefore=5.0, spaceAfter=2.5,
        ),
        "quarantine": ParagraphStyle(
            "quarantine", fontName=SERIF_BOLD, fontSize=8.5, leading=11.0, textColor=QUARANTINE_COLOR,
            spaceBefore=6.0,
        ),
        "cell": ParagraphStyle("cell", fontName=SERIF, fontSize=8.3, leading=10.2, alignment=TA_LEFT),
        "cell_head": ParagraphStyle("cell_head", fontName=SERIF_BOLD, fontSize=8.3, leading=10.2),
        "cover_title": ParagraphStyle(
            "cover_title", fontName=SERIF_BOLD, fontSize=24, leading=30, alignment=TA_CENTER, spaceAfter=10,
        ),
        "cover_subtitle": ParagraphStyle(
            "cover_subtitle", fontName=SERIF, fontSize=13, leading=18, alignment=TA_CENTER, spaceAfter=28,
        ),
        "cover_warning": ParagraphStyle(
            "cover_warning", fontName=SERIF_BOLD, fontSize=12, leading=17, alignment=TA_CENTER,
            textColor=QUARANTINE_COLOR, spaceAfter=18,
        ),
        "cover_text": ParagraphStyle(
            "cover_text", fontName=SERIF, fontSize=10.5, leading=15, alignment=TA_JUSTIFY, spaceAfter=9,
        ),
        "running": ParagraphStyle("running", fontName=SERIF_ITALIC, fontSize=8.5, leading=10),
    }
