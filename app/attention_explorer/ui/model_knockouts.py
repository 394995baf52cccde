"""Knockouts in the window: right-click a head in the Model overview to knock it out or
restore it. Each is one undo step; the knocked-out heads live in the open model session's
``experiment["model"]["knockout"]`` (saved with it), and the model run leaves them out."""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QMenu

from attention_explorer.ui.model_panel import model_info


def knockouts_of(data) -> tuple[tuple[int, int], ...]:
    """The (layer, head) pairs knocked out in the model session ``data`` (sorted)."""
    pairs = model_info(data).get("knockout", ())
    if not isinstance(pairs, (list, tuple)):
        return ()
    good = set()
    for pair in pairs:
        if isinstance(pair, (list, tuple)) and len(pair) == 2:
            layer, head = pair
            if all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in pair):
                good.add((layer, head))
    return tuple(sorted(good))


class Knockouts(QObject):
    """Knock heads out of the open model layer's run (``panel``: the ModelPanel)."""

    def __init__(self, session, history, panel, parent: QObject | None = None):
        super().__init__(parent)
        self.session, self.history, self.panel = session, history, panel
        panel.overview.head_menu_requested.connect(lambda l, h, at: self.menu(l, h).exec(at))

    def pairs(self) -> tuple[tuple[int, int], ...]:
        """The knocked-out (layer, head) pairs of the open session."""
        return knockouts_of(self.session.data())

    def toggle(self, layer: int, head: int) -> bool:
        """Knock head (layer, head) out, or restore it: one undo step. False (with a message)
        when no model layer is open or there is no such head."""
        panel = self.panel
        if panel.origin is None or panel.loaded is None:
            panel.status.emit("Open a layer of the model first: knockouts change its run", 8000)
            return False
        weights = panel.loaded.weights
        if not (0 <= layer < weights.n_layers and 0 <= head < weights.heads):
            panel.status.emit(
                f"There is no head {head} in layer {layer}: {panel.loaded.name} has layers "
                f"0..{weights.n_layers - 1} and heads 0..{weights.heads - 1}",
                8000,
            )
            return False
        pairs = set(self.pairs())
        out = (layer, head) not in pairs
        pairs = pairs | {(layer, head)} if out else pairs - {(layer, head)}
        experiment = dict(self.session.experiment)
        info = dict(experiment.get("model", {}))
        info["knockout"] = [list(p) for p in sorted(pairs)]
        experiment["model"] = info
        verb = "Knock out" if out else "Restore"
        with self.history.transaction(f"{verb} layer {layer} head {head}"):
            self.session.experiment = experiment
        return True

    def menu(self, layer: int, head: int) -> QMenu:
        """The right-click menu of a head: knock it out, or restore it."""
        menu = QMenu(self.panel)
        out = (layer, head) in self.pairs()
        verb = "Restore" if out else "Knock out"
        action = menu.addAction(f"{verb} layer {layer} head {head}")
        action.setEnabled(self.panel.origin is not None)
        action.triggered.connect(lambda: self.toggle(layer, head))
        return menu
