"""Typeset the formulary as one A4 PDF laid out like the Dược thư, and record its real pages.

Monographs run on in alphabetical order of their name (a new one starts on the same page when
there is room, as in the printed book); each has a centred bold title, bold section headings and
real tables for the ``<!-- table … -->`` blocks (a quarantined one framed in red under a visible
label). Every page carries a running head (the drug, the page number) and a running foot saying
this is the duocthu demo. While setting, each title, heading and section end notes the page it
lands on, so the build returns the pages of every monograph and section: the citations.

The output is deterministic (reportlab's invariant mode: no creation date, fixed document id), so
the same formulary gives the same bytes and the same pages.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from reportlab.lib import colors
from reportlab.platypus import (
    BaseDocTemplate,
    CondPageBreak,
    Flowable,
    Frame,
    KeepTogether,
    NextPageTemplate,
    PageBreak,
    PageTemplate,
    Paragraph,
    Spacer,
    Table,
    TableStyle,
)

from duocthu.book import layout
from duocthu.corpus import Monograph, Prose, SectionText
from duocthu.corpus import Table as TableSegment
from duocthu.text import fold

Pages = tuple[int, int]
Sink = Callable[[tuple[str, str], int, float], None]


@dataclass
class MonographPages:
    """Where one monograph and each of its sections landed in the built book."""

    drug_id: str
    name: str
    pages: Pages = (0, 0)
    sections: dict[str, Pages] = field(default_factory=dict)


@dataclass(frozen=True)
class BookLayout:
    """What a build produced: the file, its page count and the pages of every monograph."""

    path: Path
    page_count: int
    monographs: dict[str, MonographPages]


def book_order(monographs: Sequence[Monograph]) -> list[Monograph]:
    """Monographs in the book's order: alphabetical by name, diacritics and case ignored."""
    return sorted(monographs, key=lambda m: (fold(m.name), m.name, m.drug_id))


class _Marked(Paragraph):
    """A paragraph (title or heading) that reports the page and height it is drawn at."""

    def __init__(self, text: str, style: object, mark: tuple[str, str], sink: Sink):
        super().__init__(text, style)
        self._mark, self._sink = mark, sink

    def drawOn(self, canvas: Any, x: float, y: float, _sW: float = 0) -> None:  # noqa: N802 - reportlab API
        self._sink(self._mark, canvas.getPageNumber(), y + self.height)
        super().drawOn(canvas, x, y, _sW)


class _EndMark(Flowable):
    """A zero-size flowable placed after a section's last line: it lands on the section's last page."""

    def __init__(self, mark: tuple[str, str], sink: Sink):
        super().__init__()
        self._mark, self._sink = mark, sink

    def wrap(self, availWidth: float, availHeight: float) -> tuple[float, float]:  # noqa: N803
        return 0.0, 0.0

    def draw(self) -> None:
        self._sink(self._mark, self.canv.getPageNumber(), 0.0)


class _Recorder:
    """Collects the marks drawn during a build and what the running heads need."""

    def __init__(self, monographs: Sequence[Monograph]):
        self.result = {m.drug_id: MonographPages(m.drug_id, m.name) for m in monographs}
        self.names = {m.drug_id: m.name for m in monographs}
        self.current: str | None = None  # the monograph in progress
        self.head_for_page: dict[int, str] = {}

    def __call__(self, mark: tuple[str, str], page: int, top: float) -> None:
        drug_id, what = mark
        entry = self.result[drug_id]
        if what == "title":
            entry.pages = (page, page)
            near_top = top >= layout.PAGE_HEIGHT - layout.MARGIN_TOP - 30
            if page not in self.head_for_page:  # the head names the drug at the top of the page
                self.head_for_page[page] = drug_id if near_top or self.current is None else self.current
            self.current = drug_id
            return
        kind, _, key = what.partition(":")
        first, last = entry.sections.get(key, (page, page))
        entry.sections[key] = (min(first, page), max(last, page))
        entry.pages = (entry.pages[0], max(entry.pages[1], page))
        self.head_for_page.setdefault(page, drug_id)

    def running_name(self, page: int) -> str:
        drug_id = self.head_for_page.get(page, self.current)
        return self.names.get(drug_id, "") if drug_id else ""


def _p(text: str) -> str:
    return escape(text)


