"""Model > Latent stages… : opens :class:`~.latent_view.LatentStagesDialog` on the loaded
latent-attention model (DeepSeek-V3), shown in the menu only while such a model is loaded.

The dialog follows the window: the layer and text of the open model layer (or, before one
is opened, the Model panel's layer on the loaded text), the head selected in the explorer,
and it says when the open layer's numbers are edited (the latent maps stay the model's own:
K and V edited in direct mode do not flow back into ``c_kv``)."""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction


def is_latent(loaded) -> bool:
    """True for a loaded model with multi-head latent attention."""
    return loaded is not None and getattr(loaded.weights, "latent", None) is not None


class LatentLauncher(QObject):
    """``action`` (Model > Latent stages…, visible only for a latent model) opens ``dialog``
    (built on the first use, then shown again and kept following the window). A child of
    the window named ``latent_launcher``."""

    def __init__(self, window, menu):
        super().__init__(window)
        self.setObjectName("latent_launcher")
        self.window = window
        self.state = window.context.model
        self.dialog = None
        self.action = QAction("&Latent stages…", window)
        self.action.setStatusTip(
            "The latent c_kv, the rotary key and each head's K and V made from them"
        )
        self.action.setVisible(False)
        self.action.triggered.connect(lambda *_: self.show())
        menu.addAction(self.action)
        self.state.events.loaded.connect(lambda *_: self._follow_model())
        self.state.events.origin.connect(lambda *_: self._follow_origin())
        window.session.events.selected_head.connect(lambda *_: self._follow_head())
        window.history.changed.connect(lambda *_: self._follow_edits())
        window.model_panel.layer_spin.valueChanged.connect(lambda *_: self._follow_layer())

    def source(self):
        """(loaded, text, layer) the dialog shows, or None without a latent model."""
        loaded = self.state.loaded
        if not is_latent(loaded):
            return None
        origin = self.state.origin
        if origin is not None and 0 <= origin.layer < loaded.weights.n_layers:
            return loaded, origin.text, origin.layer
        return loaded, self.state.text, self.window.model_panel.layer_spin.value()

    def show(self):
        """Open (or raise) the dialog; None, with a message, without a latent model."""
        if self.source() is None:
            self.window.status.show("Load a model with latent attention (DeepSeek-V3) first")
            return None
        if self.dialog is None:
            from attention_explorer.ui.model.latent_view import LatentStagesDialog

            self.dialog = LatentStagesDialog(self.window)
        self.refresh()
        self.dialog.show()
        self.dialog.raise_()
        return self.dialog

    def refresh(self) -> None:
        """Point an open dialog at the current model, text, layer and head."""
        self.action.setVisible(is_latent(self.state.loaded))
        if self.dialog is None:
            return
        source = self.source()
        if source is None:
            self.dialog.hide()
            return
        self.dialog.set_source(*source)
        self._follow_head()
        self._follow_edits()

    def _follow_origin(self) -> None:
        self.refresh()
        origin = self.state.origin
        if origin is not None and self.dialog is None and is_latent(self.state.loaded):
            self.window.status.show(  # where to find the stages the direct-mode layer lacks
                f"Layer {origin.layer} uses latent attention: Model > Latent stages… shows its "
                "latent c_kv, the shared rotary key and each head's K and V made from them",
                15000,
            )

    def _follow_model(self) -> None:
        self.refresh()

    def _follow_layer(self) -> None:
        if self.state.origin is None:  # before a layer is opened the picker names it
            self.refresh()

    def _follow_head(self) -> None:
        if self.dialog is not None and self.state.origin is not None:
            self.dialog.set_head(self.window.session.selected_head)

    def _follow_edits(self) -> None:
        if self.dialog is None:
            return
        edited = self.state.edited_layer()
        self.dialog.set_edit_note(
            ""
            if edited is None
            else f"Layer {edited} is edited in the explorer; these maps are the model's own "
            "numbers (an edited K or V does not change c_kv)"
        )
