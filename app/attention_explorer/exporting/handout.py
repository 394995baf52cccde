"""The walkthrough as a PDF handout: one page per step, its views as drawn and its narration.

Each page has the step's title and number, the pictures of the views the step uses (the
operands it reads, then its own stage, drawn by the same renderer as File > Export, so they
match the screen's title, colours and cell numbers), and the step's narration with its numbers
(the walkthrough's own HTML, whose token names are escaped). The steps come from
:func:`~attention_explorer.walkthrough.follow.session_steps`, the rule the window follows.

    export_handout(trace, steps, "walk.pdf", name="Starter")
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from attention_explorer.exporting.figure import stage_figure
from attention_explorer.exporting.safe_text import plain_text as clean_text
from attention_explorer.writing.atomic import check_folder, write_bytes_atomic
from attention_explorer.writing.export_errors import ExportError

#: Page resolution (device pixels per inch) and size (A4 landscape, points).
DPI = 150
PAGE_POINTS = (842.0, 595.0)
#: Type size of the narration, in points.
NARRATION_POINTS = 11
#: At most this many pictures on a page, side by side.
MAX_PICTURES = 3
#: Share of the page height the pictures take (the narration gets the rest).
PICTURE_SHARE = 0.5
#: ... but never less than this share, however long the narration.
LEAST_SHARE = 0.3
#: Maps with more columns than this get the page's whole width each, one under another (the
#: page grows taller): three 19-token maps side by side left cells too small to read.
SIDE_BY_SIDE_COLUMNS = 10
#: Height of a full-width map as a share of the page's width.
STACKED_ASPECT = 0.62
#: What the window's narration says to a screen, and what a page says instead.
_PAPER_WORDS = (
    (
        r"Press <b>Next</b> to follow the query (.*?) through every stage\. Edit any number at "
        r"any time: the words and highlights follow the new values at once\.",
        r"The pages that follow trace the query \1 through every stage.",
    ),
    (r"Select another cell to follow another query\.", ""),
    (r"Press <b>Next</b>", "Turn the page"),
    (r"\b[Cc]lick(ing)? ", "choosing "),
)


def for_paper(text: str) -> str:
    """The narration ``text`` (HTML) as a page says it: no buttons, keys or clicks."""
    for pattern, replacement in _PAPER_WORDS:
        text = re.sub(pattern, replacement, text)
    return text


def marks_for(trace, step, stage: str) -> list[tuple[int, int, int, int, bool]]:
    """``(x, y, w, h, bold)`` frames in cell units for ``stage``'s picture on ``step``'s page:
    the followed query's row (or key's row), the followed cell where the stage has key
    columns (bold), and the cells the step reads from the stage, as the window frames them."""
    from attention_explorer.core.stages import stage as entry_of

    entry = entry_of(stage)
    head = step.head if entry.per_head else None
    rows, cols = trace.stage(stage, head).shape
    marks: list[tuple[int, int, int, int, bool]] = []
    cells = step.cells if stage == step.stage else dict(step.related).get(stage, ())
    if cells:
        ys, xs = [r for r, _ in cells], [c for _, c in cells]
        y0, x0 = min(ys), min(xs)
        marks.append((x0, y0, max(xs) - x0 + 1, max(ys) - y0 + 1, False))
    selection = getattr(step, "selection", None) or (cells[0] if cells else None)
    if selection is not None:
        i, j = selection
        if entry.cols == "keys":
            marks.append((0, i, cols, 1, False))
            marks.append((j, i, 1, 1, True))
        elif not cells:
            row = j if entry.rows == "keys" else i
            marks.append((0, row, cols, 1, True))
    return [m for m in marks if 0 <= m[1] < rows and 0 <= m[0] < cols]


def step_stages(step) -> list[tuple[str, int]]:
    """(stage, head) pictures a step's page shows: what it reads, then its own stage."""
    if step.stage is None:
        return []
    stages = [name for name, _cells in step.related] + [step.stage]
    unique = list(dict.fromkeys(stages))[-MAX_PICTURES:]
    return [(stage, step.head) for stage in unique]


def stacked(trace, step) -> bool:
    """True when ``step``'s maps are too wide to share the page's width."""
    pictures = [(s, h) for s, h in step_stages(step) if trace.has(s)]
    widest = max((trace.stage(s, h).shape[1] for s, h in pictures), default=0)
    return len(pictures) > 1 and widest > SIDE_BY_SIDE_COLUMNS


def _pictures(painter, trace, step, top, width, height, look, cmap_for=None) -> None:
    from attention_explorer.exporting.painter import paint_figure

    pictures = [(s, h) for s, h in step_stages(step) if trace.has(s)]
    if not pictures:
        return
    one_each = stacked(trace, step)
    slot = width if one_each else width / len(pictures)
    tall = height / len(pictures) if one_each else height
    for index, (stage, head) in enumerate(pictures):
        options = dict(look)
        if cmap_for is not None:  # the window's colour map of each stage
            options["cmap"] = cmap_for(stage)
        fig = stage_figure(trace, stage, head, **options)
        painter.save()
        if one_each:
            painter.translate(0, top + index * tall)
        else:
            painter.translate(index * slot, top)
        paint_figure(painter, fig, slot - 12, tall, DPI, marks_for(trace, step, stage))
        painter.restore()


