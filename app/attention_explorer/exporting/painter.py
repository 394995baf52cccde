"""The one figure renderer: draws a :class:`Figure` with a QPainter on any paint device.

The same code draws PNG (QImage), SVG (QSvgGenerator) and PDF (QPdfWriter) pictures, and
the clipboard image of the GUI.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QImage, QPainter, QPen

from attention_explorer.core.stage_colours import MASKED_RGB, MASKED_TEXT
from attention_explorer.display.cells import cell_rgb, dark_text
from attention_explorer.exporting.colors import lookup_table
from attention_explorer.exporting.figure import Figure, Panel
from attention_explorer.exporting.layout import Layout, compute_layout

INK = QColor(34, 34, 34)
MUTED = QColor(96, 96, 96)
FRAME = QColor(150, 150, 150)
#: Matrices with more cells than this are drawn as one image instead of one rectangle per cell.
MAX_RECT_CELLS = 64 * 64
FONT_FAMILIES = ["DejaVu Sans", "Segoe UI", "Helvetica Neue", "Arial", "Liberation Sans"]


class _Fonts:
    """Fonts sized in device pixels, whatever the device's DPI."""

    def __init__(self, device):
        self.device = device
        self.dpi = max(1.0, float(device.logicalDpiY()))
        self._cache: dict[tuple[float, bool], QFont] = {}

    def font(self, px: float, bold: bool = False) -> QFont:
        key = (round(px, 2), bold)
        if key not in self._cache:
            font = QFont()
            font.setFamilies(FONT_FAMILIES)
            font.setStyleHint(QFont.StyleHint.SansSerif)
            font.setPointSizeF(max(0.5, px * 72.0 / self.dpi))
            font.setBold(bold)
            self._cache[key] = font
        return self._cache[key]

    def metrics(self, px: float, bold: bool = False) -> QFontMetricsF:
        return QFontMetricsF(self.font(px, bold), self.device)

    def measure(self, text: str, px: float, bold: bool) -> tuple[float, float]:
        m = self.metrics(px, bold)
        return m.horizontalAdvance(text), m.height()


def paint_figure(
    painter: QPainter, fig: Figure, width: float, height: float, dpi: float, marks=()
) -> None:
    """Draw ``fig`` on ``painter`` over a ``width`` x ``height`` canvas (device units);
    ``marks``: ``(x, y, w, h, bold)`` rectangles in cell units of the first panel, framed
    over it (the handout's followed row and cell), bold ones thicker."""
    fonts = _Fonts(painter.device())
    lay = compute_layout(fig, width, height, dpi, fonts.measure)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
    painter.fillRect(QRectF(0, 0, width, height), QColor(255, 255, 255))
    _titles(painter, fig, lay, fonts)
    count = len(fig.panels)
    for index, (panel, rect) in enumerate(zip(fig.panels, lay.heat)):
        x, y, w, h = rect
        column = index % lay.columns
        _cells(painter, fig, panel, QRectF(x, y, w, h), lay, fonts)
        if panel.title:
            _text(
                painter,
                fonts,
                panel.title,
                lay.panel_title_px,
                x + w / 2,
                y - lay.panel_title_h * 0.5,
                bold=True,
                align="center",
            )
        if column == 0:
            _row_labels(painter, panel, rect, lay, fonts)
        if index + lay.columns >= count:
            _col_labels(painter, panel, rect, lay, fonts)
    _axis_titles(painter, fig, lay, fonts)
    _colorbar(painter, fig, lay, fonts)
    if marks and fig.panels:
        _marks(painter, fig.panels[0], lay.heat[0], lay.base, marks)


def _marks(painter, panel: Panel, heat, base: float, marks) -> None:
    """Frame each of ``marks`` (cell units) over the heatmap at ``heat`` (x, y, w, h):
    dark outside, amber inside, as the window frames its selected cell."""
    x, y, w, h = heat
    rows, cols = panel.values.shape
    cw, ch = w / cols, h / rows
    painter.save()
    painter.setBrush(Qt.BrushStyle.NoBrush)
    for mx, my, mw, mh, bold in marks:
        if not (0 <= mx < cols and 0 <= my < rows):
            continue
        rect = QRectF(x + mx * cw, y + my * ch, min(mw, cols - mx) * cw, min(mh, rows - my) * ch)
        width = base * (0.5 if bold else 0.28)
        for colour, share in ((QColor(0, 0, 0), 1.0), (QColor(255, 190, 0), 0.45)):
            painter.setPen(QPen(colour, width * share))
            painter.drawRect(rect)
    painter.restore()


def _text(painter, fonts, text, px, x, y, bold=False, align="left", color=INK) -> None:
    """Draw ``text`` with its vertical centre at ``y``; ``x`` is its left, centre or right."""
    metrics = fonts.metrics(px, bold)
    width = metrics.horizontalAdvance(text)
    dx = {"left": 0.0, "center": -width / 2, "right": -width}[align]
    painter.setFont(fonts.font(px, bold))
    painter.setPen(color)
    painter.drawText(QPointF(x + dx, y + (metrics.ascent() - metrics.descent()) / 2), text)