def _cover() -> list[Flowable]:
    s = layout.styles()
    return [
        Spacer(1, 120),
        Paragraph("DƯỢC THƯ — BẢN DEMO DUOCTHU", s["cover_title"]),
        Paragraph("Sách mẫu dàn trang theo bố cục chuyên luận của Dược thư Quốc gia Việt Nam", s["cover_subtitle"]),
        Paragraph("KHÔNG PHẢI DƯỢC THƯ QUỐC GIA VIỆT NAM — KHÔNG DÙNG CHO LÂM SÀNG", s["cover_warning"]),
        Paragraph(
            "Nội dung trong sách này do dự án mã nguồn mở duocthu tự soạn từ kiến thức dược lý phổ thông, "
            "để nghiên cứu và trình diễn một trợ lý tra cứu thuốc có trích dẫn nguồn. Đây không phải văn bản "
            "của Dược thư Quốc gia Việt Nam, chưa được thẩm định chuyên môn và không được dùng để chẩn đoán, "
            "kê đơn hay điều trị.", s["cover_text"],
        ),
        Paragraph(
            "Sách được dàn trang tự động từ thư mục chuyên luận Markdown của dự án (lệnh "
            "<i>duocthu book build</i>); số trang của sách là số trang mà trợ lý trích dẫn. Các bảng có khung "
            "đỏ là bảng chưa được đối chiếu với bản in: mọi câu trả lời dựa vào chúng đều yêu cầu người dùng "
            "kiểm tra trên trang sách.", s["cover_text"],
        ),
        Paragraph(
            "This is the duocthu demo book, written by the project — not the Dược thư, not for clinical use.",
            s["cover_text"],
        ),
        NextPageTemplate("body"),
        PageBreak(),
    ]


def _prose(segment: Prose) -> list[Flowable]:
    s = layout.styles()
    lines = [line.strip() for line in segment.text.split("\n") if line.strip()]
    return [Paragraph(_p(line), s["body"] if i == 0 else s["line"]) for i, line in enumerate(lines)]


def _table_rows(rows: str) -> list[list[str]]:
    parsed = []
    for line in rows.split("\n"):
        line = line.strip()
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if all(set(c) <= set("-: ") for c in cells):
            continue  # the header separator
        parsed.append(cells)
    width = max((len(r) for r in parsed), default=0)
    return [r + [""] * (width - len(r)) for r in parsed]


def _column_widths(rows: list[list[str]], total: float) -> list[float]:
    columns = len(rows[0])
    weights = [max(1.0, math.sqrt(sum(len(r[c]) for r in rows))) for c in range(columns)]
    longest_word = [max((len(w) for r in rows for w in r[c].split()), default=4) for c in range(columns)]
    floor = [min(total / columns, 12 + 5.2 * n) for n in longest_word]
    widths = [max(floor[c], total * weights[c] / sum(weights)) for c in range(columns)]
    scale = total / sum(widths)
    return [w * scale for w in widths]


def _table(segment: TableSegment) -> Flowable:
    s = layout.styles()
    rows = _table_rows(segment.rows)
    parts: list[Flowable] = []
    if segment.quarantined:
        parts.append(Paragraph(_p(layout.QUARANTINE_LABEL), s["quarantine"]))
    parts.append(Paragraph(_p(layout.TABLE_CAPTION_PREFIX + segment.caption), s["caption"]))
    if not rows:
        return KeepTogether(parts)
    cells = [[Paragraph(_p(c), s["cell_head"] if i == 0 else s["cell"]) for c in row] for i, row in enumerate(rows)]
    border = layout.QUARANTINE_COLOR if segment.quarantined else colors.black
    table = Table(cells, colWidths=_column_widths(rows, layout.FRAME_WIDTH), repeatRows=1, hAlign="LEFT")
    table.setStyle(TableStyle([
        ("GRID", (0, 0), (-1, -1), 0.5, colors.black),
        ("BOX", (0, 0), (-1, -1), 1.6 if segment.quarantined else 0.8, border),
        ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#e8e8e8")),
        ("VALIGN", (0, 0), (-1, -1), "TOP"),
        ("LEFTPADDING", (0, 0), (-1, -1), 3.5), ("RIGHTPADDING", (0, 0), (-1, -1), 3.5),
        ("TOPPADDING", (0, 0), (-1, -1), 2.0), ("BOTTOMPADDING", (0, 0), (-1, -1), 2.5),
    ]))
    parts += [table, Spacer(1, 3)]
    return KeepTogether(parts)


