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


def step_stages(step) -> list[tuple[str, int]]:
    """(stage, head) pictures a step's page shows: what it reads, then its own stage."""
    if step.stage is None:
        return []
    stages = [name for name, _cells in step.related] + [step.stage]
    unique = list(dict.fromkeys(stages))[-MAX_PICTURES:]
    return [(stage, step.head) for stage in unique]


def _pictures(painter, trace, step, top, width, height, look, cmap_for=None) -> None:
    from attention_explorer.exporting.painter import paint_figure

    pictures = [(s, h) for s, h in step_stages(step) if trace.has(s)]
    if not pictures:
        return
    slot = width / len(pictures)
    for index, (stage, head) in enumerate(pictures):
        options = dict(look)
        if cmap_for is not None:  # the window's colour map of each stage
            options["cmap"] = cmap_for(stage)
        fig = stage_figure(trace, stage, head, **options)
        painter.save()
        painter.translate(index * slot, top)
        paint_figure(painter, fig, slot - 12, height, DPI)
        painter.restore()


def _document(step, width: float):
    """The step's narration laid out ``width`` device pixels wide."""
    from PySide6.QtGui import QFont, QTextDocument

    doc = QTextDocument()
    font = QFont()
    font.setPixelSize(round(NARRATION_POINTS * DPI / 72))  # the page's pixels, not the screen's
    doc.setDefaultFont(font)
    doc.setHtml(step.text)
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


def handout_bytes(trace, steps, name: str = "", cmap_for=None, **look) -> bytes:
    """The handout PDF of ``steps`` (WalkSteps of ``trace``) as bytes, one page per step;
    ``cmap_for(stage)`` names each stage's colour map (default: the export default)."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF, QSizeF
    from PySide6.QtGui import QPageLayout, QPageSize, QPainter, QPdfWriter

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
    writer.setPageLayout(QPageLayout(page, QPageLayout.Orientation.Portrait, margins))
    writer.setTitle(clean_text(f"Walkthrough: {name}" if name else "Walkthrough"))
    writer.setCreator("Attention Explorer")
    painter = QPainter(writer)
    if not painter.isActive():
        raise ExportError("could not start the PDF writer")
    try:
        width, height = writer.width(), writer.height()
        for index, step in enumerate(steps):
            if index:
                writer.newPage()
            label = f"Step {index + 1} of {len(steps)}" + (f" · {name}" if name else "")
            y = _heading(painter, clean_text(label), width, 22, False, 0)
            y = _heading(painter, clean_text(step.title), width, 34, True, y)
            doc = _document(step, width)
            room = height - y - 24
            share = min(PICTURE_SHARE, max(LEAST_SHARE, 1 - doc.size().height() / room))
            pictures = room * share if step_stages(step) else 0.0
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
