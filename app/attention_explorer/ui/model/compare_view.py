"""CompareView: one stage of the open head as the original, the edited and their difference.

The original is the session as it was opened (a model layer: the model's own numbers). Its
trace is computed by the engine once per original (and head, for long sequences) on a worker
thread; the edited trace is the window's live one. The three frames come from
:mod:`attention_explorer.ui.model.compare_frames` (the display model) and are drawn by
:class:`FrameView`; ``figure()`` gives the difference as an export Figure, so the picture
matches the view. View > Compare with original (Ctrl+Shift+D) shows it.
"""

from __future__ import annotations

import html
import threading
from dataclasses import replace

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QComboBox,
    QLabel,
    QStackedLayout,
    QWidget,
)

from attention_explorer.core.stage_colours import MASKED_RGB
from attention_explorer.core.stages import combined_stages, stage, title
from attention_explorer.engine import ALL_STAGES
from attention_explorer.exporting.colors import lookup_table
from attention_explorer.exporting.figure import frame_figure
from attention_explorer.exporting.stages import axis_names
from attention_explorer.session import SessionData
from attention_explorer.session.compute_session import compute_session
from attention_explorer.ui.heatmap.heatmap_axes import AxisLabels
from attention_explorer.ui.heatmap.heatmap_texts import CellTexts
from attention_explorer.ui.model.compare_frames import difference_frame, side_frames, too_large
from attention_explorer.ui.model.model_figures import save_figure_as
from attention_explorer.ui.widgets import layout_parts as parts
from attention_explorer.ui.widgets.colormaps import colormap_by_name, colormap_name_for


def title_html(heading: str) -> str:
    """The map's title as escaped rich text: the stage and head on the first line, each note
    (zoomed region, how it was shrunk) on a smaller line of its own, all words kept."""
    parts = heading.split(" · ")
    first = parts[:2] if len(parts) > 1 and parts[1].startswith("head ") else parts[:1]
    notes = parts[len(first) :]
    lines = [f"<span style='font-size:10pt'>{html.escape(' · '.join(first))}</span>"]
    lines += [f"<span style='font-size:8pt'>{html.escape(note)}</span>" for note in notes]
    return "<center>" + "<br>".join(lines) + "</center>"


