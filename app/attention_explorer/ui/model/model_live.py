"""ModelLive: an edit of a model layer followed through the whole model.

While a layer of a model is open (the Model panel knows its model's numbers), every change to
the session (any number of X, W_Q…W_O or Q/K/V, the mask, temperature or normaliser) and every
knockout asks the :class:`ModelRunner` for a new run: the rest of that layer, every later layer
and the output, on its worker thread. The overview then shows the Edited run, the Original or
their Difference, with the layers before the first change marked unchanged and knocked-out
heads crossed; the Output panel shows the prediction before and after. What it runs (the
model, the text, the open layer, its edits and the knockouts) it reads from model mode's state
(ui/state/model_state.py).
"""

from __future__ import annotations

import time

import numpy as np
from PySide6.QtCore import QObject, QTimer

from attention_explorer.ui.model.model_runner import ModelRunner


class ModelLive(QObject):
    """Follows the edits of the session of ``panel`` (a ModelPanel, whose context's model
    state says what to run) through its model into the overview and ``output`` (an
    OutputPanel). ``latencies_ms``: request → shown, per run."""

    def __init__(self, panel, output, parent: QObject | None = None):
        super().__init__(parent)
        self.session, self.prefs = panel.context.session, panel.context.prefs
        self.state = panel.context.model
        self.panel, self.output = panel, output
        self.runner = ModelRunner(self)
        self.original = self.edited = None
        self.latencies_ms: list[float] = []
        self.shown_request = 0  # the request whose run is on screen
        self._asked_at = 0.0
        # The first change of a burst asks at once, before the window's own recompute of
        # the layer takes the UI thread; the rest of the burst asks once more, next turn.
        self._timer = QTimer(self, singleShot=True, interval=0)
        self._timer.timeout.connect(self._after_burst)
        self._dirty = False
        events = self.session.events
        for event in (
            events.inputs,
            events.config,
            events.tokens,
            events.experiment,
            events.backend,
        ):
            event.connect(lambda *_: self._on_change())
        self.state.events.origin.connect(lambda *_: self._on_change())
        panel.show_box.currentIndexChanged.connect(lambda *_: self.draw_overview())
        self.runner.ready.connect(self._on_ready)
        self.runner.progress.connect(self._on_progress)
        self.runner.failed.connect(self._on_failed)
        self.runner.second_ready.connect(output.show_second)
        output.second_changed.connect(self.runner.request_embedding)
        for event in (self.prefs.events.colormap, self.prefs.events.diverging_colormap):
            event.connect(lambda *_: self.draw_overview())

    def _on_change(self) -> None:
        if self._timer.isActive():
            self._dirty = True
            return
        self._dirty = False
        self._timer.start()
        self.request()

    def _after_burst(self) -> None:
        if self._dirty:
            self._dirty = False
            self.request()

    def active(self) -> bool:
        """True while a layer of the panel's model is open (its run can be followed)."""
        return self.state.active()

    def edited_layer(self) -> int | None:
        """The open layer when its numbers differ from the model's, else None."""
        return self.state.edited_layer()

    def request(self) -> int | None:
        """Ask for the run of the session as it is now (None when no model layer is open)."""
        if not self.active():
            self.original = self.edited = None
            self.panel.overview.set_marks()
            return None
        state = self.state
        self.runner.set_model(state.loaded, state.text, self.session.backend)
        self._asked_at = time.perf_counter()
        return self.runner.request(state.edits(), self.knockouts())

    def knockouts(self) -> tuple[tuple[int, int], ...]:
        """The state's knocked-out (layer, head) pairs, sorted (as the run and marks take)."""
        return tuple(sorted(self.state.knockouts))

    def first_changed_layer(self) -> int | None:
        """The first layer the edit or a knockout changes (None: nothing changed)."""
        layers = [ly for ly, _ in self.state.knockouts]
        edited = self.edited_layer()
        if edited is not None:
            layers.append(edited)
        return min(layers) if layers else None

    # -- results ----------------------------------------------------------------------------
    def _on_ready(self, original, edited, request: int) -> None:
        if request != self.runner.request_id or not self.active():
            return  # stale: a newer edit is on its way
        self.original, self.edited, self.shown_request = original, edited, request
        self.output.show_runs(original, edited)
        self.draw_overview()
        self.latencies_ms.append((time.perf_counter() - self._asked_at) * 1000.0)
        self.panel.progress.setVisible(False)
        first = self.first_changed_layer()
        if first is None:
            text = "The model's own run: edit a number to follow it to the output."
        else:
            where = "" if edited.backend == "numpy" else f" on {edited.backend.replace(':', ' ')}"
            ms = self.latencies_ms[-1]
            text = f"Recomputed from layer {first} to the output{where} in {ms:.0f} ms."
        self.panel.message.setText(f"{text} {self.output.summary()}".strip())

    def _on_progress(self, done: int, total: int) -> None:
        bar = self.panel.progress
        bar.setRange(0, total)
        bar.setValue(done)
        bar.setFormat(f"Running the model: layer {done} of {total}…")
        bar.setVisible(True)

    def _on_failed(self, message: str) -> None:
        self.panel.progress.setVisible(False)
        self.panel.message.setText(f"The model run stopped: {message}")

    def overview_values(self):
        """(weights ``[layers, heads, n, n]``, levels, colour map) of the chosen view."""
        choice = self.panel.show_box.currentText()
        if choice == "Original":
            return self.original.attentions, (0.0, 1.0), self.prefs.colormap
        if choice == "Difference":
            diff = np.asarray(self.edited.attentions, np.float64) - self.original.attentions
            bound = float(np.abs(diff).max())
            levels = (-bound, bound) if bound > 0 else (-1.0, 1.0)
            return diff, levels, self.prefs.diverging_colormap
        return self.edited.attentions, (0.0, 1.0), self.prefs.colormap

    def draw_overview(self) -> None:
        """Show the chosen run (or difference) in the overview, with its marks."""
        if self.edited is None or not self.active():
            return
        weights, levels, cmap = self.overview_values()
        overview = self.panel.overview
        overview.set_colormap(cmap)
        overview.set_weights(weights, self.edited.tokens, levels)
        first = self.first_changed_layer()
        unchanged = range(first) if first is not None else ()
        overview.set_marks(self.knockouts(), unchanged)
