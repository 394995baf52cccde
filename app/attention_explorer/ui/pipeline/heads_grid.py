"""HeadsGrid: every head's attention weights side by side; click one to select it.

Thumbnails have no numbers; the selected head is framed. When the trace holds only some
heads (long sequences compute just the selected one), the others say so instead.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QVBoxLayout, QWidget

from attention_explorer.core.stages import FOCUS_STAGE
from attention_explorer.display import stage_picture
from attention_explorer.ui.heatmap.fast_image import FastImageItem
from attention_explorer.ui.widgets.colormaps import colormap_for

#: Thumbnails are shrunk (block maximum, as the weights view) to at most this many cells.
THUMB_LIMIT = 128
#: Text shown in place of a head the trace does not hold.
MISSING_TEXT = "click to\ncompute"  # two short lines: the thumbnails are small
_SELECTED_PEN = pg.mkPen("#f0a020", width=3)
_OTHER_PEN = pg.mkPen("#808080", width=1)
_CROSS_PEN = pg.mkPen("#e02020", width=2.5)


class HeadsGrid(QWidget):
    """A grid of every head's weights with a "head k" label; clicking sets the selected head.

    A right-click on a head emits ``head_menu_requested(head, screen_point)`` (model mode
    offers its knockouts there); :meth:`set_crossed` draws a red cross over some heads.
    """

    head_menu_requested = Signal(int, object)

    def __init__(self, session, live_trace, prefs, parent=None):
        super().__init__(parent)
        self.session, self.live, self.prefs = session, live_trace, prefs
        self._crosses: list[tuple[pg.ViewBox, pg.PlotDataItem]] = []
        self._boxes: list[pg.ViewBox] = []
        self._images: list[pg.ImageItem] = []
        self._missing: list[pg.TextItem] = []
        self._shown: list[bool] = []
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setMinimumSize(160, 140)
        self.graphics.setToolTip("Click a head to show its stages")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.graphics)
        self._apply_palette()
        self.graphics.scene().sigMouseClicked.connect(self._on_mouse_clicked)
        live_trace.updated.connect(self._on_trace_updated)
        session.events.selected_head.connect(self._on_selected_head_changed)
        prefs.events.colormap.connect(self._on_colormap_changed)
        if live_trace.trace is not None:
            self._on_trace_updated(live_trace.trace)

    # -- public API -------------------------------------------------------------------------
    def sizeHint(self) -> QSize:  # noqa: N802 - Qt API name
        """Modest: the grid is an overview beside the stage panel, not the main view."""
        return QSize(240, 280)

    def head_count(self) -> int:
        """How many heads the grid shows."""
        return len(self._boxes)

    def head_box(self, head: int) -> pg.ViewBox:
        """The thumbnail of ``head`` (a ViewBox), e.g. to find where to click."""
        return self._boxes[head]

    def head_at(self, scene_pos) -> int | None:
        """The head whose thumbnail is under ``scene_pos`` (None outside the heads)."""
        for head, box in enumerate(self._boxes):
            if box.sceneBoundingRect().contains(scene_pos):
                return head
        return None

    def set_crossed(self, heads) -> None:
        """Draw a red cross over each of ``heads`` (and over no other head)."""
        for box, item in self._crosses:
            try:
                box.removeItem(item)
            except RuntimeError:  # the grid rebuilt its boxes (a new head count)
                pass
        self._crosses = []
        for head in heads:
            if not 0 <= head < len(self._boxes):
                continue
            box = self._boxes[head]
            (x0, x1), (y0, y1) = box.viewRange()
            for ys in ((y0, y1), (y1, y0)):
                line = pg.PlotDataItem((x0, x1), ys, pen=_CROSS_PEN)
                box.addItem(line)
                self._crosses.append((box, line))

    def crossed_count(self) -> int:
        """How many heads are drawn crossed."""
        return len(self._crosses) // 2

    def head_image(self, head: int) -> np.ndarray | None:
        """The weights thumbnail of ``head`` as displayed, or None when it was not computed."""
        return self._images[head].image if self._shown[head] else None

    def is_missing(self, head: int) -> bool:
        """True when ``head`` shows the "click to compute" placeholder."""
        return not self._shown[head]

    def selected_frame(self) -> int | None:
        """The head whose thumbnail carries the selection frame."""
        for k, box in enumerate(self._boxes):
            if box.border is not None and box.border.color() == _SELECTED_PEN.color():
                return k
        return None

    # -- building ---------------------------------------------------------------------------
    def _rebuild(self, heads: int) -> None:
        self.graphics.clear()
        self._boxes, self._images, self._missing, self._shown = [], [], [], []
        text_colour = self.palette().color(QPalette.ColorRole.Text).name()
        columns = max(1, min(4, math.ceil(math.sqrt(heads))))
        cmap = colormap_for(FOCUS_STAGE, self.prefs)
        for k in range(heads):
            row, col = 2 * (k // columns), k % columns
            self.graphics.addLabel(f"head {k}", row=row, col=col, size="9pt", color=text_colour)
            box = self.graphics.addViewBox(row=row + 1, col=col)
            box.setMouseEnabled(x=False, y=False)
            box.setMenuEnabled(False)
            box.invertY(True)
            box.setAspectLocked(True)  # square cells, like the stage views' weights
            box.setDefaultPadding(0.02)
            image = FastImageItem(axisOrder="row-major")
            image.setColorMap(cmap)
            box.addItem(image)
            missing = pg.TextItem(MISSING_TEXT, anchor=(0.5, 0.5), color="#808080")
            box.addItem(missing)
            self._boxes.append(box)
            self._images.append(image)
            self._missing.append(missing)
            self._shown.append(False)

    # -- updates ----------------------------------------------------------------------------
    def _on_trace_updated(self, trace) -> None:
        heads = trace.config.heads
        if heads != len(self._boxes):
            self._rebuild(heads)
        weights = trace[FOCUS_STAGE]  # [s, n, m] for the heads in trace.heads, or None
        rows, cols = trace.n_queries, trace.n_keys
        for k, (box, image, missing) in enumerate(zip(self._boxes, self._images, self._missing)):
            present = weights is not None and k in trace.heads
            if present:
                # block max, as the stage views; from the pass's preview when it made one
                data = stage_picture(trace, FOCUS_STAGE, k, THUMB_LIMIT).image
                image.setImage(data, autoLevels=False, levels=(0.0, 1.0))
                image.setRect(QRectF(0, 0, cols, rows))
            image.setVisible(present)
            missing.setVisible(not present)
            missing.setPos(cols / 2, rows / 2)
            self._shown[k] = present
            box.setRange(xRange=(0, cols), yRange=(0, rows), padding=0.02)
        self._on_selected_head_changed()

    def _on_selected_head_changed(self, *_args) -> None:
        selected = self.session.selected_head
        for k, box in enumerate(self._boxes):
            box.setBorder(_SELECTED_PEN if k == selected else _OTHER_PEN)

    def _apply_palette(self) -> None:
        self.graphics.setBackground(self.palette().color(QPalette.ColorRole.Base))

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt API name
        """Follow the theme: new background now, label colours on the next rebuild."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._apply_palette()
            if self.live.trace is not None:
                self._rebuild(len(self._boxes))
                self._on_trace_updated(self.live.trace)

    def _on_colormap_changed(self, *_args) -> None:
        cmap = colormap_for(FOCUS_STAGE, self.prefs)
        for image in self._images:
            image.setColorMap(cmap)

    def _on_mouse_clicked(self, event) -> None:
        head = self.head_at(event.scenePos())
        if head is None:
            return
        if event.button() == Qt.MouseButton.LeftButton:
            self.session.selected_head = head
        elif event.button() == Qt.MouseButton.RightButton:
            self.head_menu_requested.emit(head, event.screenPos().toPoint())
