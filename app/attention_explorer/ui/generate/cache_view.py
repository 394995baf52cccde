"""CacheView: the KV cache at the selected decoding step, what it costs, and the cache
policies to try on it.

Top to bottom: which step is shown (and a box to choose another); the cache as maps, one per
layer, a row per query head grouped under the K/V head it reads, a column per position
(:mod:`.cache_figure`: colour is the step's attention, hatched is evicted by the policy); the
bytes one token costs and the cache holds, beside full multi-head attention's
(:mod:`.cache_bytes`, from the arrays held); the policy controls (:mod:`.cache_policy_controls`:
Apply reruns the generation through ``state.set_policy``); the next tokens with the full
cache and with the policy side by side (:mod:`.cache_compare`); and "Open this step's layer in
the explorer" (the ``open_requested(step, layer)`` signal, which
:func:`~.open_step.connect_open_step` wires to the main window).

It reads a :class:`~.generate_state.GenerateState` (``generation``, ``reference``,
``selected_step``, ``policy``, ``loaded``) and redraws on its ``changed``; it keeps no copy of
the generation. Sized for a dialog at 1366x768: the maps scroll when a model has many layers.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QScrollArea, QSpinBox, QWidget

from attention_explorer.generation.policy import describe, policy_dict
from attention_explorer.ui.widgets.layout_parts import button, column, plain_label, row

from .cache_bytes import bytes_text, cache_bytes
from .cache_compare import CompareStrip
from .cache_figure import CacheFigure, layer_maps
from .cache_policy_controls import PolicyControls

LEGEND = (
    "Colour: the step's attention weight (dark 0 to bright {top}) · hatched: evicted by the "
    "policy · light grey: outside the layer's window · hover a cell for its number"
)
EMPTY = "Generate a few tokens first: the cache each step read appears here."


class CacheView(QWidget):
    """The cache view of ``state`` (see the module docstring)."""

    open_requested = Signal(int, int)

    def __init__(self, state, parent: QWidget | None = None):
        super().__init__(parent)
        self.state = state
        self.layer = 0
        self.opener = None  # the StepOpener, once connected (open_step.connect_open_step)
        self._policy_shown: object = ()
        self.heading = plain_label(EMPTY)
        self.step_box = QSpinBox()
        self.step_box.setPrefix("Step ")
        self.step_box.setToolTip("The decoding step whose cache is shown")
        self.figure = CacheFigure()
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setWidget(self.figure)
        self.scroll.setMinimumHeight(96)
        self.legend = plain_label()
        self.bytes_label = plain_label()
        self.controls = PolicyControls()
        self.compare = CompareStrip()
        self.message = plain_label()
        self.layer_box = QSpinBox()
        self.layer_box.setPrefix("Layer ")
        self.open_button = button(
            "Open this step's layer in the explorer",
            tip="The step's query against this layer's cached K and V, every number editable; "
            "an edit of K or V reruns the generation from this step",
        )
        column(
            self,
            row((self.heading, 1), self.step_box),
            (self.scroll, 1),
            self.legend,
            self.bytes_label,
            self.controls,
            self.compare,
            row((self.message, 1), self.layer_box, self.open_button),
        ).setSpacing(4)
        self.step_box.valueChanged.connect(self._on_step_box)
        self.layer_box.valueChanged.connect(self.choose_layer)
        self.figure.layer_clicked.connect(self.choose_layer)
        self.figure.position_clicked.connect(self._on_position)
        self.controls.apply_requested.connect(self.apply)
        self.controls.kind_changed.connect(lambda *_: self._draw())
        self.open_button.clicked.connect(self.open_layer)
        state.changed.connect(self.refresh)
        for name in ("running",):
            signal = getattr(state, name, None)
            if signal is not None:
                signal.connect(lambda *_: self._enable())
        failed = getattr(state, "failed", None)
        if failed is not None:
            failed.connect(self.message.setText)
        self.refresh()

    # -- reading the state -----------------------------------------------------------------
    def _windows(self) -> tuple:
        loaded = getattr(self.state, "loaded", None)
        if loaded is None:
            return ()
        w = loaded.weights
        windows = tuple(w.window_of(i) for i in range(w.n_layers))
        return windows if any(x is not None for x in windows) else ()

    def _step(self) -> int:
        gen = self.state.generation
        return max(0, min(self.state.selected_step, len(gen.steps) - 1))

    def refresh(self) -> None:
        """Redraw from the state (a new generation, step or policy)."""
        gen = self.state.generation
        has = gen is not None and len(gen.steps) > 0
        for part in (self.step_box, self.layer_box, self.open_button, self.scroll):
            part.setEnabled(has)
        if not has:
            self.heading.setText(EMPTY)
            self.figure.set_maps([], ())
            self.legend.setText("")
            self.bytes_label.setText("")
            self.compare.show_note("")
            return
        step = self._step()
        self.step_box.blockSignals(True)
        self.step_box.setRange(0, len(gen.steps) - 1)
        self.step_box.setSuffix(f" / {len(gen.steps) - 1}")
        self.step_box.setValue(step)
        self.step_box.blockSignals(False)
        layers = len(gen.cache)
        self.layer = min(self.layer, layers - 1)
        self.layer_box.blockSignals(True)
        self.layer_box.setRange(0, layers - 1)
        self.layer_box.setValue(self.layer)
        self.layer_box.blockSignals(False)
        s = gen.steps[step]
        self.heading.setText(
            f"Step {step}: the query of “{gen.tokens[s.position]}” (position {s.position}) "
            f"read the cache of {s.position + 1} positions and wrote “{s.text}”. "
            f"Policy: {describe(gen.policy)}."
        )
        policy = self.state.policy
        if policy != self._policy_shown:  # a new policy: the controls show it
            self._policy_shown = policy
            self.controls.show_policy(policy)
        self._draw()
        loaded = getattr(self.state, "loaded", None)
        self.bytes_label.setText(
            "" if loaded is None else bytes_text(cache_bytes(loaded, gen), len(gen.steps) - 1)
        )
        reference = getattr(self.state, "reference", None)
        if reference is None:
            self.compare.show_note(
                "This is the full cache: apply a policy to see what it changes in the next tokens."
            )
        else:
            self.compare.show_for(reference, gen)
        self.message.setText("")
        self._enable()

    def _draw(self) -> None:
        gen = self.state.generation
        if gen is None or not gen.steps:
            return
        step = self._step()
        maps = layer_maps(gen, step, self._windows())
        m = gen.steps[step].position + 1
        picked = self.controls.picked if self.controls.kind() == "evict" else ()
        self.figure.set_maps(maps, gen.tokens[:m], picked, self.layer)
        legend = LEGEND.format(top=f"{self.figure.top:.2f}")
        if any(mp.edited for mp in maps):
            legend += " · orange corner: an edited cached K or V"
        self.legend.setText(legend)

    def _enable(self) -> None:
        busy = bool(getattr(self.state, "busy", lambda: False)())
        has = self.state.generation is not None
        self.controls.apply_button.setEnabled(has and not busy)
        self.open_button.setEnabled(has and not busy)

    # -- actions ---------------------------------------------------------------------------
    def choose_layer(self, layer: int) -> None:
        """Frame ``layer`` (the one "Open this step's layer" opens)."""
        self.layer = int(layer)
        if self.layer_box.value() != self.layer:
            self.layer_box.blockSignals(True)
            self.layer_box.setValue(self.layer)
            self.layer_box.blockSignals(False)
        self._draw()

    def _on_step_box(self, step: int) -> None:
        self.state.select_step(step)

    def _on_position(self, position: int) -> None:
        self.controls.toggle_pick(position)
        self._draw()

    def chosen_policy(self):
        """The controls' policy with the edits of the current one kept (None: the full cache,
        which drops edits too)."""
        chosen = self.controls.policy()
        if chosen is None:
            return None
        edits = policy_dict(self.state.policy).get("edit")
        return {**chosen, "edit": edits} if edits else chosen

    def apply(self, *_args) -> bool:
        """Rerun the generation with the chosen policy (``state.set_policy``)."""
        policy = self.chosen_policy()
        if self.controls.kind() == "evict" and not self.controls.picked:
            self.message.setText("Click positions on the maps to pick them for eviction first.")
            return False
        self.message.setText("Running again with " + describe(policy) + "…")
        started = self.state.set_policy(policy)
        if started is False:
            self.message.setText("A generation is running: apply again when it is done.")
        return started is not False

    def open_layer(self) -> None:
        """Ask to open the chosen layer of the shown step in the explorer (wiring itself to
        the main window it sits under when nothing was connected:
        :func:`~.open_step.connect_open_step`)."""
        if self.state.generation is None:
            return
        if self.opener is None:
            main = main_window_of(self)
            if main is not None:
                from .open_step import connect_open_step

                connect_open_step(main, self.state, self)
        self.open_requested.emit(self._step(), self.layer)


def main_window_of(widget: QWidget):
    """The explorer's main window ``widget`` sits under (a parent with a ``document`` and a
    ``session``, e.g. through the Generate window's parent), or None."""
    node = widget.parent()
    while node is not None:
        if hasattr(node, "document") and hasattr(node, "session"):
            return node
        node = node.parent()
    return None
