"""The frames drawn around the selected cell(s) of a heatmap (two pens: dark outside, light in).

A selection may cover several rectangles (e.g. a shared stage picked from another view); each
rectangle gets a pair of frame items, created on demand and hidden when unused. Presenter mode
swaps in bolder pens so the followed cell reads from the back of the room.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QGraphicsRectItem

SELECTION_PENS = (pg.mkPen("#000000", width=4), pg.mkPen("#ffffff", width=2))
#: Presenter mode frames the followed cell so it reads from the back of the room.
BOLD_PENS = (pg.mkPen("#000000", width=10), pg.mkPen("#ffd21f", width=5))


class SelectionFrames:
    """Pairs of rectangle items on ``plot`` framing the selected cells."""

    def __init__(self, plot):
        self._plot = plot
        self._pens = SELECTION_PENS
        self._items = [self._new_item(pen) for pen in SELECTION_PENS]

    def _new_item(self, pen) -> QGraphicsRectItem:
        rect = QGraphicsRectItem()
        rect.setPen(pen)
        rect.setZValue(20)
        rect.setVisible(False)
        self._plot.addItem(rect)
        return rect

    def set_bold(self, bold: bool) -> None:
        """Bold pens (presenter mode) or the normal ones, applied to every frame now."""
        self._pens = BOLD_PENS if bold else SELECTION_PENS
        for k, item in enumerate(self._items):
            item.setPen(self._pens[k % 2])

    def pen_width(self) -> float:
        """Width in pixels of the outer frame's pen."""
        return self._items[0].pen().widthF()

    def show(self, rects: list) -> None:
        """Frame each QRectF of ``rects`` (plot coordinates); hide the frames left over."""
        while len(self._items) < 2 * len(rects):
            self._items.append(self._new_item(self._pens[0]))
            self._items.append(self._new_item(self._pens[1]))
        for k, item in enumerate(self._items):
            shown = k // 2 < len(rects)
            item.setVisible(shown)
            if shown:
                item.setRect(rects[k // 2])
