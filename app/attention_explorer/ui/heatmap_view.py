"""HeatmapView: one stage of one head as a heatmap with token ticks, values and a colour bar.

The view never computes attention: it shows ``trace.stage(stage, head)`` from the Trace it is
given. Masked (-inf) cells are drawn grey with "−∞" on top; the image sent to the screen is
always finite and at most :data:`MAX_DISPLAY` cells per side (block means beyond that).
"""

from __future__ import annotations

import html
import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QRectF, QSignalBlocker, Qt, Signal
from PySide6.QtGui import QCursor, QFont, QFontMetricsF, QPalette
from PySide6.QtWidgets import (
    QFrame,
    QGraphicsRectItem,
    QLabel,
    QMenu,
    QStackedLayout,
    QToolTip,
    QVBoxLayout,
)

from attention_explorer.engine import PER_HEAD_STAGES, SQUARE_STAGES, explain
from attention_explorer.engine.explain import format_number
from attention_explorer.ui.colormaps import MASKED_RGBA, colormap_for, levels_for, text_colors_for

#: Most cells per side ever sent to the screen; larger stages are block-averaged.
MAX_DISPLAY = 512
#: Numbers are drawn in the cells up to this many rows and columns.
MAX_VALUE_CELLS = 12
#: Point size of the numbers in the cells; smaller cells shrink it down to the minimum,
#: below which the numbers are left to the tooltip.
VALUE_POINT_SIZE = 8.5
MIN_VALUE_POINT_SIZE = 6.5
#: At most this many token names per axis before the view knows its size.
MAX_TICKS = 24
#: Vertical room one row label needs, in pixels.
TICK_ROW_PIXELS = 15
#: Token names longer than this are shortened on the axes.
MAX_TICK_CHARS = 9
#: What each stage is called in titles (weights follow the chosen normalizer).
STAGE_TITLES = {
    "X": "input X", "X_kv": "key/value input X_kv", "Q": "queries Q", "K": "keys K",
    "V": "values V", "scores": "QKᵀ scores", "scaled": "scaled scores", "mask": "mask",
    "masked": "masked scores", "weights": "weights", "head_outputs": "head output A·V",
    "concat": "concatenated heads", "output": "output · W_O",
}  # fmt: skip
_SELECTION_PENS = (pg.mkPen("#000000", width=4), pg.mkPen("#ffffff", width=2))


def stage_title(stage: str, trace=None) -> str:
    """A learner-facing name for ``stage``, e.g. "softmax weights" under softmax."""
    if stage == "weights" and trace is not None:
        return f"{trace.config.normalizer} weights"
    return STAGE_TITLES.get(stage, stage)


def _display_image(image: np.ndarray) -> np.ndarray:
    """``image`` as C-contiguous float32, or float64 where a value lies beyond float32's range.

    Only a float64 pass (inputs near 1e30 square into scores near 1e60) can hold such values;
    the image is at most MAX_DISPLAY per side, so the check is cheap. Never returns ±inf.
    """
    if image.dtype == np.float32:
        return np.ascontiguousarray(image)
    with np.errstate(over="ignore"):
        small = np.ascontiguousarray(image, dtype=np.float32)  # [r, c]
    return small if np.isfinite(small).all() else np.ascontiguousarray(image, dtype=np.float64)


