"""ModelOverview: every layer's and head's attention weights as one grid of small maps,
as BertViz's model view. Rows are layers, columns heads; click a map to open that head.

The maps form one mosaic image (one ImageItem, fast for 6 x 12 maps or more) with empty gaps.
Hovering a map, or a token in the Model panel, outlines that token's attention row in every
head of the layer, and the line under the maps names the query and key under the pointer.
Before a model is loaded the overview says so instead of drawing an empty plot. The grid
fits the dock (MiniLM's 6 x 12 maps all in sight, each at least ``FIT_MAP_PX``); "+" zooms in
(every map then at least ``MIN_MAP_PX`` times the zoom, and the grid scrolls), "Fit" goes
back. A difference (signed levels) gets a colour bar with its range and scrolls to the first
layer it changed; a difference of zeros says why nothing changed instead of a blank field.

A right-click on a map emits ``head_menu_requested``; knocked-out heads are drawn crossed and
layers the edit cannot reach are marked "unchanged" (see ``set_marks``).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPoint, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QGraphicsRectItem,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from attention_explorer.core.numbers import format_number
from attention_explorer.ui.widgets.colormaps import colormap_by_name

#: The least size of one map on screen, in pixels (both ways).
MIN_MAP_PX = 40
#: Room for the layer labels on the left and the head labels on top, in pixels.
AXES_PX = (64, 28)
EMPTY_TEXT = "Load a model: the attention of every layer and head appears here."
#: The least size of one map while the grid fits the dock, in pixels.
FIT_MAP_PX = 8
#: Each "+" makes the maps this much larger.
ZOOM_STEP = 1.5
NOTHING_CHANGED_TEXT = (
    "No attention weight changed. A knockout changes what its head writes to the output "
    "(what later layers and the prediction read), not the attention of its own layer: "
    "see the Output panel, or knock out a head of an earlier layer to see the later layers' "
    "attention move."
)
_LAYER_PEN = pg.mkPen("#f0a020", width=2)
_ROW_PEN = pg.mkPen("#ff3030", width=1.5)
_CROSS_PEN = pg.mkPen("#e02020", width=2.5)
_HINT = "Click a map to open that head; right-click to knock it out or restore it"


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
    ``row_hovered(layer, row)`` (row -1 when the pointer leaves the maps);
    ``head_menu_requested(layer, head, global_pos)`` on a right-click."""

    head_clicked = Signal(int, int)
    row_hovered = Signal(int, int)
    head_menu_requested = Signal(int, int, QPoint)

    def __init__(self, colormap: str = "viridis", parent: QWidget | None = None):
        super().__init__(parent)
        self.weights: np.ndarray | None = None  # [layers, heads, n, n]
        self.tokens: tuple[str, ...] = ()
        self.layer = 0
        self.row: int | None = None
        self.levels = (0.0, 1.0)
        self.graphics = pg.GraphicsLayoutWidget()
        self.plot = self.graphics.addPlot()
        self.plot.invertY(True)
        self.plot.setAspectLocked(False)  # the maps stretch to fill the dock, as in BertViz
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.showAxis("top")
        self.plot.hideAxis("bottom")
        self.plot.getAxis("left").setWidth(AXES_PX[0] - 8)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setColorMap(colormap_by_name(colormap))
        self.plot.addItem(self.image)
        self.layer_frame = QGraphicsRectItem()
        self.layer_frame.setPen(_LAYER_PEN)
        self.plot.addItem(self.layer_frame)
        self._row_marks: list[QGraphicsRectItem] = []
        self._marks: list[object] = []  # crosses and "unchanged" labels
        self._marks_key: tuple | None = None  # what the marks show, to skip redrawing them
        self.empty = QLabel(EMPTY_TEXT)
        self.empty.setTextFormat(Qt.TextFormat.PlainText)
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.bar = pg.ColorBarItem(interactive=False, colorMapMenu=False, width=10)
        self.bar.setColorMap(colormap_by_name(colormap))
        self.bar.setImageItem(self.image, insert_in=self.plot)
        self.bar.axis.setLabel("edited − original")
        self.bar.hide()
        self.zoom = 0  # 0: fit the dock; k: every map MIN_MAP_PX * ZOOM_STEP**(k-1)
        self.scroll = QScrollArea()
        self.scroll.setWidget(self.graphics)
        self.scroll.setWidgetResizable(True)
        self.fit_button = QPushButton("Fit")
        self.fit_button.setToolTip("Fit every map in the dock")
        self.fit_button.clicked.connect(lambda: self.set_zoom(0))
        self.zoom_in = QPushButton("+")
        self.zoom_in.setToolTip("Larger maps (the grid scrolls)")
        self.zoom_in.clicked.connect(lambda: self.set_zoom(self.zoom + 1))
        self.zoom_out = QPushButton("−")
        self.zoom_out.setToolTip("Smaller maps")
        self.zoom_out.clicked.connect(lambda: self.set_zoom(max(0, self.zoom - 1)))
        for button in (self.fit_button, self.zoom_in, self.zoom_out):
            button.setFixedWidth(max(28, button.sizeHint().height() + 6))
        self.fit_button.setFixedWidth(self.fit_button.sizeHint().width())
        self.pages = QStackedWidget()
        self.pages.addWidget(self.empty)
        self.pages.addWidget(self.scroll)
        self.hover = QLabel(" ")
        self.hover.setTextFormat(Qt.TextFormat.PlainText)  # token names are never rich text
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.pages, 1)
        line = QHBoxLayout()
        line.addWidget(self.hover, 1)
        for button in (self.zoom_out, self.fit_button, self.zoom_in):
            line.addWidget(button)
        layout.addLayout(line)
        self.graphics.setBackground(self.palette().color(QPalette.ColorRole.Base))
        self.graphics.setToolTip(_HINT)
        scene = self.graphics.scene()
        scene.sigMouseClicked.connect(self._on_click)
        scene.sigMouseMoved.connect(self._on_move)

    # -- geometry ---------------------------------------------------------------------------
    @property
    def gap(self) -> int:
        """Empty cells between two maps."""
        n = 0 if self.weights is None else self.weights.shape[2]
        return max(1, round(n / 6))

    def is_empty(self) -> bool:
        """True before any weights were set (the overview shows a line of text, no plot)."""
        return self.weights is None

    def map_rect(self, layer: int, head: int) -> QRectF:
        """Where the map of (layer, head) lies, in image cells."""
        n, m = self.weights.shape[2:]
        g = self.gap
        return QRectF(head * (m + g), layer * (n + g), m, n)

    def map_pixels(self, layer: int, head: int) -> QRectF:
        """Where the map of (layer, head) lies on screen, in the graphics widget's pixels."""
        scene = self.plot.vb.mapViewToScene(self.map_rect(layer, head)).boundingRect()
        return self.graphics.mapFromScene(scene).boundingRect().toRectF()

    def cell_at(self, x: float, y: float) -> tuple[int, int, int, int] | None:
        """(layer, head, query row, key column) under image point (x, y), or None in a gap
        or outside."""
        if self.weights is None or x < 0 or y < 0:
            return None
        layers, heads, n, m = self.weights.shape
        g = self.gap
        head, cx = divmod(int(x), m + g)
        layer, cy = divmod(int(y), n + g)
        if head >= heads or layer >= layers or cx >= m or cy >= n:
            return None
        return layer, head, cy, cx

    # -- content ----------------------------------------------------------------------------
    def set_weights(self, weights: np.ndarray, tokens, levels=(0.0, 1.0)) -> None:
        """Show ``weights [layers, heads, n, n]`` with the tokens' names, coloured over
        ``levels`` (0..1 for weights; a symmetric range for a difference)."""
        self.weights = np.asarray(weights, dtype=np.float32)
        self.tokens = tuple(tokens)
        self.levels = (float(levels[0]), float(levels[1]))
        layers, heads, n, m = self.weights.shape
        g = self.gap
        self.image.setImage(mosaic(self.weights, g), autoLevels=False, levels=self.levels)
        left = [((k * (n + g) + n / 2), f"layer {k}") for k in range(layers)]
        top = [((k * (m + g) + m / 2), f"h{k}") for k in range(heads)]
        self.plot.getAxis("left").setTicks([left, []])
        self.plot.getAxis("top").setTicks([top, []])
        self.plot.setRange(
            xRange=(0, heads * (m + g) - g), yRange=(0, layers * (n + g) - g), padding=0.01
        )
        signed = self.levels[0] < 0
        self.bar.setVisible(signed)
        if signed:
            self.bar.setLevels(self.levels)
        self._size_grid()
        nothing = signed and not np.any(self.weights)
        self.empty.setText(NOTHING_CHANGED_TEXT if nothing else EMPTY_TEXT)
        self.pages.setCurrentWidget(self.empty if nothing else self.scroll)
        self.set_layer(min(self.layer, layers - 1))
        changed = self.changed_layers()
        if signed and changed:  # once the grid has its new size
            QTimer.singleShot(0, self, lambda k=changed[0]: self.scroll_to_layer(k))

    def changed_layers(self) -> list[int]:
        """Layers whose maps hold a non-zero value (a difference: the layers an edit moved)."""
        if self.weights is None:
            return []
        return [k for k in range(self.weights.shape[0]) if np.any(self.weights[k])]

    def set_zoom(self, zoom: int) -> None:
        """0: fit every map in the dock; k > 0: each map MIN_MAP_PX * ZOOM_STEP**(k-1) pixels
        at least, the grid scrolling where the dock is smaller."""
        self.zoom = max(0, int(zoom))
        self.fit_button.setEnabled(self.zoom > 0)
        self.zoom_out.setEnabled(self.zoom > 0)
        self._size_grid()

    def _size_grid(self) -> None:
        if self.weights is None:
            return
        layers, heads, n, _m = self.weights.shape
        least = FIT_MAP_PX if self.zoom == 0 else MIN_MAP_PX * ZOOM_STEP ** (self.zoom - 1)
        px = least * (1 + self.gap / max(n, 1)) * 1.03
        bar = 70 if self.bar.isVisible() else 0
        self.graphics.setMinimumSize(
            round(AXES_PX[0] + heads * px + 8 + bar), round(AXES_PX[1] + layers * px + 8)
        )

    def scroll_to_layer(self, layer: int) -> None:
        """Scroll the grid so that ``layer``'s row of maps is in sight."""
        if self.weights is None or not 0 <= layer < self.weights.shape[0]:
            return
        rect = self.map_pixels(layer, 0)
        self.scroll.ensureVisible(
            int(rect.center().x()), int(rect.center().y()), 10, int(rect.height() / 2 + 10)
        )

    def layer_in_sight(self, layer: int) -> bool:
        """True when ``layer``'s first map lies inside the scroll area's viewport."""
        rect = self.map_pixels(layer, 0)
        top_left = self.graphics.mapTo(self.scroll.viewport(), rect.topLeft().toPoint())
        return self.scroll.viewport().rect().contains(top_left)

    def set_colormap(self, name: str) -> None:
        """Use the colour map ``name`` (the window's weights map, or a diverging one)."""
        self.image.setColorMap(colormap_by_name(name))
        self.bar.setColorMap(colormap_by_name(name))

    def set_marks(self, knocked_out=(), unchanged_layers=()) -> None:
        """Draw a cross over each knocked-out (layer, head) and mark each layer in
        ``unchanged_layers`` (before the edited one) "unchanged". Marks already drawn for the
        same heads, layers and map shape stay (every edit's result asks again)."""
        shape = None if self.weights is None else self.weights.shape
        key = (tuple(knocked_out), tuple(unchanged_layers), shape, self.gap)
        if key == self._marks_key:
            return
        self._marks_key = key
        for item in self._marks:
            self.plot.removeItem(item)
        self._marks = []
        if self.weights is None:
            return
        layers, heads = self.weights.shape[:2]
        for layer, head in knocked_out:
            if 0 <= layer < layers and 0 <= head < heads:
                r = self.map_rect(layer, head)
                for xs, ys in (
                    ((r.left(), r.right()), (r.top(), r.bottom())),
                    ((r.left(), r.right()), (r.bottom(), r.top())),
                ):
                    line = pg.PlotDataItem(xs, ys, pen=_CROSS_PEN)
                    self.plot.addItem(line)
                    self._marks.append(line)
        for layer in unchanged_layers:
            if 0 <= layer < layers:
                r = self.map_rect(layer, 0)
                text = pg.TextItem("unchanged", color="#f0f0f0", fill=pg.mkBrush(0, 0, 0, 150))
                text.setPos(r.left(), r.top())
                self.plot.addItem(text)
                self._marks.append(text)

    def marked_crosses(self) -> int:
        """How many knocked-out heads are drawn crossed."""
        return sum(isinstance(m, pg.PlotDataItem) for m in self._marks) // 2

    def unchanged_labels(self) -> int:
        """How many layers carry the "unchanged" mark."""
        return sum(isinstance(m, pg.TextItem) for m in self._marks)

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
        hit = self.cell_at(*self._image_point(event.scenePos()))
        if hit is None:
            return
        if event.button() == Qt.MouseButton.LeftButton:
            self.head_clicked.emit(hit[0], hit[1])
        elif event.button() == Qt.MouseButton.RightButton:
            self.head_menu_requested.emit(hit[0], hit[1], event.screenPos().toPoint())

    def hover_text(self, layer: int, head: int, row: int, col: int) -> str:
        """What the line under the maps says about cell (row, col) of (layer, head): the
        query and key tokens, the value, and where the query looks most."""
        values = self.weights[layer, head, row]  # [m]
        best = int(np.argmax(values))
        value = format_number(values[col], 3, display=True)
        text = (
            f"layer {layer}, head {head}: query “{self.tokens[row]}” → key “{self.tokens[col]}”"
            f" {value}"
        )
        if self.levels[0] >= 0:  # weights: where the query looks most
            most = format_number(values[best], 2, display=True)
            text += f"; “{self.tokens[row]}” looks most at “{self.tokens[best]}” ({most})"
        return text

    def _on_move(self, scene_pos) -> None:
        hit = self.cell_at(*self._image_point(scene_pos))
        if hit is None:
            self.row_hovered.emit(self.layer, -1)
            self.hover.setText(" ")
            return
        layer, _head, row, _col = hit
        self.hover.setText(self.hover_text(*hit))
        self.row_hovered.emit(layer, row)
        self.highlight_row(row, layer)