class FrameView(QWidget):
    """Draws one DisplayFrame (image, masked cells, colour bar, token ticks, title), or a
    line of text instead."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.frame = None
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setMinimumSize(200, 180)
        self.plot = self.graphics.addPlot()
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.invertY(True)
        self.plot.setMouseEnabled(x=False, y=False)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.plot.addItem(self.image)
        self.masked_cells = pg.ImageItem(axisOrder="row-major")
        self.masked_cells.setZValue(1)
        self.plot.addItem(self.masked_cells)
        self.bar = pg.ColorBarItem(interactive=False, colorMapMenu=False, width=12)
        self.bar.setImageItem(self.image, insert_in=self.plot)
        self.bar.axis.setWidth(58)  # room for "−0.625": the labels were cut off
        self.axes: AxisLabels | None = None
        self.texts = CellTexts(self.plot)  # each cell's value, where it fits (the sweep map)
        self._table = None
        self.plot.getViewBox().sigResized.connect(self._write_texts)
        self.message = parts.plain_label()
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._stack = QStackedLayout(self)
        self._stack.addWidget(self.graphics)
        self._stack.addWidget(self.message)
        self.graphics.setBackground(self.palette().color(QPalette.ColorRole.Base))

    def show_message(self, text: str) -> None:
        """Show ``text`` instead of a map."""
        self.frame = None
        self.message.setText(text)
        self._stack.setCurrentWidget(self.message)

    def show_frame(
        self, frame, cmap: str, axes: tuple[str, str] | None = None, title: str | None = None
    ) -> None:
        """Draw ``frame`` with the colour map named ``cmap``; ``axes`` names the row and
        column axes of a frame that is not a stage (else the catalogue names them);
        ``title`` replaces the frame's heading on screen (a picture keeps the heading)."""
        self.frame = frame
        self._stack.setCurrentWidget(self.graphics)
        rows, cols = frame.shape
        rect = pg.QtCore.QRectF(0, 0, cols, rows)
        self.image.setImage(frame.image, autoLevels=False, levels=frame.levels)
        self.image.setRect(rect)
        self.bar.setColorMap(colormap_by_name(cmap))
        self.bar.setLevels(frame.levels)
        self.bar.axis.setTicks([frame.ticks, []])
        overlay = np.zeros((*frame.masked_cells.shape, 4), np.uint8)  # [r, c, rgba]
        overlay[frame.masked_cells] = (*MASKED_RGB, 255)
        self.masked_cells.setImage(overlay, autoLevels=False, levels=(0, 255))
        self.masked_cells.setRect(rect)
        self.plot.setRange(xRange=(0, cols), yRange=(0, rows), padding=0)
        if axes is not None:  # not a stage of the catalogue (the knockout sweep's map)
            self._label_axes(frame, axes)
        else:
            if self.axes is None or self.axes.stage != frame.stage:
                self.axes = AxisLabels(self.plot, frame.stage)
            self.axes.update(frame)
        colour = self.palette().color(QPalette.ColorRole.Text).name()
        self.plot.setTitle(title_html(title or frame.heading), color=colour)
        self._table = lookup_table(cmap)
        self._write_texts()

    def _write_texts(self, *_args) -> None:
        """Write the frame's numbers in its cells when they fit (the tooltip-free maps of the
        sweep and the comparison read like the stage views)."""
        frame = self.frame
        if frame is None or self._table is None:
            self.texts.write(None, None, (0.0, 0.0))
            return
        box = self.plot.getViewBox()
        rows, cols = frame.image.shape
        self.texts.write(frame, self._table, (box.width() / cols, box.height() / rows))

    def _label_axes(self, frame, axes: tuple[str, str]) -> None:
        self.axes = None
        rows = [(i + 0.5, str(label)) for i, label in enumerate(frame.row_labels)]
        cols = [(i + 0.5, str(label)) for i, label in enumerate(frame.col_labels)]
        self.plot.getAxis("left").setTicks([rows, []])
        self.plot.getAxis("bottom").setTicks([cols, []])
        self.plot.setLabel("left", axes[0])
        self.plot.setLabel("bottom", axes[1])


class _OriginalTraces(QObject):
    """Computes the original's trace off the UI thread; ``ready(key, trace)`` (latest only),
    ``failed(key, message)``."""

    ready = Signal(object, object)
    failed = Signal(object, str)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._latest = None

    def request(self, key, data: SessionData, backend, dtype: str, heads) -> None:
        """Compute ``data`` (``heads``: None for all) and deliver it under ``key``."""
        self._latest = key

        def run() -> None:
            try:
                stages = (
                    None if heads is None else [s for s in ALL_STAGES if s not in combined_stages()]
                )
                trace = compute_session(data, backend, dtype=dtype, heads=heads, stages=stages)
            except Exception as exc:  # any refusal is shown as text, never a traceback
                if key == self._latest:
                    self.failed.emit(key, f"the original cannot be computed: {exc}")
                return
            if key == self._latest:
                self.ready.emit(key, trace)

        threading.Thread(target=run, name="compare-original", daemon=True).start()