def _elide(fonts, text: str, px: float, limit: float) -> str:
    return fonts.metrics(px).elidedText(text, Qt.TextElideMode.ElideRight, limit)


def _titles(painter, fig: Figure, lay: Layout, fonts: _Fonts) -> None:
    title = _elide(fonts, fig.title, lay.title_px, lay.width - 2 * lay.pad)
    painter.setFont(fonts.font(lay.title_px, True))
    painter.setPen(INK)
    m = fonts.metrics(lay.title_px, True)
    painter.drawText(QPointF(lay.center_x - m.horizontalAdvance(title) / 2, lay.title_y), title)
    if fig.subtitle:
        px = lay.base * 0.75
        sub = _elide(fonts, fig.subtitle, px, lay.width - 2 * lay.pad)
        m = fonts.metrics(px)
        painter.setFont(fonts.font(px))
        painter.setPen(MUTED)
        painter.drawText(QPointF(lay.center_x - m.horizontalAdvance(sub) / 2, lay.subtitle_y), sub)


def _positions(values: np.ndarray, levels: tuple[float, float]) -> np.ndarray:
    low, high = levels
    with np.errstate(over="ignore", invalid="ignore"):
        return np.clip((values.astype(np.float64) - low) / (high - low), 0.0, 1.0)  # [r, c]


def _cells(painter, fig: Figure, panel: Panel, rect: QRectF, lay: Layout, fonts: _Fonts) -> None:
    """Draw one heatmap: colours from the map, masked cells in MASKED_RGB (as on screen)."""
    values = panel.values
    rows, cols = values.shape
    cw, ch = rect.width() / cols, rect.height() / rows
    finite = ~panel.masked_cells
    rgb = cell_rgb(_positions(values, fig.levels), panel.masked_cells, lookup_table(fig.cmap))
    if rows * cols > MAX_RECT_CELLS or min(cw, ch) < 3:
        _cells_as_image(painter, rgb, rect)
        painter.setPen(QPen(FRAME, max(0.5, lay.base * 0.05)))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRect(rect)
        return
    gap = min(cw, ch) * 0.05 if min(cw, ch) >= 14 else 0.0
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, gap > 0)
    grow = 0.0 if gap else 0.5  # overlap neighbours slightly: no hairline seams
    for i in range(rows):
        for j in range(cols):
            cell = QRectF(
                rect.x() + j * cw + gap / 2,
                rect.y() + i * ch + gap / 2,
                cw - gap + (grow if j < cols - 1 else 0),
                ch - gap + (grow if i < rows - 1 else 0),
            )
            painter.fillRect(cell, QColor(*(int(c) for c in rgb[i, j])))
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    if not gap:
        painter.setPen(QPen(FRAME, max(0.5, lay.base * 0.05)))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRect(rect)
    _dividers(painter, fig, panel, rect, lay)
    if fig.show_values and panel.texts:
        _values(painter, fig, panel, rgb, finite, rect, cw, ch, lay, fonts)


def _dividers(painter, fig: Figure, panel: Panel, rect: QRectF, lay: Layout) -> None:
    """Lines between column groups (the heads inside concat)."""
    cols = panel.values.shape[1]
    if not fig.col_group or fig.col_group >= cols or cols % fig.col_group:
        return
    pitch = rect.width() / cols
    painter.setPen(QPen(INK, max(1.0, lay.base * 0.12)))
    for j in range(fig.col_group, cols, fig.col_group):
        x = rect.x() + j * pitch
        painter.drawLine(QPointF(x, rect.top()), QPointF(x, rect.bottom()))


