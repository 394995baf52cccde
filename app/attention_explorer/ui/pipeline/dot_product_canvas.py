"""PairCanvas: the painted rows of the dot-product view (q, k and their element-wise
products), coloured by sign, each product over a bar from its cell's middle; a click picks a
component and a drag up or down on a q or k cell asks to change it (the view writes it)."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QWidget

from attention_explorer.core.numbers import format_number

#: Height of the q, k and product rows, in pixels (shared alike when the view is short).
CELL_HEIGHT = 22
#: Gap above the products row.
GAP = 4
#: Label column width.
LABEL_WIDTH = 30
#: A drag of this many pixels changes a component by its row's largest magnitude / 50.
DRAG_STEPS = 50


def shown_number(value: float) -> str:
    """A number as the dot-product views write it (the display digits of core/numbers.py)."""
    return format_number(float(value), display=True)


class PairCanvas(QWidget):
    """The painted rows: q, k and the products. ``dragged(row, component, value)`` while the
    learner drags a q (row 0) or k (row 1) cell; ``picked(component)`` on a click."""

    dragged = Signal(int, int, float)
    picked = Signal(int)
    released = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.q = np.zeros(0)  # [d_k]
        self.k = np.zeros(0)  # [d_k]
        self.products = np.zeros(0)  # [d_k]
        self.current = 0
        self.names = ("q", "k", "q×k")  # the rows' names
        self.editable_rows: tuple[int, ...] = ()  # rows a drag may change (0: q, 1: k)
        self._drag: tuple[int, int, float, float] | None = None  # row, component, y0, value0
        self.setMinimumHeight(3 * self.fontMetrics().height() + GAP)  # a line of text a row
        self.setMinimumWidth(160)
        self.setMouseTracking(True)

    def set_numbers(self, q, k, products) -> None:
        """Show ``q``, ``k`` (``[d_k]`` each) and their products (``[d_k]``, from the engine)."""
        self.q, self.k = np.asarray(q, float), np.asarray(k, float)
        self.products = np.asarray(products, float)
        self.current = min(self.current, max(0, self.q.size - 1))
        self.update()

    def _label_width(self) -> int:
        """The row names' column: "q×k" in the current type, at least LABEL_WIDTH."""
        return max(LABEL_WIDTH, self.fontMetrics().horizontalAdvance("q×k") + 8)

    def _column_width(self) -> float:
        return (self.width() - self._label_width()) / max(1, self.q.size)

    def cell_rect(self, row: int, component: int) -> QRectF:
        """Where cell ``component`` of row 0 (q), 1 (k) or 2 (products) is drawn."""
        width = self._column_width()
        x = self._label_width() + component * width
        cell = self._cell_height()
        top = (0, cell, 2 * cell + GAP)[row]
        return QRectF(x, top, width, cell)

    def _cell_height(self) -> float:
        """The rows' height: the designed one, shared alike when the view is short."""
        return min(float(CELL_HEIGHT), (self.height() - GAP) / 3)

    def bar_rect(self, component: int) -> QRectF:
        """The bar of product ``component``: from the middle of its cell, to the right when
        positive, to the left when negative, half the cell wide for the largest product."""
        rect = self.cell_rect(2, component).adjusted(2, 2, -2, -2)
        products = self.products
        top = float(np.max(np.abs(products))) if products.size else 0.0
        value = float(products[component]) if component < products.size else 0.0
        length = rect.width() / 2 * (abs(value) / top if top > 0 else 0.0)
        middle = rect.center().x()
        left = middle if value >= 0 else middle - length
        return QRectF(left, rect.top(), length, rect.height())

    def shows_numbers(self) -> bool:
        """True when the cells are wide enough to write their numbers in."""
        return self._column_width() >= 38

    def paintEvent(self, _event) -> None:  # noqa: N802 - Qt API name
        """Draw the q and k cells, coloured by sign, and the products with their bars."""
        painter = QPainter(self)
        text = self.palette().windowText().color()
        painter.setPen(text)
        for row, name in enumerate(self.names):
            rect = self.cell_rect(row, 0)
            painter.drawText(
                QRectF(0, rect.top(), self._label_width() - 4, rect.height()),
                Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight,
                name,
            )
        for row, values in enumerate((self.q, self.k)):
            self._paint_cells(painter, row, values, text)
        self._paint_bars(painter, text)
        painter.end()

    def _paint_cells(self, painter: QPainter, row: int, values: np.ndarray, text: QColor) -> None:
        top = float(np.max(np.abs(values))) if values.size else 1.0
        show_text = self.shows_numbers()
        for c, value in enumerate(values):
            rect = self.cell_rect(row, c).adjusted(1, 1, -1, -1)
            share = abs(value) / top if top > 0 else 0.0
            base = QColor(214, 96, 77) if value < 0 else QColor(67, 147, 195)
            base.setAlphaF(0.25 + 0.6 * share)
            painter.fillRect(rect, base)
            if c == self.current:
                painter.setPen(QPen(QColor("#f0a020"), 2))
                painter.drawRect(rect)
            painter.setPen(text)
            if show_text:
                painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, shown_number(value))

    def _paint_bars(self, painter: QPainter, text: QColor) -> None:
        show_text = self.shows_numbers()
        for c, value in enumerate(self.products):
            cell = self.cell_rect(2, c).adjusted(1, 1, -1, -1)
            middle = cell.center().x()
            axis = QColor(text)
            axis.setAlphaF(0.35)  # the zero line, light: the number is written across it
            painter.setPen(QPen(axis, 1))
            painter.drawLine(QPointF(middle, cell.top()), QPointF(middle, cell.bottom()))
            colour = QColor(214, 96, 77) if value < 0 else QColor(67, 147, 195)
            colour.setAlphaF(0.55)
            painter.fillRect(self.bar_rect(c), colour)
            if c == self.current:
                painter.setPen(QPen(QColor("#f0a020"), 2))
                painter.drawRect(cell)
            painter.setPen(text)
            if show_text:
                painter.drawText(cell, Qt.AlignmentFlag.AlignCenter, shown_number(value))

    def _hit(self, pos) -> tuple[int, int] | None:
        for row in (0, 1):
            for c in range(self.q.size):
                if self.cell_rect(row, c).contains(pos):
                    return row, c
        for c in range(self.q.size):
            if self.cell_rect(2, c).contains(pos):
                return 2, c
        return None

    def mousePressEvent(self, event) -> None:  # noqa: N802 - Qt API name
        """Pick the component under the mouse; on a q or k cell, start dragging it."""
        hit = self._hit(event.position())
        if hit is None:
            return
        row, c = hit
        self.current = c
        self.picked.emit(c)
        if row in self.editable_rows:
            value = float((self.q, self.k)[row][c])
            self._drag = (row, c, event.position().y(), value)
        self.update()

    def mouseMoveEvent(self, event) -> None:  # noqa: N802 - Qt API name
        """While dragging, up raises the component and down lowers it."""
        if self._drag is None:
            return
        row, c, y0, value0 = self._drag
        values = (self.q, self.k)[row]
        step = max(float(np.max(np.abs(values))), 0.1) / DRAG_STEPS
        self.dragged.emit(row, c, value0 + (y0 - event.position().y()) * step)

    def mouseReleaseEvent(self, _event) -> None:  # noqa: N802 - Qt API name
        """End the drag (the edits of one drag are one undo step)."""
        if self._drag is not None:
            self._drag = None
            self.released.emit()
