"""Knockouts in the window: right-click a head in the Model overview, or in the All heads grid
(the open layer's heads), to knock it out or restore it. Each is one undo step; the
knocked-out heads live in the open model session's ``experiment["model"]["knockout"]`` (saved
with it), the model run leaves them out, and both grids draw them crossed."""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QMenu

from attention_explorer.ui.model.model_panel import model_info


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
    """Knock heads out of the open model layer's run (``panel``: the ModelPanel, whose
    session the knockouts are recorded in, as undo steps of its history)."""

    def __init__(self, panel, parent: QObject | None = None):
        super().__init__(parent)
        self.session, self.history, self.panel = panel.context.session, panel.context.history, panel
        panel.overview.head_menu_requested.connect(lambda l, h, at: self.menu(l, h).exec(at))
        self.grid = None

    def attach_heads_grid(self, grid, live) -> None:
        """Right-clicks on ``grid`` (the All heads grid) knock out the open layer's heads;
        its knocked-out heads are drawn crossed after every repaint of the grid."""
        self.grid = grid
        grid.head_menu_requested.connect(self._on_grid_menu)
        live.updated.connect(lambda *_: self.draw_grid_crosses())
        self.session.events.experiment.connect(lambda *_: self.draw_grid_crosses())
        self.panel.origin_changed.connect(self.draw_grid_crosses)

    def open_layer(self) -> int | None:
        """The layer of the open model session (None when no model layer is open)."""
        if self.panel.origin is None:
            return None
        layer = model_info(self.panel.origin).get("layer")
        return layer if isinstance(layer, int) else None

    def _on_grid_menu(self, head: int, screen_point) -> None:
        layer = self.open_layer()
        if layer is not None:
            self.menu(layer, head).exec(screen_point)

    def draw_grid_crosses(self) -> None:
        """Cross the open layer's knocked-out heads in the All heads grid."""
        if self.grid is None:
            return
        layer = self.open_layer()
        heads = () if layer is None else [h for ly, h in self.pairs() if ly == layer]
        self.grid.set_crossed(heads)

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
