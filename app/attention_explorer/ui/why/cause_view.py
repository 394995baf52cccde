"""Attention beside cause: where a head looks, next to what it does for the answer.

For the chosen head: its attention weights from the last position to every key of the clean
prompt (a one-row map), beside its patching effect (``head_out``: the share of the answer
restored by copying its output from the clean run into the corrupted one) and its knockout
effect (the change in the answer's log-probability without it). Below, every head as a point
(pyqtgraph): x = the weight on the answer's source, y = the patching effect, with heads that
look but do not matter and heads that matter without looking flagged and listed.
Clicking a point chooses that head; clicking the row opens the head in the explorer.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QSpinBox, QWidget

from attention_explorer.core.numbers import format_number
from attention_explorer.core.stage_colours import DEFAULT_SEQUENTIAL
from attention_explorer.pretrained.run_model import WINDOW_THREADS
from attention_explorer.ui.why import cause_compute as cc
from attention_explorer.ui.why.cell_map import CellMap
from attention_explorer.ui.why.why_jobs import JobControls, backend_of
from attention_explorer.ui.widgets import layout_parts as parts

BRUSHES = {"idle": "#e08a00", "blind": "#8e44ad", "plain": "#5a7fa8"}


def _n(value: float) -> str:
    return format_number(value, 4, display=True)


class CauseView(QWidget):
    """Attention beside cause for the shared prompts and tokens (``inputs``) on model mode's
    ``state``. ``open_requested(layer, head)`` from the attention row; ``result`` is the last
    :class:`~.cause_compute.CauseResult`."""

    open_requested = Signal(int, int)

    def __init__(self, state, inputs, parent: QWidget | None = None):
        super().__init__(parent)
        self.state, self.inputs = state, inputs
        self.result = None
        self.layer_spin, self.head_spin = QSpinBox(), QSpinBox()
        self.controls = JobControls("comparison", "Compare")
        self.row_map = CellMap()
        self.row_map.setMinimumHeight(90)
        self.row_map.show_message(
            "Compare: each head's attention from the last position, beside what patching "
            "and knocking it out do to the answer."
        )
        self.effects = parts.plain_label()
        self.effects.setMinimumWidth(220)
        self.plot = pg.PlotWidget()
        self.plot.setBackground(self.palette().color(QPalette.ColorRole.Base))
        self.plot.setMenuEnabled(False)
        self.plot.setLabel("bottom", "attention from the last position to the answer's source")
        self.plot.setLabel("left", "share restored by patching")
        self.scatter = pg.ScatterPlotItem(size=12, hoverable=True)
        self.plot.addItem(self.scatter)
        self._labels: list[pg.TextItem] = []
        dashed = pg.mkPen("#999999", style=Qt.PenStyle.DashLine)
        for position, angle in ((cc.LOOK, 90), (cc.MATTER, 0), (-cc.MATTER, 0)):
            self.plot.addItem(pg.InfiniteLine(position, angle=angle, pen=dashed))
        self.flag_note = parts.plain_label()
        self.flag_note.setMinimumWidth(220)
        parts.column(
            self,
            parts.row(
                parts.plain_label("Layer"),
                self.layer_spin,
                parts.plain_label("Head"),
                self.head_spin,
                parts.STRETCH,
            ),
            self.controls,
            parts.row((self.row_map, 1), self.effects),
            (parts.row((self.plot, 1), self.flag_note), 1),
        )
        self.controls.start_requested.connect(self.start)
        self.controls.finished.connect(self.show_result)
        for spin in (self.layer_spin, self.head_spin):
            spin.valueChanged.connect(lambda *_: self.show_head())
        self.scatter.sigClicked.connect(self._on_point)
        self.row_map.cell_clicked.connect(
            lambda *_: self.open_requested.emit(self.layer_spin.value(), self.head_spin.value())
        )
        self._sizes()
        state.events.loaded.connect(lambda *_: self._sizes())

    def _sizes(self) -> None:
        loaded = self.state.loaded
        layers, heads = (
            (1, 1) if loaded is None else (loaded.weights.n_layers, loaded.weights.heads)
        )
        self.layer_spin.setRange(0, layers - 1)
        self.head_spin.setRange(0, heads - 1)

    def start(self) -> bool:
        """Estimate, then compute every head's attention and effects on a worker thread."""
        loaded, i = self.state.loaded, self.inputs
        problem = ""
        if loaded is None:
            problem = "Load a model in the Model panel first"
        elif not i.clean.strip() or not i.corrupted.strip() or "" in (i.answer, i.wrong):
            problem = "Type both prompts and pick the answer and the wrong token"
        elif i.lengths_problem():
            problem = i.lengths_problem()
        if problem:
            self.controls.refuse(problem[:1].upper() + problem[1:])
            return False
        args = (loaded, i.clean, i.corrupted, i.answer, i.wrong)
        options = {"backend": backend_of(self.state), "threads": WINDOW_THREADS}
        self.controls.run_job(
            lambda progress, cancelled: cc.attention_beside_cause(
                *args, progress, cancelled, options
            ),
            lambda: cc.cause_estimate(loaded, i.clean, options),
            "patching and knocking out every head",
        )
        return True

    def show_result(self, result) -> None:
        """Draw a finished :class:`~.cause_compute.CauseResult`."""
        self.result = result
        layers, heads = result.looks.shape
        self.layer_spin.setRange(0, layers - 1)
        self.head_spin.setRange(0, heads - 1)
        self._scatter()
        self.show_head()

    def _scatter(self) -> None:
        r = self.result
        idle, blind = cc.flags(r.looks, r.effect)
        for label in self._labels:
            self.plot.removeItem(label)
        self._labels = []
        spots = []
        for (layer, head), x in np.ndenumerate(r.looks):
            y = float(r.effect[layer, head])
            kind = (
                "idle" if (layer, head) in idle else "blind" if (layer, head) in blind else "plain"
            )
            spots.append({"pos": (float(x), y), "data": (layer, head), "brush": BRUSHES[kind]})
            text = pg.TextItem(
                f"L{layer}H{head}",
                anchor=(0, 1),
                color=self.palette().color(QPalette.ColorRole.Text),
            )
            text.setPos(float(x), y)
            self.plot.addItem(text)
            self._labels.append(text)
        self.scatter.setData(spots)
        lines = [
            f"The answer's source: {self.sources_text()}.",
            f"Look but do not matter (orange; weight ≥ {cc.LOOK}, |effect| < {cc.FAINT_MATTER}): "
            + (", ".join(f"L{a}H{b}" for a, b in idle) or "none"),
            f"Matter without looking (purple; |effect| ≥ {cc.MATTER}, weight < {cc.FAINT_LOOK}): "
            + (", ".join(f"L{a}H{b}" for a, b in blind) or "none"),
        ]
        self.flag_note.setText("\n\n".join(lines))

    def sources_text(self) -> str:
        """The answer's source positions in words."""
        r = self.result
        if not r.sources:
            return f"{r.patch.answer} does not occur in the clean prompt, so no head can look at it"
        return ", ".join(f"position {p} ({r.tokens[p]})" for p in r.sources)

    def show_head(self) -> None:
        """Show the chosen head's attention row and effects."""
        r = self.result
        if r is None:
            return
        layer, head = self.layer_spin.value(), self.head_spin.value()
        row = r.attention[layer, head][None, :]  # [1, n]
        cols = [f"{i} {t}" for i, t in enumerate(r.tokens)]
        self.row_map.set_map(
            row,
            [f"L{layer}H{head}"],
            cols,
            levels=(0.0, 1.0),
            cmap=DEFAULT_SEQUENTIAL,
            title=f"layer {layer} head {head}: attention from the last position to each key",
            hover=lambda _r, c: (
                f"layer {layer} head {head}: weight {_n(row[0, c])} on position {c} ({r.tokens[c]})"
            ),
        )
        self.effects.setText(self.effects_text(layer, head))

    def effects_text(self, layer: int, head: int) -> str:
        """The chosen head's three numbers in words."""
        r = self.result
        return (
            f"Attention to the answer's source: {_n(r.looks[layer, head])}\n"
            f"Patching its output restores {_n(r.effect[layer, head])} of "
            f"logit[{r.patch.answer}] − logit[{r.patch.wrong}]\n"
            f"Knocking it out changes the {r.sweep.label} by {_n(r.sweep.changes[layer, head])}"
        )

    def _on_point(self, _item, points, *_args) -> None:
        if len(points):
            layer, head = points[0].data()
            self.choose(layer, head)

    def choose(self, layer: int, head: int) -> None:
        """Make (layer, head) the chosen head."""
        self.layer_spin.setValue(layer)
        self.head_spin.setValue(head)