def _document(step, width: float):
    """The step's narration laid out ``width`` device pixels wide."""
    from PySide6.QtGui import QFont, QTextDocument

    doc = QTextDocument()
    font = QFont()
    font.setPixelSize(round(NARRATION_POINTS * DPI / 72))  # the page's pixels, not the screen's
    doc.setDefaultFont(font)
    doc.setHtml(for_paper(step.text))
    doc.setTextWidth(width)
    return doc


def _narration(painter, doc, top: float, width: float, height: float) -> None:
    from PySide6.QtCore import QRectF

    scale = min(1.0, height / max(1.0, doc.size().height()))  # a long table shrinks to fit
    painter.save()
    painter.translate(0, top)
    painter.scale(scale, scale)
    doc.drawContents(painter, QRectF(0, 0, width, height / scale))
    painter.restore()


def _heading(painter, text: str, width: float, px: float, bold: bool, top: float) -> float:
    from PySide6.QtCore import QRectF, Qt
    from PySide6.QtGui import QFont

    font = QFont()
    font.setPixelSize(round(px))
    font.setBold(bold)
    painter.setFont(font)
    rect = QRectF(0, top, width, px * 1.6)
    painter.drawText(rect, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), text)
    return rect.bottom()


def _page_for(writer, trace, step, page, margins) -> None:
    """Set the size of ``step``'s page: A4 landscape, taller when its maps are stacked."""
    from PySide6.QtCore import QSizeF
    from PySide6.QtGui import QPageLayout, QPageSize

    size = page
    if stacked(trace, step):
        count = len([s for s, _ in step_stages(step) if trace.has(s)])
        width, height = PAGE_POINTS
        tall = 140 + count * (width - 56) * STACKED_ASPECT + height * (1 - PICTURE_SHARE)
        size = QPageSize(QSizeF(width, max(height, tall)), QPageSize.Unit.Point, "handout-tall")
    writer.setPageLayout(QPageLayout(size, QPageLayout.Orientation.Portrait, margins))


def handout_bytes(trace, steps, name: str = "", cmap_for=None, **look) -> bytes:
    """The handout PDF of ``steps`` (WalkSteps of ``trace``) as bytes, one page per step;
    ``cmap_for(stage)`` names each stage's colour map (default: the export default)."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF, QSizeF
    from PySide6.QtGui import QPageSize, QPainter, QPdfWriter

    from attention_explorer.exporting.qt_app import ensure_gui_app

    if not steps:
        raise ExportError("the walkthrough has no steps yet: fix the problem shown first")
    ensure_gui_app()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QPdfWriter(buffer)
    writer.setResolution(DPI)
    page = QPageSize(QSizeF(*PAGE_POINTS), QPageSize.Unit.Point, "handout")
    margins = QMarginsF(28, 28, 28, 28)
    _page_for(writer, trace, steps[0], page, margins)
    writer.setTitle(clean_text(f"Walkthrough: {name}" if name else "Walkthrough"))
    writer.setCreator("Attention Explorer")
    painter = QPainter(writer)
    if not painter.isActive():
        raise ExportError("could not start the PDF writer")
    try:
        for index, step in enumerate(steps):
            if index:
                _page_for(writer, trace, step, page, margins)
                writer.newPage()
            width, height = writer.width(), writer.height()
            label = f"Step {index + 1} of {len(steps)}" + (f" · {name}" if name else "")
            y = _heading(painter, clean_text(label), width, 22, False, 0)
            y = _heading(painter, clean_text(step.title), width, 34, True, y)
            doc = _document(step, width)
            room = height - y - 24
            share = min(PICTURE_SHARE, max(LEAST_SHARE, 1 - doc.size().height() / room))
            pictures = room * share if step_stages(step) else 0.0
            if stacked(trace, step):  # one full-width map under another
                pictures = room - min(doc.size().height(), room * (1 - PICTURE_SHARE))
            _pictures(painter, trace, step, y + 8, width, pictures, look, cmap_for)
            y += pictures + 16
            _narration(painter, doc, y, width, height - y)
    finally:
        painter.end()
    buffer.close()
    return bytes(data.data())


def export_handout(
    trace, steps, path: str | os.PathLike, name: str = "", cmap_for=None, **look
) -> Path:
    """Write the handout of ``steps`` to ``path`` (a .pdf), atomically; returns the path.

    ``look``: the picture keywords of :func:`~attention_explorer.exporting.export_stage`
    (``cmap``, ``show_values``, ``decimals``, ``scale``); ``cmap_for(stage)`` overrides
    ``cmap`` per stage. Raises ExportError (one line)."""
    path = Path(path)
    if path.suffix.lower() != ".pdf":
        raise ExportError(f"{path.name!r}: a handout is a PDF; name it something.pdf")
    check_folder(path.parent)
    return write_bytes_atomic(path, handout_bytes(trace, steps, name, cmap_for, **look))
