"""HeatmapView: one stage of one head drawn from a DisplayFrame, with ticks, bar and zoom.

The view never computes attention and never decides how a stage looks: it asks
:func:`attention_explorer.display.build_frame` for the frame of ``trace.stage(stage, head)``
(shrunk by the catalogue's rule, levels, texts, title) and draws it with pyqtgraph, exactly as
the exports draw the same frame. Zooming in rebuilds the frame from the full-resolution stage
for the region shown, so a zoomed view shows exact cells.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QRectF, QSignalBlocker, Qt, QTimer, Signal
from PySide6.QtGui import QCursor, QFont, QPalette
from PySide6.QtWidgets import QFrame, QMenu, QStackedLayout, QToolTip, QVBoxLayout

from attention_explorer.core.numbers import format_number
from attention_explorer.core.stages import MASKED_RGB, stage, title
from attention_explorer.display import build_frame
from attention_explorer.engine import explain
from attention_explorer.ui.heatmap import heatmap_selection as picks
from attention_explorer.ui.heatmap.fast_image import FastImageItem
from attention_explorer.ui.heatmap.heatmap_axes import NamedAxis, scaled_font
from attention_explorer.ui.heatmap.heatmap_labels import AllAxisLabels
from attention_explorer.ui.heatmap.heatmap_lazy import OffscreenDeferral
from attention_explorer.ui.heatmap.heatmap_menu import context_menu
from attention_explorer.ui.heatmap.heatmap_parts import changed_parts
from attention_explorer.ui.heatmap.heatmap_placeholder import missing_reason, placeholder_label
from attention_explorer.ui.heatmap.heatmap_selection_frames import SelectionFrames
from attention_explorer.ui.heatmap.heatmap_texts import CellTexts, width_for_texts
from attention_explorer.ui.heatmap.heatmap_title import HeatmapTitle
from attention_explorer.ui.heatmap.heatmap_tooltip import tooltip_html
from attention_explorer.ui.heatmap.heatmap_zoom import ZoomControl, visible_region
from attention_explorer.ui.heatmap.room_for_numbers import (
    DEFAULT_BAR_ROOM,
    hidden_values_note,
    place_hidden_note,
    room_for_numbers,
)
from attention_explorer.ui.widgets.colormaps import colormap_for, table_for

#: Small matrices up to this many columns widen their view until every number fits.
ROOM_FOR_COLUMNS = 8


class HeatmapView(QFrame):
    """One stage of one head: heatmap, token ticks, colour bar, numbers, hover, zoom.

    ``frame`` is the :class:`~attention_explorer.display.DisplayFrame` shown (None while the
    placeholder explains why nothing is). Signals: ``cell_clicked(row, col)``;
    ``export_requested(stage, head)`` and ``copy_requested(stage, head)`` from the menu.
    """

    cell_clicked = Signal(int, int)
    edit_requested = Signal(int, int)
    export_requested = Signal(str, int)
    copy_requested = Signal(str, int)
    wanted_width_changed = Signal(int)

    def __init__(self, stage_name: str, session, prefs, parent=None):
        super().__init__(parent)
        self.stage, self.session, self.prefs = stage_name, session, prefs
        self.setObjectName(f"heatmap_{stage_name}")
        self._frame = None
        self._wanted_width = 220
        self._bar_room = DEFAULT_BAR_ROOM  # the colour bar's width, kept while it is hidden
        self._trace, self._head, self._hover_cell = None, 0, None
        self._hidden_key = None
        self._separators: list[pg.InfiniteLine] = []
        self._build()
        self._apply_palette()
        self.set_highlighted(False)
        session.events.selected_cell.connect(self._on_selected_cell_changed)
        for event in (prefs.events.colormap, prefs.events.diverging_colormap):
            event.connect(self._on_colormap_changed)
        prefs.events.show_values.connect(self._update_texts)
        prefs.events.weights_scale.connect(self._on_scale_changed)

    # -- construction -----------------------------------------------------------------------
    def _build(self) -> None:
        self.hidden_note = hidden_values_note()  # says when the numbers do not fit
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setMinimumSize(220, 170)  # plus the title above it
        self.graphics.ci.setContentsMargins(2, 8, 2, 2)  # room for half the top row label
        plot = self.plot = self.graphics.addPlot(axisItems={"bottom": NamedAxis("bottom")})
        self.axes = AllAxisLabels(plot, self.stage, self.graphics)
        plot.setMenuEnabled(False)
        plot.hideButtons()
        plot.invertY(True)
        box = plot.getViewBox()
        box.setDefaultPadding(0.0)
        box.disableAutoRange()
        for name in ("left", "bottom"):
            plot.getAxis(name).setStyle(tickLength=0, hideOverlappingLabels=False)
        box.sigResized.connect(self._on_resized)
        self.image = FastImageItem(axisOrder="row-major")
        self.image.setImage(np.zeros((1, 1), np.float32), autoLevels=False, levels=(0.0, 1.0))
        plot.addItem(self.image)
        self.masked_overlay = FastImageItem(axisOrder="row-major")
        self.masked_overlay.setZValue(1)
        plot.addItem(self.masked_overlay)
        self.bar = pg.ColorBarItem(interactive=False, colorMapMenu=False, width=14)
        self.bar.setColorMap(colormap_for(self.stage, self.prefs))
        self.bar.setImageItem(self.image, insert_in=plot)
        self._bar_font = QFont(self.bar.axis.font())  # its tick font, as presenter mode scales
        self.selection_frames = SelectionFrames(plot)
        self.texts = CellTexts(plot)
        self._deferral = OffscreenDeferral(self, self.graphics.viewport(), self._draw_deferred)
        self.zoom = ZoomControl(self.graphics, box, self._refresh)
        self._zoom_timer = QTimer(self, singleShot=True, interval=30)
        self._zoom_timer.timeout.connect(self._on_range_settled)
        box.sigRangeChanged.connect(lambda *_: self._zoom_timer.start())
        self.placeholder = placeholder_label()
        self._stack = QStackedLayout()
        self._stack.addWidget(self.graphics)
        self._stack.addWidget(self.placeholder)
        self.title_bar = HeatmapTitle()  # labels above the plot: notes wrap, never overlap
        self.setBackgroundRole(QPalette.ColorRole.Base)  # the card, title included
        self.setAutoFillBackground(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(3, 3, 3, 3)
        layout.setSpacing(0)
        layout.addWidget(self.title_bar)
        layout.addLayout(self._stack, 1)
        scene = self.graphics.scene()
        scene.sigMouseMoved.connect(self._on_mouse_moved)
        scene.sigMouseClicked.connect(self._on_mouse_clicked)

    # -- public API -------------------------------------------------------------------------
    def set_trace(self, trace, head: int) -> None:
        """Show this view's stage of ``trace`` for query head ``head``."""
        with QSignalBlocker(self):
            self._trace, self._head, self._hover_cell = trace, head, None
            problem = missing_reason(trace, self.stage, head)
            if problem:
                self.placeholder.setText(problem)
                self._stack.setCurrentWidget(self.placeholder)
                self.title_bar.hide()
                self._frame, self._deferral.stale = None, False
                return
            self._stack.setCurrentWidget(self.graphics)
            self.title_bar.show()
            rows, cols = trace.stage(self.stage, head).shape
            self.axes.fit_height(rows)  # tall enough to name every row (up to 32)
            if self.zoom.shape != (rows, cols):
                self.zoom.set_shape(rows, cols)  # a new size starts unzoomed (and draws)
            else:
                self._refresh()

    def tooltip_text(self, row: int, col: int) -> str:
        """The explanation of cell (row, col) of the full stage, computed now (plain text)."""
        if self._trace is None or self.frame is None:
            return ""
        rows, cols = self._frame.shape
        if not (0 <= row < rows and 0 <= col < cols):
            return ""
        try:
            return explain(self._trace, self.stage, self._head, row, col).text()
        except (KeyError, IndexError, ValueError, TypeError, AttributeError):
            value = float(self._trace.stage(self.stage, self._head)[row, col])
            return f"{self.stage}[{row}, {col}] = {format_number(value, display=True)}"

    def select_cell(self, row: int, col: int) -> None:
        """What a click on (row, col) does: emit ``cell_clicked`` and select it in the session.

        Stages without key columns select the query row and keep the key column selected.
        """
        self.cell_clicked.emit(row, col)
        if stage(self.stage).cols != "keys":
            old = self.session.selected_cell
            keys = len(self._trace.kv_tokens) if self._trace is not None else 1
            col = min(old[1], keys - 1) if old is not None else 0
        self.session.selected_stage = self.stage
        self.session.selected_cell = (int(row), int(col))

    def set_presenting(self, scale: float) -> None:
        """Presenter mode (``scale`` above 1): cell digits, tick names, axis names and the
        title up to ``scale`` times larger, the selected (followed) cell framed boldly; 1 puts
        everything back."""
        self.selection_frames.set_bold(scale > 1)
        self.texts.scale = scale
        self.axes.set_scale(scale)
        self.title_bar.set_scale(scale)
        # the bar's numbers grow too, less than the cells': its short axis drops labels that crowd
        self.bar.axis.setStyle(tickFont=scaled_font(self._bar_font, min(scale, 1.5)))
        self.axes.update(self._frame)
        self._update_texts()

    def presenting_scale(self) -> float:
        """The scale :meth:`set_presenting` set (1 outside presenter mode)."""
        return self.texts.scale

    def selection_pen_width(self) -> float:
        """Width in pixels of the frame drawn around the selected cell."""
        return self.selection_frames.pen_width()

    def set_highlighted(self, on: bool) -> None:
        """Frame the view (the walkthrough points at it) or remove the frame."""
        colour = "#f0a020" if on else "transparent"
        self.setStyleSheet(f"#{self.objectName()} {{ border: 3px solid {colour}; }}")
        self._highlighted = bool(on)

    def is_highlighted(self) -> bool:
        """True while the walkthrough frame is shown."""
        return self._highlighted

    @property
    def head(self) -> int:
        """The query head shown (shared stages show the same for every head)."""
        return self._head

    def context_menu(self) -> QMenu:
        """The right-click menu: export or copy this view, zoom, and the weights' scale."""
        return context_menu(self)

    def colormap(self) -> pg.ColorMap:
        """The colour map this stage uses under the current preferences."""
        return colormap_for(self.stage, self.prefs)

    # -- drawing ----------------------------------------------------------------------------
    @property
    def frame(self):
        """The :class:`~attention_explorer.display.DisplayFrame` shown, None while the
        placeholder is; built now when the view was scrolled out of sight."""
        self._deferral.flush()
        return self._frame

    def _refresh(self) -> None:
        """Build the frame of what the view box shows and draw it (when it changed); a view
        scrolled out of sight waits until it is next painted."""
        if self._trace is None or self._stack.currentWidget() is not self.graphics:
            return
        if not self._deferral.defer():
            self._build_and_draw()

    def _build_and_draw(self) -> None:
        rows, cols = self.zoom.shape
        region = visible_region(self.plot.getViewBox(), rows, cols)
        frame = build_frame(
            self._trace, self.stage, self._head, region=region, scale=self.prefs.weights_scale
        )
        if self._frame is not None and frame.same_as(self._frame):
            return  # nothing this view shows changed: no item is touched, Qt repaints nothing
        self._draw(frame)

    def _draw_deferred(self) -> None:
        """The deferred build, run just before a paint: signals wait for the event loop."""
        wanted = self._wanted_width
        with QSignalBlocker(self):
            self._build_and_draw()
        if self._wanted_width != wanted:
            QTimer.singleShot(0, lambda: self.wanted_width_changed.emit(self._wanted_width))

    def _on_range_settled(self) -> None:
        if self._frame is None:
            return
        rows, cols = self.zoom.shape
        if visible_region(self.plot.getViewBox(), rows, cols) != self._frame.region:
            self._refresh()

    def _draw(self, frame) -> None:
        old, self._frame = self._frame, frame
        r0, r1, c0, c1 = frame.region
        rect = QRectF(c0, r0, c1 - c0, r1 - r0)
        draw_image, bar_levels, bar_ticks, bar_label = changed_parts(old, frame)
        if draw_image:  # pyqtgraph re-renders an image on every setImage
            self.image.setImage(frame.image, autoLevels=False, levels=frame.levels)
            self.image.setRect(rect)
        if bar_levels:  # each of these redraws the colour bar's axis
            self.bar.setLevels(frame.levels, update_items=False)
        if bar_ticks:
            self.bar.axis.setTicks([frame.ticks, []])
        if bar_label:
            self.bar.axis.setLabel(frame.scale_caption or None)
        self._update_hidden(frame, rect)
        self.axes.update(self._frame)
        if stage(self.stage).head_blocks:
            picks.head_separators(
                self.plot, self._separators, self._trace.config.heads, frame.shape[1]
            )
        self._set_title()
        self._make_room(frame)
        self._update_texts()
        self._on_selected_cell_changed()

    def _set_title(self) -> None:
        """Show the frame's heading above the plot (the labels change only when it does)."""
        if self._frame is not None and self._trace is not None:
            stage_title = title(self.stage, self._trace.config.normalizer)
            self.title_bar.set_heading(self._frame.heading, stage_title)

    def _update_hidden(self, frame, rect: QRectF) -> None:
        key = (frame.region, frame.masked_cells.shape, frame.masked_cells.tobytes())
        if key == self._hidden_key:
            return
        self._hidden_key = key
        overlay = np.zeros((*frame.masked_cells.shape, 4), np.uint8)  # [r, c, rgba]
        overlay[frame.masked_cells] = (*MASKED_RGB, 255)
        self.masked_overlay.setImage(overlay, autoLevels=False, levels=(0, 255))
        self.masked_overlay.setRect(rect)
        self.masked_overlay.setVisible(bool(frame.masked_cells.any()))

    def _make_room(self, frame) -> None:
        """Small matrices ask for a view wide enough for every number at the smallest font,
        up to 32 columns for one wide enough to name each column; the stage panel gives them
        the room by putting fewer views side by side (when it lays them out afresh)."""
        cols = frame.image.shape[1]
        # Axis, colour bar and margins: widths that do not follow the view's width, so
        # asking for room never feeds back into a new request.
        bar_room = self.bar.width() if self.bar.isVisible() else self._bar_room
        around = int(self.plot.getAxis("left").width() + bar_room + 40)
        need = max(220, self.axes.wanted_map_width(frame) + around)  # every column named
        if frame.texts and cols <= ROOM_FOR_COLUMNS and self.prefs.show_values:
            need = max(need, int(width_for_texts(frame.texts, cols) + around))
        if need != self._wanted_width:
            self._wanted_width = need
            self.wanted_width_changed.emit(need)

    def wanted_width(self) -> int:
        """The width (pixels) at which every number of the view fits at the smallest font."""
        return self._wanted_width

    def _update_texts(self, *_args) -> None:
        frame = self._frame if self.prefs.show_values else None
        cell, bar_shown = (0.0, 0.0), True
        if frame is not None:
            cell, bar_shown = room_for_numbers(self, frame)
        if bar_shown != self.bar.isVisible():
            self.bar.setVisible(bar_shown)  # the layout gives its room to the map
        written = self.texts.write(frame, table_for(self.stage, self.prefs), cell)
        place_hidden_note(self, bool(frame is not None and frame.texts and not written))

    def values_hidden(self) -> bool:
        """True while the view says its numbers are hidden because they do not fit."""
        return not self.hidden_note.isHidden()

    def _on_resized(self, *_args) -> None:
        self.axes.update(self._frame)
        self._update_texts()

    def _apply_palette(self) -> None:
        """Follow the window's colours (light or dark theme) for background and text."""
        palette = self.palette()
        self._text_colour = palette.color(QPalette.ColorRole.Text).name()
        self.graphics.setBackground(palette.color(QPalette.ColorRole.Base))
        for axis in (self.plot.getAxis("left"), self.plot.getAxis("bottom"), self.bar.axis):
            axis.setPen(self._text_colour)
            axis.setTextPen(self._text_colour)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt API name
        """Re-colour the plot when the theme (palette) changes."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._apply_palette()

    # -- session and preference events ------------------------------------------------------
    def _on_selected_cell_changed(self, *_args) -> None:
        rects = []
        if self._frame is not None and self._trace is not None:
            rects = picks.selection_rects(
                self._trace, self.stage, self._head, self.session.selected_cell
            )
        self.selection_frames.show(rects)

    def _on_colormap_changed(self, *_args) -> None:
        self.bar.setColorMap(self.colormap())
        self._update_texts()

    def _on_scale_changed(self, *_args) -> None:
        if stage(self.stage).scalable:
            self._refresh()

    # -- mouse ------------------------------------------------------------------------------
    def _on_mouse_moved(self, scene_pos) -> None:
        cell = picks.cell_at(self.plot, self.frame and self._frame.shape, scene_pos)
        if cell == self._hover_cell:
            return
        self._hover_cell = cell
        if cell is None:
            QToolTip.hideText()
            return
        QToolTip.showText(QCursor.pos(), tooltip_html(self.tooltip_text(*cell)), self.graphics)

    def _on_mouse_clicked(self, event) -> None:
        if event.button() == Qt.MouseButton.RightButton:
            self.context_menu().popup(event.screenPos().toPoint())
            event.accept()
            return
        shape, picked = self.frame and self._frame.shape, self.session.selected_cell
        cell = picks.clicked_cell(self.plot, self.stage, shape, picked, event.scenePos())
        if event.button() == Qt.MouseButton.LeftButton and cell is not None:
            self.select_cell(*cell)
            if event.double():
                self.edit_requested.emit(*cell)
