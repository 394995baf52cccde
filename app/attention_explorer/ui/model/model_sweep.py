"""Model > Which heads matter?: knock out each head in turn and map the change in a measure.

The measure is the log-probability of a target token at a position (a model with an output
head), or the cosine similarity of the mean-pooled embedding to a second sentence (or to the
unchanged run's) for an embedding model. The sweep runs on a worker thread with progress and
a Cancel button; before a long one it says how long it will take and asks to start anyway.
The result is a layers x heads map (a DisplayFrame, drawn as the compare view draws, on a
diverging scale around 0) that exports as PNG, SVG or PDF through the export Figure.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QObject
from PySide6.QtWidgets import QComboBox, QDialog, QLineEdit, QSpinBox

from attention_explorer.core.stage_colours import DEFAULT_DIVERGING
from attention_explorer.display import DisplayFrame
from attention_explorer.display.arrays import frame_for_array
from attention_explorer.exporting.figure import frame_figure
from attention_explorer.pretrained.run_model import WINDOW_THREADS
from attention_explorer.ui.model.compare_view import FrameView
from attention_explorer.ui.model.model_figures import save_figure_as
from attention_explorer.ui.model.model_runner import backend_name
from attention_explorer.ui.widgets import layout_parts as parts
from attention_explorer.ui.widgets.job_worker import JobWorker

#: A sweep estimated to take longer than this (seconds) asks before starting.
ASK_ABOVE_S = 10.0
AXES = ("layer", "head")
_MEASURES = {
    "logprob": "log-probability of a token at a position",
    "similarity": "similarity of the embedding to a second sentence",
}


def sweep_frame(changes: np.ndarray, label: str, decimals: int = 3) -> DisplayFrame:
    """The map of ``changes [layers, heads]`` as the display model's signed array frame."""
    values = np.asarray(changes, dtype=np.float64)  # [layers, heads]
    layers, heads = values.shape
    return frame_for_array(
        values,
        "signed",
        f"Change in the {label} when each head is knocked out",
        [str(k) for k in range(layers)],
        [str(k) for k in range(heads)],
        decimals=decimals,
    )


class _SweepWorker(JobWorker):
    """Runs the estimate and the sweep off the UI thread (a :class:`JobWorker` named "sweep":
    a failure reads "the sweep stopped: …")."""

    def __init__(self, parent: QObject | None = None):
        super().__init__("sweep", parent)

    def estimate(self, loaded, text: str, backend: str = "numpy") -> None:
        """How long the sweep will take on ``backend`` (``estimated(seconds)``)."""
        from attention_explorer.pretrained import sweep_estimate

        options = {"backend": backend, "threads": WINDOW_THREADS}
        self._thread(lambda: self.estimated.emit(float(sweep_estimate(loaded, text, **options))))

    def sweep(self, loaded, text: str, options: dict) -> None:
        """Knock out each head in turn (``finished(SweepResult)``)."""
        from attention_explorer.pretrained import run_sweep

        self.cancel.clear()
        self._thread(
            lambda: self.finished.emit(
                run_sweep(
                    loaded,
                    text,
                    progress=lambda done, total: self.progress.emit(done, total),
                    cancelled=self.cancel.is_set,
                    threads=WINDOW_THREADS,
                    **options,
                )
            )
        )