def _section(mono: Monograph, section: SectionText, sink: Sink) -> list[Flowable]:
    s = layout.styles()
    flow: list[Flowable] = [
        CondPageBreak(60),
        _Marked(_p(section.title), s["heading"], (mono.drug_id, f"start:{section.key}"), sink),
    ]
    for segment in section.segments:
        flow += _prose(segment) if isinstance(segment, Prose) else [_table(segment)]
    flow.append(_EndMark((mono.drug_id, f"end:{section.key}"), sink))
    return flow


def _story(monographs: Sequence[Monograph], sink: Sink) -> list[Flowable]:
    s = layout.styles()
    story = _cover()
    for mono in monographs:
        story += [CondPageBreak(110), _Marked(_p(mono.name), s["title"], (mono.drug_id, "title"), sink)]
        for section in mono.sections:
            story += _section(mono, section, sink)
    return story


class _BookTemplate(BaseDocTemplate):
    def __init__(self, filename: str, recorder: _Recorder):
        super().__init__(
            filename, pagesize=(layout.PAGE_WIDTH, layout.PAGE_HEIGHT), invariant=1, pageCompression=1,
            title="Dược thư — bản demo duocthu (không dùng cho lâm sàng)", author="duocthu",
            creator="duocthu book build", producer="duocthu (reportlab)", subject="demo, not for clinical use",
            leftMargin=layout.MARGIN_LEFT, rightMargin=layout.MARGIN_RIGHT,
            topMargin=layout.MARGIN_TOP, bottomMargin=layout.MARGIN_BOTTOM,
        )
        self._recorder = recorder
        frame = Frame(layout.MARGIN_LEFT, layout.MARGIN_BOTTOM, layout.FRAME_WIDTH,
                      layout.PAGE_HEIGHT - layout.MARGIN_TOP - layout.MARGIN_BOTTOM, id="body",
                      leftPadding=0, rightPadding=0, topPadding=0, bottomPadding=0)
        self.addPageTemplates([
            PageTemplate("cover", [frame], onPageEnd=self._foot),
            PageTemplate("body", [frame], onPageEnd=self._running_head),
        ])

    def _foot(self, canvas: Any, _doc: object) -> None:
        canvas.saveState()
        canvas.setFont(layout.SERIF_ITALIC, 7.5)
        canvas.drawCentredString(layout.PAGE_WIDTH / 2, layout.FOOT_BASELINE, layout.FOOTER_TEXT)
        canvas.restoreState()

    def _running_head(self, canvas: Any, doc: object) -> None:
        c = canvas
        page = c.getPageNumber()
        name = self._recorder.running_name(page)
        c.saveState()
        c.setFont(layout.SERIF_ITALIC, 9)
        left, right = layout.MARGIN_LEFT, layout.PAGE_WIDTH - layout.MARGIN_RIGHT
        if page % 2:  # odd pages: the name at the left, the number at the outer (right) edge
            c.drawString(left, layout.HEAD_BASELINE, name)
            c.drawRightString(right, layout.HEAD_BASELINE, str(page))
        else:
            c.drawString(left, layout.HEAD_BASELINE, str(page))
            c.drawRightString(right, layout.HEAD_BASELINE, name)
        c.setLineWidth(0.5)
        c.line(left, layout.HEAD_BASELINE - 5, right, layout.HEAD_BASELINE - 5)
        c.restoreState()
        self._foot(canvas, doc)


def build_book(monographs: Sequence[Monograph], out: Path) -> BookLayout:
    """Typeset ``monographs`` into ``out`` (written atomically) and return the pages of each.

    Example::

        layout = build_book(load_formulary(Path("data/formulary")), Path("book.pdf"))
        layout.monographs["paracetamol"].sections["chi_dinh"]  # (first, last) page
    """
    ordered = book_order(monographs)
    recorder = _Recorder(ordered)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out.parent, suffix=".pdf.tmp")
    os.close(fd)
    try:
        doc = _BookTemplate(tmp, recorder)
        doc.build(_story(ordered, recorder))
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return BookLayout(out, int(doc.page), recorder.result)
