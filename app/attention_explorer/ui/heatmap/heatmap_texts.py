"""The numbers written in a heatmap's cells: one graphics item that paints a frame's texts.

The digits come from the frame (the one number formatter, the stage's decimals); this layer
only picks a font size at which the widest text fits its cell, and hides the numbers when
even the smallest readable size does not fit (the tooltip still has every number). It never
drops decimals to make a number fit.

One item paints every cell's text with QPainter (each distinct text laid out once, as a
QStaticText), instead of one pyqtgraph TextItem (a QGraphicsTextItem and a QTextDocument) per
cell: an edit at small sizes rewrote and repainted dozens of text documents per view, which
was most of its time. The item tells Qt to repaint only when a text, a colour, the font or
the cells changed.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QStaticText, QTransform

from attention_explorer.display.cells import cell_rgb, dark_text

#: Point size of the numbers in the cells; smaller cells shrink it down to the minimum.
VALUE_POINT_SIZE = 8.5
MIN_VALUE_POINT_SIZE = 6.0
_BLACK, _WHITE = QColor("#000000"), QColor("#ffffff")


@lru_cache(maxsize=8)
def _metrics(point_size: float) -> QFontMetricsF:
    font = QFont()
    font.setPointSizeF(point_size)
    return QFontMetricsF(font)


@lru_cache(maxsize=16384)
def text_width(text: str, point_size: float) -> float:
    """Pixels ``text`` takes at ``point_size`` in the default font (measured once each: an
    edit writes mostly the same few hundred numbers again)."""
    return _metrics(point_size).horizontalAdvance(text)


def fitting_point_size(
    texts: list[str], cell_width: float, cell_height: float, scale: float = 1.0
) -> float:
    """Point size (half points) at which every text fits a cell, at most ``scale`` times
    :data:`VALUE_POINT_SIZE` (presenter mode writes larger); 0 when below the minimum."""
    if not texts:
        return 0.0
    largest = VALUE_POINT_SIZE * max(1.0, scale)
    if cell_width <= 1:  # not laid out yet: assume it fits
        return largest
    by_height = min(1.0, (cell_height - 2) / _metrics(largest).height())
    if math.floor(largest * by_height * 2) / 2 < MIN_VALUE_POINT_SIZE:
        return 0.0  # too low for any text: no need to measure them
    widest = max(text_width(text, largest) for text in set(texts))
    factor = min(by_height, (cell_width - 4) / widest)
    size = math.floor(largest * factor * 2) / 2
    return size if size >= MIN_VALUE_POINT_SIZE else 0.0


def width_for_texts(texts: list[str], columns: int) -> float:
    """Pixels ``columns`` cells need so ``texts`` fit at the minimum point size."""
    widest = max((text_width(t, MIN_VALUE_POINT_SIZE) for t in set(texts)), default=0.0)
    return columns * (widest + 6)


class CellTexts(pg.GraphicsObject):
    """The numbers of one plot's cells, painted by this one item over the image.

    :meth:`write` takes a frame's texts; :meth:`drawn` lists what :meth:`paint` draws.
    """

    def __init__(self, plot):
        super().__init__()
        self.plot = plot
        self.font = QFont()
        self.font.setPointSizeF(VALUE_POINT_SIZE)
        self.setZValue(10)
        #: Largest size as a multiple of VALUE_POINT_SIZE (presenter mode sets it above 1).
        self.scale = 1.0
        self._texts: list[str] = []
        self._dark: list[bool] = []  # per cell: black text (else white)
        self._origin = (0, 0)  # (first column, first row) of the cells
        self._columns = 1
        #: per text at self.font: laid out, half its width and height in pixels
        self._laid_out: dict[str, tuple[QStaticText, float, float]] = {}
        self._centres_key: tuple | None = None
        self._centres_cache: list[tuple[float, float]] = []
        plot.addItem(self)

    # -- what is shown ------------------------------------------------------------------------
    def write(self, frame, table: np.ndarray | None, cell_size: tuple[float, float]) -> int:
        """Draw ``frame.texts`` (``table``: the colour map, for contrast); return how many."""
        texts = frame.texts if (frame is not None and table is not None) else []
        size = fitting_point_size(texts, *cell_size, scale=self.scale) if texts else 0.0
        if not size:
            texts = []
        dark: list[bool] = []
        if texts:
            rgb = cell_rgb(frame.positions(), frame.masked_cells, table)  # [r, c, 3]
            dark = dark_text(rgb).reshape(-1).tolist()  # [r*c]
            if size != self.font.pointSizeF():
                self.font.setPointSizeF(size)
                self._laid_out.clear()
                self.update()
        r0, _, c0, _ = frame.region if texts else (0, 0, 0, 0)
        columns = frame.image.shape[1] if texts else 1
        if (c0, r0) != self._origin or columns != self._columns or len(texts) != len(self._texts):
            self.prepareGeometryChange()
            self._origin, self._columns = (c0, r0), columns
        if texts != self._texts or dark != self._dark:
            self._texts, self._dark = list(texts), dark
            if len(self._laid_out) > 2 * len(texts) + 256:  # forget texts no longer shown
                self._laid_out = {t: self._laid_out[t] for t in texts if t in self._laid_out}
            self.update()
        return len(texts)

    def drawn(self) -> list[str]:
        """The texts :meth:`paint` writes, row by row (empty while the numbers are hidden)."""
        return list(self._texts) if self.isVisible() else []

    def pixel_size(self) -> float:
        """Height in pixels of the digits' font (0 while nothing is written)."""
        return QFontMetricsF(self.font).height() if self.drawn() else 0.0

    def drawn_colours(self) -> list[str]:
        """The colour of each text of :meth:`drawn` ("#000000" or "#ffffff")."""
        return [(_BLACK if d else _WHITE).name() for d in self._dark] if self.isVisible() else []

    def cell_centre(self, k: int) -> tuple[float, float]:
        """Where (x = column, y = row, in cell units of the stage) text ``k`` is centred."""
        c0, r0 = self._origin
        return (c0 + k % self._columns + 0.5, r0 + k // self._columns + 0.5)

    # -- QGraphicsItem ----------------------------------------------------------------------
    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt API name
        """The cells written in, in stage coordinates."""
        if not self._texts:
            return QRectF()
        rows = math.ceil(len(self._texts) / self._columns)
        return QRectF(*self._origin, self._columns, rows)

    def paint(self, painter: QPainter, *_args) -> None:
        """Write every text centred in its cell, upright and at the font's size in pixels."""
        if not self._texts:
            return
        centres = self._centres(painter.transform())
        laid_out = self._laid_out
        painter.save()
        painter.setTransform(QTransform())
        painter.setFont(self.font)
        colour = None
        for (x, y), text, dark in zip(centres, self._texts, self._dark):
            entry = laid_out.get(text)
            if entry is None:
                entry = laid_out[text] = _lay_out(text, self.font)
            if dark is not colour:
                painter.setPen(_BLACK if dark else _WHITE)
                colour = dark
            static, half_width, half_height = entry
            painter.drawStaticText(QPointF(x - half_width, y - half_height), static)
        painter.restore()

    def _centres(self, to_device: QTransform) -> list[tuple[float, float]]:
        """Each cell's centre in pixels, kept until the cells or their place on screen move."""
        t = to_device
        key = (self._origin, self._columns, len(self._texts))
        key += (t.m11(), t.m12(), t.m21(), t.m22(), t.dx(), t.dy())
        if key != self._centres_key:
            points = (to_device.map(QPointF(*self.cell_centre(k))) for k in range(len(self._texts)))
            self._centres_cache = [(p.x(), p.y()) for p in points]
            self._centres_key = key
        return self._centres_cache


def _lay_out(text: str, font: QFont) -> tuple[QStaticText, float, float]:
    """``text`` laid out once at ``font``, with half its width and height in pixels."""
    static = QStaticText(text)
    static.prepare(QTransform(), font)
    size = static.size()
    return static, size.width() / 2, size.height() / 2