class SweepDialog(QDialog):
    """Which heads matter? for the model and text of ``state`` (model mode's ModelState),
    with the open layer's edits at the time it opens."""

    def __init__(self, state, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Which heads matter?")
        self.state, self.edits = state, state.edits()
        self.result = None
        self._estimate: float | None = None
        self._confirmed = False
        self.worker = _SweepWorker(self)
        self._build()
        self.worker.estimated.connect(self._on_estimate)
        self.worker.progress.connect(self._on_progress)
        self.worker.finished.connect(self._on_finished)
        self.worker.failed.connect(self._on_failed)
        self.resize(720, 560)

    def _build(self) -> None:
        loaded = self.state.loaded
        self.measure = QComboBox()
        has_head = loaded is not None and getattr(loaded.weights, "head", None) is not None
        for key, text in _MEASURES.items():
            if key == "similarity" or has_head:
                self.measure.addItem(text, key)
        self.target = QLineEdit()
        self.target.setPlaceholderText("the actual next token (decoder) or the top prediction")
        self.position = QSpinBox()
        self.position.setRange(-1, 4096)
        self.position.setSpecialValueText("default")
        self.position.setValue(-1)
        self.other = QLineEdit()
        self.other.setPlaceholderText("empty: similarity to the unchanged run's embedding")
        self.note = parts.plain_label()
        self.bar = parts.progress_bar()
        self.start_button = parts.button("Start")
        self.cancel_button = parts.button("Cancel", enabled=False)
        self.export_button = parts.button("Export map…", enabled=False)
        self.map = FrameView()
        self.map.show_message("Start the sweep: each head is knocked out in turn.")
        parts.column(
            self,
            parts.form(
                ("Measure", self.measure),
                ("Target token", self.target),
                ("Position", self.position),
                ("Second sentence", self.other),
            ),
            parts.row(self.start_button, self.cancel_button, self.export_button, parts.STRETCH),
            self.bar,
            self.note,
            (self.map, 1),
        )
        self.start_button.clicked.connect(lambda: self.start())
        self.cancel_button.clicked.connect(lambda: self.worker.cancel.set())
        self.export_button.clicked.connect(lambda: self.export())
        self.measure.currentIndexChanged.connect(lambda *_: self._on_measure())
        self._on_measure()

    def _on_measure(self) -> None:
        logprob = self.measure.currentData() == "logprob"
        for widget in (self.target, self.position):
            widget.setEnabled(logprob)
        self.other.setEnabled(not logprob)

    def backend(self) -> str:
        """The backend the sweep runs on: the session's (the Backend box)."""
        return backend_name(self.state.session.backend)

    def options(self) -> dict:
        """The run_sweep keywords the dialog's fields give (and the session's backend)."""
        options = {
            "measure": self.measure.currentData(),
            "edits": self.edits,
            "backend": self.backend(),
        }
        if options["measure"] == "logprob":
            if self.target.text().strip():
                options["target"] = self.target.text().strip()
            if self.position.value() >= 0:
                options["position"] = self.position.value()
        elif self.other.text().strip():
            options["other"] = self.other.text().strip()
        return options

    def start(self, confirmed: bool = False) -> bool:
        """Estimate first; start at once when short, else after a second Start."""
        state = self.state
        if state.loaded is None:
            self.note.setText("Load a model first (Model panel)")
            return False
        if self._estimate is None:
            self.note.setText("Estimating how long the sweep takes…")
            self.start_button.setEnabled(False)
            self._confirmed = confirmed
            self.worker.estimate(state.loaded, state.text, self.backend())
            return True
        self._estimate = None
        self.start_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.bar.setVisible(True)
        self.bar.setRange(0, 0)
        self.note.setText("Knocking out each head in turn…")
        self.worker.sweep(state.loaded, state.text, self.options())
        return True

    def _on_estimate(self, seconds: float) -> None:
        self._estimate = seconds
        self.start_button.setEnabled(True)
        w = self.state.loaded.weights
        heads = f"{w.n_layers * w.heads} heads"
        if seconds > ASK_ABOVE_S and not self._confirmed:
            self.start_button.setText("Start anyway")
            self.note.setText(f"This sweep of {heads} will take about {seconds:.0f} s.")
            return
        self.note.setText(f"Sweeping {heads}, about {seconds:.1f} s…")
        self.start()

    def _on_progress(self, done: int, total: int) -> None:
        self.bar.setRange(0, total)
        self.bar.setValue(done)
        self.bar.setFormat(f"head {done} of {total}")

    def _finish(self) -> None:
        self.bar.setVisible(False)
        self.cancel_button.setEnabled(False)
        self.start_button.setEnabled(True)
        self.start_button.setText("Start")

    def _on_finished(self, result) -> None:
        self._finish()
        self.result = result
        self.map.show_frame(  # the long measure label goes in the note (the title would clip)
            sweep_frame(result.changes, result.label),
            DEFAULT_DIVERGING,
            AXES,
            "change when each head is knocked out",
        )
        self.export_button.setEnabled(True)
        layer, head = np.unravel_index(np.argmax(np.abs(result.changes)), result.changes.shape)
        self.note.setText(
            f"Measure: the {result.label}. "
            f"Baseline {result.baseline:.4g}; the largest change is layer {layer} head {head} "
            f"({result.changes[layer, head]:+.4g}). Done in {result.seconds:.1f} s."
        )

    def _on_failed(self, message: str) -> None:
        self._finish()
        self.note.setText(message)

    def figure(self):
        """The sweep map as an export Figure (None before a sweep finished)."""
        frame = self.map.frame
        if frame is None:
            return None
        return frame_figure(frame, "signed", row_axis=AXES[0], col_axis=AXES[1])

    def export(self, path: str | None = None) -> bool:
        """Save the map as a picture (asking where when ``path`` is None)."""
        fig = self.figure()
        if fig is None:
            return False
        return save_figure_as(self, fig, "Export the sweep map", self.note, path)
