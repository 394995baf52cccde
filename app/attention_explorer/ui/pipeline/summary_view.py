"""View > Long-context summary: one head's attention made readable at thousands of tokens.

Four panels from :mod:`attention_explorer.display.summaries`: each query's entropy (a curve over the
query positions), a histogram of attention distance, the attention sinks (keys that receive
the most weight across queries) and the top keys of the selected query. Follows the selected
head and query; recomputes only while shown. Token names are written as plain text.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QDialog, QGridLayout, QLabel, QSizePolicy, QWidget

from attention_explorer.core.numbers import format_number
from attention_explorer.display import summaries
from attention_explorer.display.ticks import short_label

#: Keys listed per query and sinks listed.
TOP_K = 5
#: The entropy curve: a strong blue, 2 px (it was pyqtgraph's light grey on white).
ENTROPY_COLOUR = "#1f5fbf"
#: Plain axis names (pyqtgraph's "(x0.001)" scale and "bins from" read as code).
ENTROPY_X, ENTROPY_Y = "query position", "entropy (bits)"
DISTANCE_X = "distance from query to key (tokens)"
DISTANCE_Y = "share of a query's weight"


def integer_ticks(first: int, last: int, target: int = 6) -> list[tuple[float, str]]:
    """Ticks on whole positions only, about ``target`` of them, between ``first`` and
    ``last`` (query positions are never 0.5)."""
    span = max(1, last - first)
    step = 1  # 1, 2, 5, 10, 20, 50, ...
    while span / step > target:
        step = {1: 2, 2: 5}.get(int(str(step)[0]), 10) * 10 ** (len(str(step)) - 1)
    return [(float(v), str(v)) for v in range(first, last + 1, step)]


def _plain(text: str = "") -> QLabel:
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
    label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
    return label


class SummaryView(QDialog):
    """The summary of ``live``'s trace for ``session``'s selected head and query (modeless)."""

    def __init__(self, session, live, parent: QWidget | None = None):
        super().__init__(parent)
        self.session, self.live = session, live
        self.setObjectName("summary_view")
        self.setWindowTitle("Long-context summary")
        self.resize(760, 560)
        self.entropy_plot = pg.PlotWidget()
        self.entropy_plot.setLabel("bottom", ENTROPY_X)
        self.entropy_plot.setLabel("left", ENTROPY_Y)
        self.entropy_curve = self.entropy_plot.plot([], [], pen=pg.mkPen(ENTROPY_COLOUR, width=2))
        self.entropy_plot.getPlotItem().enableAutoRange(y=False)  # 0 to log2 n, always
        self.distance_plot = pg.PlotWidget()
        self.distance_plot.setLabel("bottom", DISTANCE_X)
        self.distance_plot.setLabel("left", DISTANCE_Y)
        for plot in (self.entropy_plot, self.distance_plot):
            for side in ("left", "bottom"):
                plot.getAxis(side).enableAutoSIPrefix(False)
        self.bars = pg.BarGraphItem(x=[], height=[], width=0.8)
        self.distance_plot.addItem(self.bars)
        self.heading = _plain()
        self.sinks = _plain()
        self.top = _plain()
        grid = QGridLayout(self)
        grid.addWidget(self.heading, 0, 0, 1, 2)
        grid.addWidget(self.entropy_plot, 1, 0)
        grid.addWidget(self.distance_plot, 1, 1)
        grid.addWidget(self.sinks, 2, 0)
        grid.addWidget(self.top, 2, 1)
        grid.setRowStretch(1, 1)
        self._key = None
        live.updated.connect(self.refresh)
        session.events.selected_head.connect(self.refresh)
        session.events.selected_cell.connect(self.refresh)
        self._apply_palette()

    def showEvent(self, event) -> None:  # noqa: N802 - Qt API name
        """Compute what changed while hidden."""
        super().showEvent(event)
        self.refresh()

    def refresh(self, *_args) -> None:
        """Summarise the selected head of the current trace (only while shown)."""
        trace = getattr(self.live, "trace", None)
        if not self.isVisible() or trace is None:
            return
        head = int(self.session.selected_head)
        if head not in trace.heads or not trace.has("weights"):
            self.heading.setText(f"Head {head} is computed on selection: select it first.")
            return
        cell = self.session.selected_cell
        query = min(cell[0], trace.n_queries - 1) if cell is not None else 0
        key = (id(trace), head, query)
        if key == self._key:
            return
        self._key = key
        weights = trace.stage("weights", head)  # [n, m], rows read in blocks
        self._draw(trace, head, weights, query)

    def _draw(self, trace, head: int, weights, query: int) -> None:
        n, m = weights.shape
        entropy = summaries.row_entropy(weights)  # [n]
        self.heading.setText(
            f"Head {head}: {n} queries × {m} keys. Entropy 0 bits: one key takes all the "
            f"weight; {format_number(float(np.log2(m)), 2)} bits: spread evenly over all keys."
        )
        self.entropy_curve.setData(np.arange(n), entropy)
        top = float(np.log2(max(m, 2)))  # the most a row of m keys can have
        self.entropy_plot.setYRange(0.0, top, padding=0.02)
        self.entropy_plot.setXRange(0, max(1, n - 1), padding=0.02)
        self.entropy_plot.getAxis("bottom").setTicks([integer_ticks(0, n - 1), []])
        edges, mass = summaries.distance_histogram(weights)
        self.bars.setOpts(x=np.arange(len(mass)), height=mass, width=0.8)
        axis = self.distance_plot.getAxis("bottom")
        step = max(1, len(mass) // 6)  # each tick names where its bin starts
        axis.setTicks([[(i, str(int(edges[i]))) for i in range(0, len(mass), step)], []])
        self.bars.setToolTip(
            "\n".join(
                f"{_bin_text(edges, i)}: {format_number(float(v), 4)}" for i, v in enumerate(mass)
            )
        )
        self.sinks.setText(_sinks_text(trace, summaries.attention_sinks(weights, TOP_K)))
        keys, values = summaries.top_keys(weights[query : query + 1], TOP_K)
        lines = [
            f"{short_label(trace.kv_tokens[k], 20)} (key {k}): {format_number(float(v), 3)}"
            for k, v in zip(keys[0], values[0])
        ]
        self.top.setText(
            f"Top {len(lines)} keys of query {query} “{short_label(trace.tokens[query], 20)}”, "
            f"entropy {format_number(float(entropy[query]), 2)} bits:\n" + "\n".join(lines)
        )

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt API name
        """Follow the theme: plots take the window's base and text colours."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and hasattr(self, "distance_plot"):
            self._apply_palette()

    def _apply_palette(self) -> None:
        palette = self.palette()
        for plot in (self.entropy_plot, self.distance_plot):
            plot.setBackground(palette.color(QPalette.ColorRole.Base))
            for name in ("left", "bottom"):
                plot.getAxis(name).setTextPen(palette.color(QPalette.ColorRole.Text))


def _bin_text(edges: np.ndarray, i: int) -> str:
    """A histogram bin's distances: "0", "3", "4–7"."""
    low, high = int(edges[i]), int(edges[i + 1]) - 1
    return str(low) if high <= low else f"{low}–{high}"


def _sinks_text(trace, sinks) -> str:
    """The sinks as lines "key 0 “[CLS]”: 0.412 per query, 1688× its even share"."""
    if sinks.keys.size == 0:
        return "Attention sinks: none (no key gets four times its even share of weight)."
    lines = [
        f"key {k} “{short_label(trace.kv_tokens[k], 20)}”: {format_number(float(r), 3)} per "
        f"query, {format_number(float(x), 1)}× its even share"
        for k, r, x in zip(sinks.keys, sinks.received, sinks.ratio)
    ]
    return "Attention sinks (keys receiving the most weight across queries):\n" + "\n".join(lines)


def show_summary(view: SummaryView) -> SummaryView:
    """Show ``view`` (the window's summary view), raised and refreshed."""
    view.show()
    view.raise_()
    view.refresh()
    return view
