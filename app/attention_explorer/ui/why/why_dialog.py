"""The Model > Why? dialog: the shared prompts on top, the four views as tabs below.

Every view reads model mode's state (the Model panel's model; its text starts the clean
prompt) and the one :class:`~.why_inputs.WhyInputs`, so the prompts and tokens typed once serve
patching, the lens, attribution and the comparison. A click on a map asks the window to open
that layer and head in the explorer (``open_head``, the Model panel's own way of opening a
layer), as the overview does. Closing the dialog cancels what runs.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDialog, QTabWidget, QWidget

from attention_explorer.ui.why.attribution_view import AttributionView
from attention_explorer.ui.why.cause_view import CauseView
from attention_explorer.ui.why.cell_map import CellMap
from attention_explorer.ui.why.lens_view import LensView
from attention_explorer.ui.why.patch_view import PatchView
from attention_explorer.ui.why.why_inputs import WhyInputs
from attention_explorer.ui.widgets import layout_parts as parts


class WhyDialog(QDialog):
    """Why? for model mode's ``state``; ``open_head(layer, head)`` opens a layer in the
    explorer (None: clicks only say which)."""

    def __init__(
        self,
        state,
        open_head: Callable[[int, int], None] | None = None,
        parent: QWidget | None = None,
    ):
        super().__init__(parent)
        self.setWindowTitle("Why? Patching, the logit lens, attribution")
        self.state, self._open_head = state, open_head
        self.inputs = WhyInputs(state)
        self.patch = PatchView(state, self.inputs)
        self.lens = LensView(state, self.inputs)
        self.attribution = AttributionView(state, self.inputs)
        self.cause = CauseView(state, self.inputs)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.patch, "Patch from a second prompt")
        self.tabs.addTab(self.lens, "Logit lens")
        self.tabs.addTab(self.attribution, "Head attribution")
        self.tabs.addTab(self.cause, "Attention beside cause")
        self.model_note = parts.plain_label()
        self.status = parts.plain_label()
        parts.column(self, self.model_note, self.inputs, (self.tabs, 1), self.status)
        for view in (self.patch, self.attribution, self.cause):
            view.open_requested.connect(self.open_head)
        state.events.loaded.connect(lambda *_: self._new_model())
        self._name_model()
        self._fit()

    def _new_model(self) -> None:
        """Another model was loaded: what the views show was the last one's."""
        self._name_model()
        for view in self.views():
            view.controls.worker.cancel.set()
            view.result = None
        for cell_map in self.findChildren(CellMap):
            cell_map.show_message("Another model is loaded: run this view again.")
        self.cause.scatter.clear()

    def _name_model(self) -> None:
        loaded = self.state.loaded
        if loaded is None:
            self.model_note.setText("Load a model in the Model panel first.")
            return
        w = loaded.weights
        self.model_note.setText(
            f"{loaded.name}: {w.n_layers} layers × {w.heads} heads, the model's own weights "
            "(the open layer's edits and knockouts are not applied here)."
        )

    def _fit(self) -> None:
        screen = QGuiApplication.primaryScreen()
        room = screen.availableGeometry() if screen is not None else None
        width, height = 1180, 820
        if room is not None:
            width, height = (
                min(width, int(room.width() * 0.92)),
                min(height, int(room.height() * 0.9)),
            )
        self.resize(width, height)

    def views(self) -> tuple:
        """The four views, in tab order."""
        return (self.patch, self.lens, self.attribution, self.cause)

    def open_head(self, layer: int, head: int) -> None:
        """Open ``layer`` with ``head`` selected in the explorer."""
        self.status.setText(f"Opening layer {layer}, head {head} in the explorer…")
        if self._open_head is not None:
            self._open_head(layer, head)

    def done(self, result: int) -> None:  # noqa: D102 - QDialog API: cancel what runs
        for view in self.views():
            view.controls.worker.cancel.set()
        super().done(result)
