"""CellMap: a small labelled map drawn cell by cell with QPainter, for the Why? views.

Each cell is coloured by its shade value on the named colour map between ``levels`` (a
diverging map centred on 0 for signed values: levels ``(-a, a)``), holds a text (the value by
the one number formatter, or whatever the view gives: the logit lens writes a token and its
probability) and answers a hover with a line of words. Everything is written with
``QPainter.drawText`` and plain-text tooltips, so a token named ``<b>x</b>`` reads literally.
``cell_clicked(row, col)`` is emitted on a click; a view opens that layer (and head).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from PySide6.QtCore import QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from attention_explorer.core.numbers import format_number
from attention_explorer.ui.widgets.colormaps import colormap_by_name
from attention_explorer.ui.widgets.plain_text import luminance, plain_tooltip

MIN_CELL = QSize(26, 20)
BAR_WIDTH = 12
PAD = 6


def signed_levels(values: np.ndarray, floor: float = 0.0) -> tuple[float, float]:
    """``(-a, a)`` with ``a`` the largest finite magnitude of ``values`` (at least ``floor``,
    and never 0): a diverging scale centred on 0."""
    finite = np.asarray(values, dtype=np.float64)[np.isfinite(values)]
    a = max(float(np.abs(finite).max()) if finite.size else 0.0, floor)
    return (-a, a) if a > 0 else (-1.0, 1.0)


def colours_of(shade: np.ndarray, levels: tuple[float, float], cmap: str) -> np.ndarray:
    """``[rows, cols, 3]`` uint8 RGB of ``shade [rows, cols]`` on colour map ``cmap`` between
    ``levels``; a cell that is not finite is grey."""
    low, high = levels
    span = high - low if high > low else 1.0
    x = np.clip((np.asarray(shade, np.float64) - low) / span, 0.0, 1.0)  # [rows, cols]
    table = colormap_by_name(cmap).getLookupTable(nPts=256, mode="byte", alpha=False)[:, :3]
    rgb = np.asarray(table, np.uint8)[np.nan_to_num(x * 255).astype(int)]  # [rows, cols, 3]
    rgb[~np.isfinite(shade)] = (160, 160, 160)
    return rgb


class CellMap(QWidget):
    """A rows x columns map with a title, row and column labels, cell texts and a colour bar.

    :meth:`set_map` gives its numbers; ``cell_clicked(row, col)`` on a click; ``hovered(row,
    col)`` when the pointer enters a cell (its words are :meth:`hover_text`)."""

    cell_clicked = Signal(int, int)
    hovered = Signal(int, int)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.values = np.zeros((0, 0))
        self.shade = self.values
        self.texts: list[list[str]] = []
        self.row_labels: list[str] = []
        self.col_labels: list[str] = []
        self.levels = (-1.0, 1.0)
        self.cmap = "CET-D1"
        self.title = ""
        self.bar_ticks: list[tuple[float, str]] = []
        self.message = "Nothing computed yet."
        self.last_hover = ""
        self._hover: Callable[[int, int], str] | None = None
        self._rgb = np.zeros((0, 0, 3), np.uint8)
        self._hover_cell: tuple[int, int] | None = None
        self._marked: tuple[int, int] | None = None

    # -- content ----------------------------------------------------------------------------
    def set_map(
        self,
        values,
        row_labels: Sequence[str],
        col_labels: Sequence[str],
        *,
        title: str = "",
        levels: tuple[float, float] | None = None,
        cmap: str = "CET-D1",
        shade=None,
        texts: Sequence[Sequence[str]] | None = None,
        hover: Callable[[int, int], str] | None = None,
        decimals: int = 2,
        bar_ticks: Sequence[tuple[float, str]] | None = None,
    ) -> None:
        """Show ``values [rows, cols]`` labelled by ``row_labels`` and ``col_labels``.

        ``shade`` (default ``values``) decides the colours between ``levels`` (default: a
        diverging scale centred on 0); ``texts`` the cell texts (default: each value with
        ``decimals``); ``hover(row, col)`` the words a hover shows (default: the labels and
        the value). ValueError names a shape that does not match the labels."""
        values = np.asarray(values, dtype=np.float64)  # [rows, cols]
        shade = values if shade is None else np.asarray(shade, dtype=np.float64)
        rows, cols = values.shape if values.ndim == 2 else (-1, -1)
        if values.ndim != 2 or shade.shape != values.shape:
            raise ValueError(f"a map needs matching 2-D values and shades, got {values.shape}")
        if len(row_labels) != rows or len(col_labels) != cols:
            raise ValueError(
                f"{len(row_labels)} row and {len(col_labels)} column labels for a {rows}x{cols} map"
            )
        self.values, self.shade = values, shade
        self.row_labels, self.col_labels = (
            [str(x) for x in row_labels],
            [str(x) for x in col_labels],
        )
        self.levels = signed_levels(shade) if levels is None else tuple(map(float, levels))
        self.cmap, self.title = cmap, title
        if texts is None:
            texts = [[format_number(v, decimals, display=True) for v in row] for row in values]
        self.texts = [[str(t) for t in row] for row in texts]
        self._hover = hover
        low, high = self.levels
        default_ticks = [(low, format_number(low, 3, True)), (high, format_number(high, 3, True))]
        if low < 0 < high:
            default_ticks.insert(1, (0.0, "0"))
        self.bar_ticks = list(default_ticks if bar_ticks is None else bar_ticks)
        self._rgb = colours_of(shade, self.levels, cmap)  # [rows, cols, 3]
        self._marked = None
        self.message = ""
        self.updateGeometry()
        self.update()

    def show_message(self, text: str) -> None:
        """Show ``text`` instead of a map."""
        self.values = self.shade = np.zeros((0, 0))
        self.texts, self.message = [], text
        self.update()

    def mark(self, row: int, col: int) -> None:
        """Outline cell (row, col) (the chosen head, the clicked cell)."""
        self._marked = (row, col)
        self.update()

    def hover_text(self, row: int, col: int) -> str:
        """The words a hover on (row, col) shows."""
        if self._hover is not None:
            return self._hover(row, col)
        value = format_number(self.values[row, col], 4, display=True)
        return f"{self.row_labels[row]}, {self.col_labels[col]}: {value}"

    # -- geometry ---------------------------------------------------------------------------
    def _label_width(self) -> int:
        metrics = QFontMetrics(self.font())
        return min(160, max((metrics.horizontalAdvance(t) + 4 for t in self.row_labels), default=0))

    def _grid(self) -> QRect:
        """The rectangle the cells fill."""
        line = QFontMetrics(self.font()).height()
        top = PAD + (line + PAD if self.title else 0)
        left = PAD + self._label_width() + PAD
        right = self.width() - PAD - BAR_WIDTH - 52
        bottom = self.height() - PAD - line - PAD
        return QRect(left, top, max(right - left, 1), max(bottom - top, 1))

    def cell_rect(self, row: int, col: int) -> QRect:
        """Where cell (row, col) is drawn."""
        grid = self._grid()
        rows, cols = self.values.shape
        x0 = grid.left() + grid.width() * col // cols
        x1 = grid.left() + grid.width() * (col + 1) // cols
        y0 = grid.top() + grid.height() * row // rows
        y1 = grid.top() + grid.height() * (row + 1) // rows
        return QRect(x0, y0, x1 - x0, y1 - y0)

    def cell_at(self, point: QPoint) -> tuple[int, int] | None:
        """The (row, col) under ``point`` (None outside the cells)."""
        if self.values.size == 0:
            return None
        grid = self._grid()
        if not grid.contains(point):
            return None
        rows, cols = self.values.shape
        col = (point.x() - grid.left()) * cols // grid.width()
        row = (point.y() - grid.top()) * rows // grid.height()
        return (min(row, rows - 1), min(col, cols - 1))

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt API
        rows, cols = self.values.shape if self.values.size else (4, 4)
        return QSize(self._label_width() + cols * 56 + BAR_WIDTH + 80, rows * 32 + 80).boundedTo(
            QSize(1200, 900)
        )

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt API
        return QSize(220, 140)

    # -- events -----------------------------------------------------------------------------
    def mouseMoveEvent(self, event) -> None:  # noqa: N802 - Qt API
        cell = self.cell_at(event.position().toPoint())
        if cell is None:
            self._hover_cell = None
            QToolTip.hideText()
            return
        if cell != self._hover_cell:
            self._hover_cell = cell
            self.last_hover = self.hover_text(*cell)
            self.hovered.emit(*cell)
            QToolTip.showText(
                event.globalPosition().toPoint(), plain_tooltip(self.last_hover), self
            )

    def mousePressEvent(self, event) -> None:  # noqa: N802 - Qt API
        cell = self.cell_at(event.position().toPoint())
        if cell is not None and event.button() == Qt.MouseButton.LeftButton:
            self.mark(*cell)
            self.cell_clicked.emit(*cell)

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt API
        painter = QPainter(self)
        text_colour = self.palette().color(QPalette.ColorRole.Text)
        painter.setPen(text_colour)
        if self.values.size == 0:
            painter.drawText(
                self.rect(), Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, self.message
            )
            return
        metrics = QFontMetrics(self.font())
        if self.title:
            title = metrics.elidedText(
                self.title, Qt.TextElideMode.ElideRight, self.width() - 2 * PAD
            )
            painter.drawText(PAD, PAD + metrics.ascent(), title)
        self._paint_cells(painter, metrics)
        self._paint_labels(painter, metrics, text_colour)
        self._paint_bar(painter, metrics, text_colour)

    def _paint_cells(self, painter: QPainter, metrics: QFontMetrics) -> None:
        rows, cols = self.values.shape
        small = QFont(self.font())
        small.setPointSizeF(max(6.5, self.font().pointSizeF() - 1))
        painter.setFont(small)
        for r in range(rows):
            for c in range(cols):
                rect = self.cell_rect(r, c)
                colour = QColor(*map(int, self._rgb[r, c]))
                painter.fillRect(rect, colour)
                painter.setPen(QColor("#000000") if luminance(colour) > 0.45 else QColor("#ffffff"))
                lines = self.texts[r][c].split("\n")
                fitted = "\n".join(
                    QFontMetrics(small).elidedText(t, Qt.TextElideMode.ElideRight, rect.width() - 2)
                    for t in lines
                )
                if rect.height() >= QFontMetrics(small).height() * len(lines) and rect.width() > 14:
                    painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, fitted)
        if self._marked is not None:
            painter.setPen(QPen(QColor("#000000"), 3))
            painter.drawRect(self.cell_rect(*self._marked).adjusted(1, 1, -1, -1))
            painter.setPen(QPen(QColor("#ffffff"), 1))
            painter.drawRect(self.cell_rect(*self._marked).adjusted(1, 1, -1, -1))
        painter.setFont(self.font())

    def _paint_labels(self, painter: QPainter, metrics: QFontMetrics, colour: QColor) -> None:
        painter.setPen(colour)
        grid = self._grid()
        width = self._label_width()
        for r, label in enumerate(self.row_labels):
            rect = self.cell_rect(r, 0)
            text = metrics.elidedText(label, Qt.TextElideMode.ElideRight, width)
            box = QRect(PAD, rect.top(), width, rect.height())
            painter.drawText(box, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, text)
        for c, label in enumerate(self.col_labels):
            rect = self.cell_rect(0, c)
            text = metrics.elidedText(label, Qt.TextElideMode.ElideRight, rect.width())
            box = QRect(rect.left(), grid.bottom() + 2, rect.width(), metrics.height() + PAD)
            painter.drawText(box, Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop, text)

    def _paint_bar(self, painter: QPainter, metrics: QFontMetrics, colour: QColor) -> None:
        grid = self._grid()
        x = grid.right() + PAD + 4
        steps = max(grid.height(), 2)
        ramp = np.linspace(self.levels[1], self.levels[0], steps)[:, None]  # [steps, 1]
        rgb = colours_of(ramp, self.levels, self.cmap)  # [steps, 1, 3]
        for i in range(steps):
            painter.fillRect(x, grid.top() + i, BAR_WIDTH, 1, QColor(*map(int, rgb[i, 0])))
        painter.setPen(colour)
        low, high = self.levels
        span = high - low if high > low else 1.0
        for value, label in self.bar_ticks:
            y = grid.top() + int((high - value) / span * (steps - 1))
            painter.drawLine(x + BAR_WIDTH, y, x + BAR_WIDTH + 3, y)
            painter.drawText(x + BAR_WIDTH + 5, y + metrics.ascent() // 2, label)