def _cells_as_image(painter, rgb: np.ndarray, rect: QRectF) -> None:
    """Draw many cells as one image, upscaled by whole pixels so viewers never blur it."""
    rows, cols = rgb.shape[:2]
    ky = max(1, min(int(rect.height() // rows), 2048 // rows))
    kx = max(1, min(int(rect.width() // cols), 2048 // cols))
    big = np.ascontiguousarray(np.repeat(np.repeat(rgb, ky, axis=0), kx, axis=1), np.uint8)
    image = QImage(
        big.data, big.shape[1], big.shape[0], big.strides[0], QImage.Format.Format_RGB888
    ).copy()
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, False)
    painter.drawImage(rect, image)


def _values(painter, fig: Figure, panel: Panel, rgb, finite, rect, cw, ch, lay, fonts) -> None:
    """Each cell's text (the window's digits), black or white by the same contrast rule."""
    rows, cols = panel.values.shape
    texts = panel.texts
    px = min(lay.base * 0.8, ch * 0.42)
    widest = max(fonts.measure(t, px, False)[0] for t in texts) or 1.0
    px = min(px, px * cw * 0.86 / widest)
    if px < (lay.base * 0.5 if fig.auto_values else 4.0):
        return  # too small to read
    dark = dark_text(rgb)  # [rows, cols]
    light = QColor(255, 255, 255)
    for i in range(rows):
        for j in range(cols):
            color = INK if dark[i, j] else light
            x, y = rect.x() + (j + 0.5) * cw, rect.y() + (i + 0.5) * ch
            _text(painter, fonts, texts[i * cols + j], px, x, y, align="center", color=color)


def _row_labels(painter, panel: Panel, rect, lay: Layout, fonts: _Fonts) -> None:
    x, y, w, h = rect
    pitch = h / len(panel.row_labels)
    for i in range(0, len(panel.row_labels), lay.row_stride):
        label = _elide(fonts, panel.row_labels[i], lay.tick_px, lay.label_limit)
        _text(
            painter,
            fonts,
            label,
            lay.tick_px,
            x - lay.tick_gap,
            y + (i + 0.5) * pitch,
            align="right",
        )


def _col_labels(painter, panel: Panel, rect, lay: Layout, fonts: _Fonts) -> None:
    x, y, w, h = rect
    pitch = w / len(panel.col_labels)
    top = y + h + lay.tick_gap
    m = fonts.metrics(lay.tick_px)
    for j in range(0, len(panel.col_labels), lay.col_stride):
        label = _elide(fonts, panel.col_labels[j], lay.tick_px, lay.label_limit)
        cx = x + (j + 0.5) * pitch
        if lay.col_angle == 0:
            _text(painter, fonts, label, lay.tick_px, cx, top + m.height() / 2, align="center")
            continue
        painter.save()
        painter.translate(cx, top)
        painter.rotate(-lay.col_angle)
        painter.setFont(fonts.font(lay.tick_px))
        painter.setPen(INK)
        width = m.horizontalAdvance(label)
        painter.drawText(QPointF(-width, (m.ascent() - m.descent()) / 2), label)
        painter.restore()


def _axis_titles(painter, fig: Figure, lay: Layout, fonts: _Fonts) -> None:
    left = lay.heat[0][0]
    right = max(x + w for x, _, w, _ in lay.heat)
    top = lay.heat[0][1]
    bottom = max(y + h for _, y, _, h in lay.heat)
    m = fonts.metrics(lay.axis_px)
    painter.setFont(fonts.font(lay.axis_px))
    painter.setPen(MUTED)
    width = m.horizontalAdvance(fig.col_axis)
    painter.drawText(QPointF((left + right) / 2 - width / 2, lay.col_axis_y), fig.col_axis)
    painter.save()
    painter.translate(lay.row_axis_x, (top + bottom) / 2)
    painter.rotate(-90)
    width = m.horizontalAdvance(fig.row_axis)
    painter.drawText(QPointF(-width / 2, (m.ascent() - m.descent()) / 2), fig.row_axis)
    painter.restore()


def _colorbar(painter, fig: Figure, lay: Layout, fonts: _Fonts) -> None:
    x, y, w, h = lay.bar
    table = lookup_table(fig.cmap)[::-1]  # top = high
    strip = np.ascontiguousarray(table[:, None, :], np.uint8)
    image = QImage(strip.data, 1, 256, strip.strides[0], QImage.Format.Format_RGB888).copy()
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, True)
    painter.drawImage(QRectF(x, y, w, h), image)
    line = max(0.5, lay.base * 0.05)
    painter.setPen(QPen(FRAME, line))
    painter.setBrush(Qt.BrushStyle.NoBrush)
    painter.drawRect(QRectF(x, y, w, h))
    low, high = fig.levels
    for value, label in lay.bar_ticks:
        ty = y + h * (high - value) / (high - low)
        painter.setPen(QPen(INK, line))
        painter.drawLine(QPointF(x + w, ty), QPointF(x + w + lay.base * 0.25, ty))
        _text(painter, fonts, label, lay.bar_px, x + w + lay.base * 0.4, ty)
    if fig.scale_caption:
        _text(painter, fonts, fig.scale_caption, lay.bar_px, x, y - lay.base * 0.6, color=MUTED)
    if fig.has_masked:
        swatch = QRectF(x, lay.legend_y, w, w)
        painter.fillRect(swatch, QColor(*MASKED_RGB))
        painter.setPen(QPen(FRAME, line))
        painter.drawRect(swatch)
        label = f"masked ({MASKED_TEXT})"
        _text(
            painter,
            fonts,
            label,
            lay.bar_px,
            x + w + lay.base * 0.4,
            swatch.center().y(),
            color=MUTED,
        )


def heatmap_rects(fig: Figure, size: tuple[int, int], dpi: float) -> list[QRectF]:
    """Where the heatmap of each panel lands in a ``size`` picture at ``dpi`` (for tests, hover)."""
    width, height = size
    device = QImage(8, 8, QImage.Format.Format_RGB32)
    device.setDotsPerMeterX(round(dpi / 0.0254))
    device.setDotsPerMeterY(round(dpi / 0.0254))
    lay = compute_layout(fig, width, height, dpi, _Fonts(device).measure)
    return [QRectF(*rect) for rect in lay.heat]
