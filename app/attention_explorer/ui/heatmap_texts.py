"""The numbers written in a heatmap's cells: a pool of reused TextItems over a DisplayFrame.

The digits come from the frame (the one number formatter, the stage's decimals); this layer
only picks a font size at which the widest text fits its cell, and hides the numbers when
even the smallest readable size does not fit (the tooltip still has every number). It never
drops decimals to make a number fit.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QFont, QFontMetricsF

from attention_explorer.display.cells import cell_rgb, dark_text

#: Point size of the numbers in the cells; smaller cells shrink it down to the minimum.
VALUE_POINT_SIZE = 8.5
MIN_VALUE_POINT_SIZE = 6.0


def fitting_point_size(texts: list[str], cell_width: float, cell_height: float) -> float:
    """Point size (half points) at which every text fits a cell; 0 when below the minimum."""
    if not texts:
        return 0.0
    if cell_width <= 1:  # not laid out yet: assume it fits
        return VALUE_POINT_SIZE
    font = QFont()
    font.setPointSizeF(VALUE_POINT_SIZE)
    metrics = QFontMetricsF(font)
    widest = max(metrics.horizontalAdvance(text) for text in set(texts))
    scale = min(1.0, (cell_width - 4) / widest, (cell_height - 2) / metrics.height())
    size = math.floor(VALUE_POINT_SIZE * scale * 2) / 2
    return size if size >= MIN_VALUE_POINT_SIZE else 0.0


def width_for_texts(texts: list[str], columns: int) -> float:
    """Pixels ``columns`` cells need so ``texts`` fit at the minimum point size."""
    font = QFont()
    font.setPointSizeF(MIN_VALUE_POINT_SIZE)
    metrics = QFontMetricsF(font)
    widest = max((metrics.horizontalAdvance(t) for t in set(texts)), default=0.0)
    return columns * (widest + 6)


class CellTexts:
    """The pooled TextItems of one plot; :meth:`show` writes a frame's texts into its cells."""

    def __init__(self, plot):
        self.plot = plot
        self.font = QFont()
        self.font.setPointSizeF(VALUE_POINT_SIZE)
        self.items: list[pg.TextItem] = []
        self._state: list[list] = []  # per item: text, colour, position, visible

    def show(self, frame, table: np.ndarray | None, cell_size: tuple[float, float]) -> int:
        """Draw ``frame.texts`` (``table``: the colour map, for contrast); return how many."""
        texts = frame.texts if (frame is not None and table is not None) else []
        size = fitting_point_size(texts, *cell_size) if texts else 0.0
        count = len(texts) if size else 0
        colours: list[str] = []
        if count:
            rgb = cell_rgb(frame.positions(), frame.hidden, table)  # [r, c, 3]
            dark = dark_text(rgb).reshape(-1)  # [r*c]
            colours = ["#000000" if d else "#ffffff" for d in dark]
            if size != self.font.pointSizeF():
                self.font.setPointSizeF(size)
                for item in self.items:
                    item.setFont(self.font)
        self._grow(count)
        r0, _, c0, _ = frame.region if frame is not None else (0, 0, 0, 0)
        cols = frame.image.shape[1] if count else 1
        for k, (item, state) in enumerate(zip(self.items, self._state)):
            if k >= count:
                if state[3]:
                    item.setVisible(False)
                    state[3] = False
                continue
            position = (c0 + k % cols + 0.5, r0 + k // cols + 0.5)
            self._set(item, state, texts[k], colours[k], position)
        return count

    def _grow(self, count: int) -> None:
        while len(self.items) < count:
            item = pg.TextItem(anchor=(0.5, 0.5))
            item.setFont(self.font)
            item.setZValue(10)
            self.plot.addItem(item)
            self.items.append(item)
            self._state.append(["", "", None, False])

    @staticmethod
    def _set(item, state, text: str, colour: str, position) -> None:
        """Tell Qt only what changed."""
        if state[0] != text:
            item.setText(text)
            state[0] = text
        if state[1] != colour:
            item.setColor(colour)
            state[1] = colour
        if state[2] != position:
            item.setPos(*position)
            state[2] = position
        if not state[3]:
            item.setVisible(True)
            state[3] = True