class CompareView(QWidget):
    """Original | edited | difference of one stage of the selected head."""

    def __init__(self, session, live, prefs, parent: QWidget | None = None):
        super().__init__(parent)
        self.session, self.live, self.prefs = session, live, prefs
        self.original: SessionData | None = None
        self.original_trace = None
        self._key = None
        self._worker = _OriginalTraces(self)
        self.stage_box = QComboBox()
        for name in ALL_STAGES:
            self.stage_box.addItem(title(name), name)
        self.note = parts.plain_label()
        self.views = {k: FrameView() for k in ("original", "edited", "difference")}
        self.export_button = parts.button("Export difference…")
        self.export_button.clicked.connect(lambda: self.export_difference())
        sides = parts.row(*((view, 1) for view in self.views.values()))  # equal widths
        layout = parts.column(
            self,
            parts.row(QLabel("Stage"), self.stage_box, (self.note, 1), self.export_button),
            (sides, 1),
        )
        layout.setContentsMargins(2, 2, 2, 2)
        self.stage_box.currentIndexChanged.connect(lambda *_: self.refresh())
        self._worker.ready.connect(self._on_original)
        self._worker.failed.connect(self._on_failed)
        live.updated.connect(lambda *_: self.refresh())
        session.events.selected_head.connect(lambda *_: self.refresh())
        for event in (prefs.events.colormap, prefs.events.diverging_colormap):
            event.connect(lambda *_: self.refresh())
        self.set_original(session.data())

    @property
    def stage(self) -> str:
        """The stage compared."""
        return self.stage_box.currentData()

    def set_stage(self, name: str) -> None:
        """Compare stage ``name``."""
        index = self.stage_box.findData(name)
        if index >= 0:
            self.stage_box.setCurrentIndex(index)

    def set_original(self, data: SessionData) -> None:
        """Compare against ``data`` (the document as opened)."""
        self.original, self.original_trace, self._key = data, None, None
        self.refresh()

    def difference_figure(self):
        """The difference map as an export Figure (None while there is none)."""
        frame = self.views["difference"].frame
        if frame is None:
            return None
        rows, cols = axis_names(frame.stage)
        cmap = self.prefs.diverging_colormap
        return frame_figure(frame, "signed", row_axis=rows, col_axis=cols, cmap=cmap)

    def export_difference(self, path: str | None = None) -> bool:
        """Save the difference map as a picture (asking where when ``path`` is None)."""
        fig = self.difference_figure()
        if fig is None:
            self.note.setText("Nothing to export: no difference is shown")
            return False
        return save_figure_as(self, fig, "Export difference", self.note, path)

    def showEvent(self, event) -> None:  # noqa: N802 - Qt API name
        """Catch up on what changed while hidden."""
        super().showEvent(event)
        self.refresh()

    def _wanted_key(self):
        heads, _stages = self.live.pass_options()
        return (id(self.original), None if heads is None else tuple(heads))

    def refresh(self) -> None:
        """Redraw the three maps (asking for the original's trace first when needed)."""
        if self.original is None or not self.isVisible():
            return  # computed when shown
        key = self._wanted_key()
        if key != self._key:
            self._key, self.original_trace = key, None
            for view in self.views.values():
                view.show_message("Computing the original…")
            session = self.session
            self._worker.request(key, self.original, session.backend, session.dtype, key[1])
            return
        if self.original_trace is not None:
            self._draw()

    def _on_original(self, key, trace) -> None:
        if key == self._key:
            self.original_trace = trace
            self._draw()

    def _on_failed(self, key, message: str) -> None:
        if key == self._key:
            for view in self.views.values():
                view.show_message(message)

    def _draw(self) -> None:
        before, after = self.original_trace, self.live.trace
        name, head = self.stage, self.session.selected_head
        problem = self._problem(before, after, name, head)
        if problem:
            for view in self.views.values():
                view.show_message(problem)
            self.note.setText(problem)
            return
        scale = self.prefs.weights_scale
        original, edited = side_frames(before, after, name, head, scale)
        cmap = colormap_name_for(name, self.prefs)
        self.views["original"].show_frame(_retitled(original, "original"), cmap, None, "original")
        self.views["edited"].show_frame(_retitled(edited, "edited"), cmap, None, "edited")
        diff, why = difference_frame(before, after, name, head)
        if diff is None:
            self.views["difference"].show_message(why)
        else:
            self.views["difference"].show_frame(
                diff, self.prefs.diverging_colormap, None, "edited − original"
            )
        largest = 0.0 if diff is None else max(abs(diff.levels[0]), abs(diff.levels[1]))
        changed = diff is not None and bool(np.any(diff.image != 0))
        what = f"{title(name, after.config.normalizer)} · head {head}: "
        self.note.setText(
            what + (f"largest change {largest:.3g}" if changed else "no cell of this stage changed")
        )

    def _problem(self, before, after, name: str, head: int) -> str:
        if after is None:
            return "The edited session cannot be computed: fix the problem shown first"
        for trace, which in ((before, "original"), (after, "edited")):
            if not trace.has(name):
                return f"{title(name)} is not computed for the {which} session"
            if stage(name).per_head and head not in trace.heads:
                return f"head {head} is not computed for the {which} session"
        if too_large(after, name, head):
            return f"{title(name)} is too large to compare cell by cell here"
        return ""


def _retitled(frame, which: str):
    return replace(frame, heading=f"{which}: {frame.heading}")
