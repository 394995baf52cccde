"""ModelOverview: every layer's and head's attention weights as one grid of small maps,
as BertViz's model view. Rows are layers, columns heads; click a map to open that head.

The maps form one mosaic image (one ImageItem, fast for 6 x 12 maps or more) with empty gaps.
Hovering a map, or a token in the Model panel, outlines that token's attention row in every
head of the layer.
"""

from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QGraphicsRectItem, QVBoxLayout, QWidget

from attention_explorer.numbers import format_number
from attention_explorer.ui.colormaps import colormap_by_name

_LAYER_PEN = pg.mkPen("#f0a020", width=2)
_ROW_PEN = pg.mkPen("#ff3030", width=1.5)


def mosaic(weights: np.ndarray, gap: int) -> np.ndarray:
    """``weights [layers, heads, n, m]`` laid out as one ``[L*(n+gap)-gap, H*(m+gap)-gap]``
    image, the gaps NaN (drawn transparent)."""
    layers, heads, n, m = weights.shape
    out = np.full((layers * (n + gap) - gap, heads * (m + gap) - gap), np.nan, np.float32)
    for layer in range(layers):
        for head in range(heads):
            r, c = layer * (n + gap), head * (m + gap)
            out[r : r + n, c : c + m] = weights[layer, head]  # [n, m]
    return out


class ModelOverview(QWidget):
    """The layers x heads grid. ``head_clicked(layer, head)`` when a map is clicked;
    ``row_hovered(layer, row)`` (row -1 when the pointer leaves the maps)."""

    head_clicked = Signal(int, int)
    row_hovered = Signal(int, int)

    def __init__(self, colormap: str = "viridis", parent: QWidget | None = None):
        super().__init__(parent)
        self.weights: np.ndarray | None = None  # [layers, heads, n, n]
        self.tokens: tuple[str, ...] = ()
        self.layer = 0
        self.row: int | None = None
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setMinimumSize(360, 260)
        self.plot = self.graphics.addPlot()
        self.plot.invertY(True)
        self.plot.setAspectLocked(False)  # the maps stretch to fill the dock, as in BertViz
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.showAxis("top")
        self.plot.hideAxis("bottom")
        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setColorMap(colormap_by_name(colormap))
        self.plot.addItem(self.image)
        self.layer_frame = QGraphicsRectItem()
        self.layer_frame.setPen(_LAYER_PEN)
        self.plot.addItem(self.layer_frame)
        self._row_marks: list[QGraphicsRectItem] = []
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.graphics)
        self.graphics.setBackground(self.palette().color(QPalette.ColorRole.Base))
        self.graphics.setToolTip("Click a map to open that head with every stage, editable")
        scene = self.graphics.scene()
        scene.sigMouseClicked.connect(self._on_click)
        scene.sigMouseMoved.connect(self._on_move)

    # -- geometry ---------------------------------------------------------------------------
    @property
    def gap(self) -> int:
        """Empty cells between two maps."""
        n = 0 if self.weights is None else self.weights.shape[2]
        return max(1, round(n / 6))

    def map_rect(self, layer: int, head: int) -> QRectF:
        """Where the map of (layer, head) lies, in image cells."""
        n, m = self.weights.shape[2:]
        g = self.gap
        return QRectF(head * (m + g), layer * (n + g), m, n)

    def cell_at(self, x: float, y: float) -> tuple[int, int, int] | None:
        """(layer, head, query row) under image point (x, y), or None in a gap or outside."""
        if self.weights is None or x < 0 or y < 0:
            return None
        layers, heads, n, m = self.weights.shape
        g = self.gap
        head, cx = divmod(int(x), m + g)
        layer, cy = divmod(int(y), n + g)
        if head >= heads or layer >= layers or cx >= m or cy >= n:
            return None
        return layer, head, cy

    # -- content ----------------------------------------------------------------------------
    def set_weights(self, weights: np.ndarray, tokens) -> None:
        """Show ``weights [layers, heads, n, n]`` with the tokens' names."""
        self.weights = np.asarray(weights, dtype=np.float32)
        self.tokens = tuple(tokens)
        layers, heads, n, m = self.weights.shape
        g = self.gap
        self.image.setImage(mosaic(self.weights, g), autoLevels=False, levels=(0.0, 1.0))
        left = [((k * (n + g) + n / 2), f"layer {k}") for k in range(layers)]
        top = [((k * (m + g) + m / 2), f"h{k}") for k in range(heads)]
        self.plot.getAxis("left").setTicks([left, []])
        self.plot.getAxis("top").setTicks([top, []])
        self.plot.setRange(
            xRange=(0, heads * (m + g) - g), yRange=(0, layers * (n + g) - g), padding=0.01
        )
        self.set_layer(min(self.layer, layers - 1))

    def set_colormap(self, name: str) -> None:
        """Use the colour map ``name`` (the window's weights map)."""
        self.image.setColorMap(colormap_by_name(name))

    def set_layer(self, layer: int) -> None:
        """Frame the row of maps of ``layer`` (the Model panel's layer picker)."""
        self.layer = layer
        if self.weights is None:
            return
        heads = self.weights.shape[1]
        first, last = self.map_rect(layer, 0), self.map_rect(layer, heads - 1)
        self.layer_frame.setRect(first.united(last).adjusted(-0.3, -0.3, 0.3, 0.3))
        self.highlight_row(self.row)

    def highlight_row(self, row: int | None, layer: int | None = None) -> None:
        """Outline query ``row``'s attention in every head of ``layer`` (default: the framed
        one); None clears the outlines."""
        for mark in self._row_marks:
            self.plot.removeItem(mark)
        self._row_marks = []
        self.row = row
        if self.weights is None or row is None or not 0 <= row < self.weights.shape[2]:
            return
        layer = self.layer if layer is None else layer
        for head in range(self.weights.shape[1]):
            rect = self.map_rect(layer, head)
            mark = QGraphicsRectItem(QRectF(rect.x(), rect.y() + row, rect.width(), 1))
            mark.setPen(_ROW_PEN)
            self.plot.addItem(mark)
            self._row_marks.append(mark)

    def highlighted_rows(self) -> list[QRectF]:
        """The outlined rows, in image cells (one per head while a token is hovered)."""
        return [mark.rect() for mark in self._row_marks]

    # -- mouse ------------------------------------------------------------------------------
    def _image_point(self, scene_pos):
        point = self.plot.vb.mapSceneToView(scene_pos)
        return point.x(), point.y()

    def _on_click(self, event) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            return
        hit = self.cell_at(*self._image_point(event.scenePos()))
        if hit is not None:
            self.head_clicked.emit(hit[0], hit[1])

    def _on_move(self, scene_pos) -> None:
        hit = self.cell_at(*self._image_point(scene_pos))
        if hit is None:
            self.row_hovered.emit(self.layer, -1)
            self.graphics.setToolTip("Click a map to open that head with every stage, editable")
            return
        layer, head, row = hit
        weights = self.weights[layer, head, row]  # [m]
        best = int(np.argmax(weights))
        query, key = html.escape(self.tokens[row]), html.escape(self.tokens[best])
        self.graphics.setToolTip(  # names escaped: a token such as "<b>" shows as typed
            f"<p>layer {layer}, head {head}: “{query}” looks most at “{key}” "
            f"({format_number(weights[best], 2, display=True)}). Click to open.</p>"
        )
        self.row_hovered.emit(layer, row)
        self.highlight_row(row, layer)