def _block_means(data, finite, all_finite: bool, fr: int, fc: int, dtype):
    """``(image, hidden)``: the mean of the finite cells of each ``fr`` x ``fc`` block, in
    ``dtype``; ``hidden`` is True where a block has no finite cell."""
    rows, cols = data.shape
    out_r, out_c = -(-rows // fr), -(-cols // fc)
    pad = ((0, out_r * fr - rows), (0, out_c * fc - cols))
    with np.errstate(over="ignore"):  # float32 overflow is detected by the caller
        clean = (data if all_finite else np.where(finite, data, 0.0)).astype(dtype, copy=False)
    if all_finite and not any(p for _, p in pad):  # the common case: no copies, no counts
        blocks = clean.reshape(out_r, fr, out_c, fc)  # [out_r, fr, out_c, fc]
        image = blocks.mean(axis=(1, 3), dtype=dtype)  # [out_r, out_c]
        return image, np.zeros((out_r, out_c), dtype=bool)
    if any(p for _, p in pad):
        clean, finite = np.pad(clean, pad), np.pad(finite, pad)  # [out_r*fr, out_c*fc]
    with np.errstate(over="ignore", invalid="ignore"):
        sums = clean.reshape(out_r, fr, out_c, fc).sum(axis=(1, 3), dtype=dtype)  # [out_r, out_c]
    counts = finite.reshape(out_r, fr, out_c, fc).sum(axis=(1, 3), dtype=np.int32)
    return sums / np.maximum(counts, 1), counts == 0  # [out_r, out_c], [out_r, out_c]


def downsample_for_display(data: np.ndarray, limit: int = MAX_DISPLAY):
    """``(image, hidden)``: finite image ``[r, c]`` with r, c <= ``limit``.

    The image is float32, or float64 when a value does not fit float32 (never ±inf or NaN).
    Blocks average their finite cells; ``hidden [r, c]`` is True where every cell of the block
    is -inf (masked). Hidden cells hold 0 in the image.
    """
    rows, cols = data.shape
    finite = np.isfinite(data)  # [rows, cols]
    all_finite = bool(finite.all())
    fr, fc = -(-rows // limit), -(-cols // limit)  # block height, width
    if fr == 1 and fc == 1:
        image = data if all_finite else np.where(finite, data, 0.0)  # [rows, cols]
        return _display_image(image), ~finite
    image, hidden = _block_means(data, finite, all_finite, fr, fc, np.float32)
    if not np.isfinite(image).all():  # float32 overflowed: values beyond its range
        image, hidden = _block_means(data, finite, all_finite, fr, fc, np.float64)
    return _display_image(image), hidden


def cell_text(value: float, places: int = 2) -> str:
    """The short number drawn inside a cell ("0.33", "−∞") with up to ``places`` decimals."""
    if math.isinf(value) and value < 0:
        return "−∞"
    if not math.isfinite(value):
        return "–"
    if value != 0 and abs(value) < 0.5 * 10.0**-places:
        return "≈0"  # the tooltip has the exact number
    if abs(value) >= 1e4:
        return format_number(value, 2)
    text = f"{value:.{places}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def cell_places(columns: int) -> int:
    """Decimals drawn in the cells: 4 for up to 4 columns, 3 up to 8, else 2.

    Small matrices are where learners compare with a tutorial, so they get the digits that
    show a rounded tutorial value (0.25) is really 0.2483.
    """
    return 4 if columns <= 4 else 3 if columns <= 8 else 2


def _short(text: str) -> str:
    return text if len(text) <= MAX_TICK_CHARS else text[: MAX_TICK_CHARS - 1] + "…"


def _ticks(labels, stride: int) -> list[tuple[float, str]]:
    return [(i + 0.5, _short(labels[i])) for i in range(0, len(labels), stride)]


def _tick_stride(count: int, pixels: float, needed: float) -> int:
    """Label every k-th of ``count`` cells so labels ``needed`` pixels apart do not overlap.

    k is 1, 2, 5, 10, 20, 50 ...; before the view has a size, at most MAX_TICKS labels.
    """
    if pixels <= 1:
        return max(1, -(-count // MAX_TICKS))
    minimum = needed * count / pixels
    stride = 1
    while stride < minimum:
        stride = {1: 2, 2: 5}.get(int(str(stride)[0]), 10) * 10 ** (len(str(stride)) - 1)
    return stride


class HeatmapView(QFrame):
    """One stage of one head: heatmap, token ticks, colour bar, numbers, hover explanations.

    Signals: ``cell_clicked(row, col)``; ``export_requested(stage, head)`` and
    ``copy_requested(stage, head)`` from the right-click menu.
    """

    cell_clicked = Signal(int, int)
    export_requested = Signal(str, int)
    copy_requested = Signal(str, int)

    def __init__(self, stage: str, session, prefs, parent=None):
        super().__init__(parent)
        self.stage, self.session, self.prefs = stage, session, prefs
        self.setObjectName(f"heatmap_{stage}")
        self._trace, self._head = None, 0
        self._values = np.zeros((0, 0))  # [rows, cols] real stage values (may hold -inf)
        self._image_data = np.zeros((0, 0), np.float32)
        self._levels = (0.0, 1.0)
        self._labels = None  # (row labels, column labels) of the stage shown
        self._pitch_cache = (None, 0.0)  # (column labels, pixels their names need per cell)
        self._shape, self._tick_key, self._hidden_key, self._title = None, None, None, ""
        self._hover_cell, self._hidden_rect = None, QRectF()
        self._texts: list[pg.TextItem] = []
        self._text_state: list[list] = []  # per pooled TextItem: what Qt already shows
        self._separators: list[pg.InfiniteLine] = []
        self._build()
        self._apply_palette()
        self.set_highlighted(False)
        session.events.selected_cell.connect(self._on_selected_cell_changed)
        prefs.events.colormap.connect(self._on_colormap_changed)
        prefs.events.diverging_colormap.connect(self._on_colormap_changed)
        prefs.events.show_values.connect(self._on_show_values_changed)

    # -- construction -----------------------------------------------------------------------
    def _build(self) -> None:
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setMinimumSize(220, 190)
        self.graphics.ci.setContentsMargins(2, 2, 2, 2)
        plot = self.plot = self.graphics.addPlot()
        plot.setMouseEnabled(x=False, y=False)
        plot.setMenuEnabled(False)
        plot.hideButtons()
        plot.invertY(True)
        plot.getViewBox().setDefaultPadding(0.0)
        plot.getViewBox().disableAutoRange()
        for name in ("left", "bottom"):
            plot.getAxis(name).setStyle(tickLength=0, hideOverlappingLabels=False)
        plot.getViewBox().sigResized.connect(self._on_resized)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setImage(np.zeros((1, 1), np.float32), autoLevels=False, levels=(0.0, 1.0))
        plot.addItem(self.image)
        self.hidden_overlay = pg.ImageItem(axisOrder="row-major")
        self.hidden_overlay.setImage(np.zeros((1, 1, 4), np.uint8), levels=(0, 255))
        self.hidden_overlay.setZValue(1)
        plot.addItem(self.hidden_overlay)
        self.bar = pg.ColorBarItem(interactive=False, colorMapMenu=False, width=14)
        self.bar.setColorMap(colormap_for(self.stage, self.prefs))
        self.bar.setImageItem(self.image, insert_in=plot)
        # The title spans the axis, plot and colour-bar columns: in the plot's column alone a
        # long title ("softmax weights · head 0") widened the plot past the view's edge and
        # cut off the colour bar's numbers.
        plot.layout.removeItem(plot.titleLabel)
        plot.layout.addItem(plot.titleLabel, 0, 0, 1, plot.layout.columnCount())
        self._selection = []
        for pen in _SELECTION_PENS:
            rect = QGraphicsRectItem()
            rect.setPen(pen)
            rect.setZValue(20)
            rect.setVisible(False)
            plot.addItem(rect)
            self._selection.append(rect)
        self._base_font = QFont()
        self._base_font.setPointSizeF(VALUE_POINT_SIZE)
        self._font = QFont(self._base_font)
        self.placeholder = QLabel("Nothing computed yet")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setWordWrap(True)
        self._stack = QStackedLayout()
        self._stack.addWidget(self.graphics)
        self._stack.addWidget(self.placeholder)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(3, 3, 3, 3)
        layout.addLayout(self._stack)
        scene = self.graphics.scene()
        scene.sigMouseMoved.connect(self._on_mouse_moved)
        scene.sigMouseClicked.connect(self._on_mouse_clicked)

    # -- public API -------------------------------------------------------------------------
    def set_trace(self, trace, head: int) -> None:
        """Show this view's stage of ``trace`` for query head ``head``."""
        with QSignalBlocker(self):
            self._trace, self._head, self._hover_cell = trace, head, None
            problem = self._missing_reason(trace, head)
            if problem:
                self.placeholder.setText(problem)
                self._stack.setCurrentWidget(self.placeholder)
                self._values = np.zeros((0, 0))
                return
            self._stack.setCurrentWidget(self.graphics)
            self._values = trace.stage(self.stage, head)  # [rows, cols]
            self._show_values_array(trace)

    def image_data(self) -> np.ndarray:
        """The array last sent to the ImageItem (finite; float32 unless a value needs float64;
        at most 512 per side)."""
        return self._image_data

    def levels(self) -> tuple[float, float]:
        """The colour levels in force."""
        return self._levels

    def hidden_cells(self) -> np.ndarray:
        """Boolean ``[r, c]`` of the displayed cells marked as masked (grey)."""
        return self._hidden_key if self._hidden_key is not None else np.zeros((0, 0), bool)

    def cell_text_values(self) -> list[str]:
        """The numbers drawn in the cells, row by row ([] when values are hidden)."""
        return [t.toPlainText() for t in self._texts if t.isVisible()]

    def placeholder_text(self) -> str | None:
        """The text shown instead of the heatmap (e.g. a head not computed yet), or None."""
        showing = self._stack.currentWidget() is self.placeholder
        return self.placeholder.text() if showing else None

    def title(self) -> str:
        """The title text, e.g. "softmax weights · head 0"."""
        return self._title

    def tooltip_text(self, row: int, col: int) -> str:
        """The explanation of cell (row, col), computed now (plain text)."""
        if self._trace is None or not (0 <= row < self._values.shape[0]):
            return ""
        if not 0 <= col < self._values.shape[1]:
            return ""
        try:
            return explain(self._trace, self.stage, self._head, row, col).text()
        except (KeyError, IndexError, ValueError, TypeError, AttributeError):
            value = cell_text(float(self._values[row, col]))
            return f"{self.stage}[{row}, {col}] = {value}"

    def select_cell(self, row: int, col: int) -> None:
        """What a click on (row, col) does: emit ``cell_clicked`` and select it in the session.

        Stages without key columns (head output, concat, output) select the query row and
        keep the key column already selected.
        """
        self.cell_clicked.emit(row, col)
        if self.stage not in SQUARE_STAGES:
            old = self.session.selected_cell
            keys = len(self._trace.kv_tokens) if self._trace is not None else 1
            col = min(old[1], keys - 1) if old is not None else 0
        self.session.selected_stage = self.stage
        self.session.selected_cell = (int(row), int(col))

    def set_highlighted(self, on: bool) -> None:
        """Frame the view (the walkthrough points at it) or remove the frame."""
        colour = "#f0a020" if on else "transparent"
        self.setStyleSheet(f"#{self.objectName()} {{ border: 3px solid {colour}; }}")
        self._highlighted = bool(on)

    def is_highlighted(self) -> bool:
        """True while the walkthrough frame is shown."""
        return self._highlighted

    def context_menu(self) -> QMenu:
        """The right-click menu: export or copy this stage and head."""
        menu = QMenu(self)
        export = menu.addAction("Export this view…")
        export.triggered.connect(lambda: self.export_requested.emit(self.stage, self._head))
        copy = menu.addAction("Copy image")
        copy.triggered.connect(lambda: self.copy_requested.emit(self.stage, self._head))
        return menu

    # -- drawing ----------------------------------------------------------------------------
    def _missing_reason(self, trace, head: int) -> str:
        if trace is None:
            return "Nothing computed yet"
        if not trace.has(self.stage) and len(trace.heads) < trace.config.heads:
            return "needs every head: at this size it is computed only for exports"
        if not trace.has(self.stage):
            return f"{stage_title(self.stage, trace)} is not part of this computation"
        if self.stage in PER_HEAD_STAGES and head not in trace.heads:
            return f"head {head} is computed on selection"
        return ""

    def _show_values_array(self, trace) -> None:
        values = self._values
        rows, cols = values.shape
        image, hidden = downsample_for_display(values)  # [r, c] finite, [r, c] bool
        levels = levels_for(self.stage, values)
        self._image_data, self._levels = image, levels
        self.image.setImage(image, autoLevels=False, levels=levels)
        self.bar.setLevels(levels, update_items=False)
        if self._shape != (rows, cols):
            self._shape = (rows, cols)
            self.image.setRect(QRectF(0, 0, cols, rows))
            self.plot.setRange(xRange=(0, cols), yRange=(0, rows), padding=0)
        self._update_hidden(hidden, QRectF(0, 0, cols, rows))
        self._update_ticks(trace)
        if self.stage == "concat":
            self._update_head_separators(trace.config.heads, cols)
        head = f" · head {self._head}" if self.stage in PER_HEAD_STAGES else ""
        title = f"{stage_title(self.stage, trace)}{head}"
        if image.shape != values.shape:
            title += f" · {-(-rows // image.shape[0])}×{-(-cols // image.shape[1])} blocks averaged"
        if title != self._title:
            self._title = title
            self.plot.setTitle(title, size="10pt", color=self._text_colour)
        self._update_texts()
        self._on_selected_cell_changed()

    def _update_hidden(self, hidden: np.ndarray, rect: QRectF) -> None:
        same_rect = rect == self._hidden_rect
        if same_rect and self._hidden_key is not None and np.array_equal(hidden, self._hidden_key):
            return
        self._hidden_key, self._hidden_rect = hidden, rect
        overlay = np.zeros((*hidden.shape, 4), np.uint8)  # [r, c, rgba]
        overlay[hidden] = MASKED_RGBA
        self.hidden_overlay.setImage(overlay, autoLevels=False, levels=(0, 255))
        self.hidden_overlay.setRect(rect)
        self.hidden_overlay.setVisible(bool(hidden.any()))

    def _update_ticks(self, trace=None) -> None:
        """Token names on the axes, every k-th one where the cells are too small for all."""
        if trace is not None:
            self._labels = (trace.row_labels(self.stage), trace.col_labels(self.stage))
        if self._labels is None:
            return
        row_labels, col_labels = self._labels
        box = self.plot.getViewBox()
        row_stride = _tick_stride(len(row_labels), box.height(), TICK_ROW_PIXELS)
        col_stride = _tick_stride(len(col_labels), box.width(), self._label_pitch(col_labels))
        key = (row_labels, col_labels, row_stride, col_stride)
        if key == self._tick_key:
            return
        self._tick_key = key
        self.plot.getAxis("left").setTicks([_ticks(row_labels, row_stride), []])
        self.plot.getAxis("bottom").setTicks([_ticks(col_labels, col_stride), []])
        keys = self.stage in SQUARE_STAGES or self.stage == "mask"
        self.plot.setLabel("left", "query")
        self.plot.setLabel("bottom", "key" if keys else "dimension")

    def _label_pitch(self, labels: tuple[str, ...]) -> float:
        """Pixels between cell centres that ``labels`` need on the key axis (measured once
        per set of labels, not on every update or resize).

        Neighbouring names are centred one cell apart: they fit when half of each, plus a
        small gap, fits in a cell. At most ~MAX_TICKS names are measured (long axes thin out).
        """
        if self._pitch_cache[0] != labels:
            axis = self.plot.getAxis("bottom")
            metrics = QFontMetricsF(axis.style["tickFont"] or axis.font())
            sample = labels[:: max(1, len(labels) // MAX_TICKS)]
            widths = [metrics.horizontalAdvance(_short(t)) for t in sample] or [7.0]
            pairs = [(a + b) / 2 for a, b in zip(widths, widths[1:])] or widths
            self._pitch_cache = (labels, max(pairs) + 4)
        return self._pitch_cache[1]

    def _update_head_separators(self, heads: int, cols: int) -> None:
        """Vertical lines between the heads' column blocks of the concatenation."""
        width = cols // max(1, heads)
        while len(self._separators) < heads - 1:
            line = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen("#ffffff", width=2))
            line.setZValue(5)
            self.plot.addItem(line)
            self._separators.append(line)
        for k, line in enumerate(self._separators, start=1):
            line.setVisible(k < heads)
            line.setPos(k * width)

    def _value_font_size(self, labels: list[str]) -> float:
        """Point size at which the widest number fits its cell; 0 when it would be unreadable."""
        box = self.plot.getViewBox()
        rows, cols = self._values.shape
        cell_width, cell_height = box.width() / cols, box.height() / rows
        if cell_width <= 1:  # not laid out yet: assume it fits
            return VALUE_POINT_SIZE
        metrics = QFontMetricsF(self._base_font)
        widest = max(metrics.horizontalAdvance(text) for text in set(labels))
        scale = min(1.0, (cell_width - 6) / widest, (cell_height - 2) / metrics.height())
        size = math.floor(VALUE_POINT_SIZE * scale * 2) / 2  # half points
        return size if size >= MIN_VALUE_POINT_SIZE else 0.0

    def _update_texts(self) -> None:
        """Numbers in the cells, reusing the pooled TextItems; Qt is only told what changed."""
        rows, cols = self._values.shape
        small = rows <= MAX_VALUE_CELLS and cols <= MAX_VALUE_CELLS
        count = rows * cols if small and self.prefs.show_values else 0
        flat = self._values.reshape(-1)  # [rows*cols]
        labels, size = [], 0.0
        for places in range(cell_places(cols), 1, -1):  # fewer decimals until they fit
            labels = [cell_text(float(x), places) for x in flat[:count]]
            size = self._value_font_size(labels) if count else 0.0
            if size >= VALUE_POINT_SIZE or not count:
                break
        count = count if size else 0
        colours = []
        if count:
            finite = np.where(np.isfinite(flat), flat, self._levels[0])  # [rows*cols]
            colours = text_colors_for(finite, self._levels, self.colormap())
            if size != self._font.pointSizeF():
                self._font.setPointSizeF(size)
                for item in self._texts:
                    item.setFont(self._font)
        while len(self._texts) < count:
            item = pg.TextItem(anchor=(0.5, 0.5))
            item.setFont(self._font)
            item.setZValue(10)
            self.plot.addItem(item)
            self._texts.append(item)
            self._text_state.append(["", "", None, False])  # text, colour, position, visible
        for k, (item, state) in enumerate(zip(self._texts, self._text_state)):
            if k >= count:
                if state[3]:
                    item.setVisible(False)
                    state[3] = False
                continue
            value, label = float(flat[k]), labels[k]
            colour = "#ffffff" if math.isinf(value) else colours[k]
            position = (k % cols + 0.5, k // cols + 0.5)
            if state[0] != label:
                item.setText(label)
                state[0] = label
            if state[1] != colour:
                item.setColor(colour)
                state[1] = colour
            if state[2] != position:
                item.setPos(*position)
                state[2] = position
            if not state[3]:
                item.setVisible(True)
                state[3] = True

    def _on_resized(self, *_args) -> None:
        self._update_ticks()
        self._update_texts()

    def _apply_palette(self) -> None:
        """Follow the window's colours (light or dark theme) for background and text."""
        palette = self.palette()
        self._text_colour = palette.color(QPalette.ColorRole.Text).name()
        self.graphics.setBackground(palette.color(QPalette.ColorRole.Base))
        for axis in (self.plot.getAxis("left"), self.plot.getAxis("bottom"), self.bar.axis):
            axis.setPen(self._text_colour)
            axis.setTextPen(self._text_colour)
        if self._title:
            self.plot.setTitle(self._title, size="10pt", color=self._text_colour)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt API name
        """Re-colour the plot when the theme (palette) changes."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._apply_palette()

    def colormap(self) -> pg.ColorMap:
        """The colour map this stage uses under the current preferences."""
        return colormap_for(self.stage, self.prefs)

    # -- session and preference events ------------------------------------------------------
    def _on_selected_cell_changed(self, *_args) -> None:
        cell = self.session.selected_cell
        rows, cols = self._values.shape
        visible = cell is not None and 0 <= cell[0] < rows
        if visible and self.stage in SQUARE_STAGES:
            visible = 0 <= cell[1] < cols
            rect = QRectF(cell[1], cell[0], 1, 1) if visible else QRectF()
        else:
            rect = QRectF(0, cell[0], cols, 1) if visible else QRectF()
        for item in self._selection:
            item.setRect(rect)
            item.setVisible(visible)

    def _on_colormap_changed(self, *_args) -> None:
        self.bar.setColorMap(self.colormap())
        self._update_texts()

    def _on_show_values_changed(self, *_args) -> None:
        self._update_texts()

    # -- mouse ------------------------------------------------------------------------------
    def _cell_at(self, scene_pos) -> tuple[int, int] | None:
        box = self.plot.getViewBox()
        if not box.sceneBoundingRect().contains(scene_pos):
            return None
        point = box.mapSceneToView(scene_pos)
        row, col = math.floor(point.y()), math.floor(point.x())
        rows, cols = self._values.shape
        return (row, col) if 0 <= row < rows and 0 <= col < cols else None

    def _on_mouse_moved(self, scene_pos) -> None:
        cell = self._cell_at(scene_pos)
        if cell == self._hover_cell:
            return
        self._hover_cell = cell
        if cell is None:
            QToolTip.hideText()
            return
        text = html.escape(self.tooltip_text(*cell))
        head, _, rest = text.partition("\n")
        rich = f"<p style='white-space:pre'><b>{head}</b><br>{rest.replace(chr(10), '<br>')}</p>"
        QToolTip.showText(QCursor.pos(), rich, self.graphics)

    def _on_mouse_clicked(self, event) -> None:
        if event.button() == Qt.MouseButton.RightButton:
            self.context_menu().popup(event.screenPos().toPoint())
            event.accept()
            return
        cell = self._cell_at(event.scenePos())
        if event.button() == Qt.MouseButton.LeftButton and cell is not None:
            self.select_cell(*cell)
