"""Head attribution beside the knockout sweep: two layers x heads maps of the clean prompt.

Left, each head's direct effect on ``logit[answer]`` (minus ``logit[wrong]`` when asked) at
the last position (``causal.head_attribution``: the head's output read straight through the
frozen final norm and the unembedding). Right, the knockout sweep's change in the answer's
log-probability at the last position when that head alone is knocked out
(``pretrained.run_sweep``). Both diverging, centred on 0. A head that writes the answer
directly is positive on the left and negative on the right; a head that matters only
through later layers shows on the right alone. A click opens that layer and head.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QWidget

from attention_explorer.core.numbers import format_number
from attention_explorer.pretrained.run_model import WINDOW_THREADS
from attention_explorer.ui.why.cell_map import CellMap
from attention_explorer.ui.why.why_jobs import JobControls, backend_of
from attention_explorer.ui.widgets import layout_parts as parts


def _n(value: float) -> str:
    return format_number(value, 4, display=True)


def heads_labels(values) -> tuple[list[str], list[str]]:
    """Row and column labels of a ``[layers, heads]`` map."""
    layers, heads = np.shape(values)
    return [f"layer {i}" for i in range(layers)], [f"head {h}" for h in range(heads)]


def knockout_sweep_of(loaded, text: str, answer: str, progress, cancelled, options: dict):
    """The knockout sweep of ``text``: the change in the answer's log-probability at the last
    position when each head is knocked out (a ``SweepResult``)."""
    from attention_explorer.pretrained import run_sweep

    return run_sweep(
        loaded,
        text,
        "logprob",
        target=answer,
        position=-1,
        progress=progress,
        cancelled=cancelled,
        **options,
    )


class AttributionView(QWidget):
    """Head attribution and the knockout sweep of the shared clean prompt and answer.
    ``open_requested(layer, head)`` on a click; ``result`` is (attribution, sweep)."""

    open_requested = Signal(int, int)

    def __init__(self, state, inputs, parent: QWidget | None = None):
        super().__init__(parent)
        self.state, self.inputs = state, inputs
        self.result = None
        self.minus_wrong = QCheckBox("minus the wrong token's logit")
        self.minus_wrong.setChecked(True)
        self.controls = JobControls("attribution", "Attribute")
        self.attribution_map = CellMap()
        self.attribution_map.show_message(
            "Attribute: each head's direct effect on the answer's logit at the last position."
        )
        self.sweep_map = CellMap()
        self.sweep_map.show_message(
            "…beside the knockout sweep: the change in the answer's log-probability when "
            "that head alone is knocked out."
        )
        self.summary = parts.plain_label()
        parts.column(
            self,
            self.minus_wrong,
            self.controls,
            (parts.row((self.attribution_map, 1), (self.sweep_map, 1)), 1),
            self.summary,
        )
        self.controls.start_requested.connect(self.start)
        self.controls.finished.connect(self.show_result)
        self.attribution_map.cell_clicked.connect(self.open_requested.emit)
        self.sweep_map.cell_clicked.connect(self.open_requested.emit)

    def start(self) -> bool:
        """Attribute, then sweep (estimated first), on a worker thread."""
        from attention_explorer.causal import head_attribution
        from attention_explorer.pretrained import sweep_estimate

        loaded, text, answer = self.state.loaded, self.inputs.clean, self.inputs.answer
        wrong = self.inputs.wrong if self.minus_wrong.isChecked() else None
        if loaded is None or not text.strip() or answer == "":
            self.controls.refuse("Load a model, type the clean prompt and pick the answer first")
            return False
        options = {"backend": backend_of(self.state), "threads": WINDOW_THREADS}

        def work(progress, cancelled):
            attribution = head_attribution(loaded, text, target=answer, distractor=wrong, **options)
            sweep = knockout_sweep_of(loaded, text, answer, progress, cancelled, options)
            return attribution, sweep

        self.controls.run_job(
            work,
            lambda: sweep_estimate(loaded, text, **options),
            "attributing and knocking out each head",
        )
        return True

    def show_result(self, result) -> None:
        """Draw a finished (AttributionResult, SweepResult) pair."""
        self.result = result
        attribution, sweep = result
        values = np.asarray(attribution)  # [layers, heads]
        rows, cols = heads_labels(values)
        self.attribution_map.set_map(
            values, rows, cols, title=attribution.label, hover=self.attribution_hover
        )
        changes = np.asarray(sweep.changes)  # [layers, heads]
        self.sweep_map.set_map(
            changes, rows, cols, title="change when the head is knocked out", hover=self.sweep_hover
        )
        self.summary.setText(
            f"The heads' direct effects, with the embedding, the feed-forwards and the biases, "
            f"add up to the logit{' difference' if attribution.distractor else ''} "
            f"{_n(attribution.total)}. Knockout measure: the {sweep.label} (baseline "
            f"{_n(sweep.baseline)}). Click a cell to open that head in the explorer."
        )

    def attribution_hover(self, row: int, col: int) -> str:
        """The words of an attribution cell."""
        a = self.result[0]
        what = f"logit[{a.target}]" + (f" − logit[{a.distractor}]" if a.distractor else "")
        return (
            f"layer {row}, head {col}: its output adds {_n(a.values[row, col])} to {what} at "
            "the last position, read directly through the final norm and the unembedding"
        )

    def sweep_hover(self, row: int, col: int) -> str:
        """The words of a knockout cell."""
        s = self.result[1]
        return (
            f"layer {row}, head {col} knocked out: the {s.label} changes by "
            f"{_n(s.changes[row, col])} (from {_n(s.baseline)})"
        )
