"""Zoom and pan for a heatmap, and a wheel that scrolls the stage column unless zoomed.

Ctrl + wheel zooms about the pointer; ``+`` / ``-`` zoom about the centre and ``0`` shows the
whole stage; a drag pans once zoomed. A plain wheel over a view that shows its whole stage goes
to the enclosing scroll area, so the stage column scrolls as over any other widget.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QAbstractScrollArea, QApplication

#: How much one ``+`` or ``-`` press zooms.
KEY_ZOOM = 0.5


def visible_region(box, rows: int, cols: int) -> tuple[int, int, int, int]:
    """The cells the view box shows: (first row, end row, first column, end column)."""
    (x0, x1), (y0, y1) = box.viewRange()
    r0, r1 = max(0, math.floor(y0 + 1e-6)), min(rows, math.ceil(y1 - 1e-6))
    c0, c1 = max(0, math.floor(x0 + 1e-6)), min(cols, math.ceil(x1 - 1e-6))
    return r0, max(r1, r0 + 1), c0, max(c1, c0 + 1)


class ZoomControl(QObject):
    """Wheel and key handling for one view box inside ``graphics`` (a GraphicsLayoutWidget)."""

    def __init__(self, graphics, box, on_reset):
        super().__init__(graphics)
        self.graphics, self.box, self._on_reset = graphics, box, on_reset
        self.shape = (1, 1)
        graphics.viewport().installEventFilter(self)
        graphics.installEventFilter(self)
        graphics.setFocusPolicy(Qt.FocusPolicy.StrongFocus)

    def set_shape(self, rows: int, cols: int) -> None:
        """The stage's size: the limits of panning and zooming."""
        if (rows, cols) == self.shape:
            return
        self.shape = (rows, cols)
        self.box.setLimits(xMin=0, xMax=cols, yMin=0, yMax=rows, minXRange=1, minYRange=1)
        self.reset()

    def zoomed(self) -> bool:
        """True while the view shows only part of the stage."""
        rows, cols = self.shape
        return visible_region(self.box, rows, cols) != (0, rows, 0, cols)

    def reset(self) -> None:
        """Show the whole stage."""
        rows, cols = self.shape
        self.box.setRange(xRange=(0, cols), yRange=(0, rows), padding=0)
        self._on_reset()

    def show_around(self, row: int, col: int, span: int) -> None:
        """Show about ``span`` x ``span`` cells with cell (``row``, ``col``) in the middle
        (kept inside the stage)."""
        rows, cols = self.shape
        height, width = min(span, rows), min(span, cols)
        top = min(max(0, row - height // 2), rows - height)
        left = min(max(0, col - width // 2), cols - width)
        self.box.setRange(xRange=(left, left + width), yRange=(top, top + height), padding=0)

    def zoom(self, factor: float) -> None:
        """Zoom by ``factor`` (< 1 zooms in) about the centre of what is shown."""
        self.box.scaleBy((factor, factor))

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt API name
        """Route wheel and key events (see the module docstring)."""
        kind = event.type()
        if kind == QEvent.Type.Wheel and watched is self.graphics.viewport():
            ctrl = bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
            if ctrl or self.zoomed():
                return False  # the view box zooms (pyqtgraph's wheel handling)
            scroll = self._scroll_area()
            if scroll is not None:
                QApplication.sendEvent(scroll.viewport(), event)
                return True
            return False
        if kind == QEvent.Type.KeyPress and watched is self.graphics:
            key = event.key()
            if key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
                self.zoom(KEY_ZOOM)
                return True
            if key in (Qt.Key.Key_Minus, Qt.Key.Key_Underscore):
                self.zoom(1 / KEY_ZOOM)
                return True
            if key == Qt.Key.Key_0:
                self.reset()
                return True
        return False

    def _scroll_area(self) -> QAbstractScrollArea | None:
        widget = self.graphics.parentWidget()
        while widget is not None and not isinstance(widget, QAbstractScrollArea):
            widget = widget.parentWidget()
        return widget
