"""Knockouts in the window: right-click a head in the Model overview, or in the All heads grid
(the open layer's heads), to knock it out or restore it. Each is one undo step; the
knocked-out heads are model mode's state's ``knockouts`` (ui/state/model_state.py, which keeps
them in the open model session's record, saved with it), the model run leaves them out, and
both grids draw them crossed."""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QMenu


class Knockouts(QObject):
    """Knock heads out of the open model layer's run (``panel``: the ModelPanel, whose
    context's model state records them, as undo steps of its history)."""

    def __init__(self, panel, parent: QObject | None = None):
        super().__init__(parent)
        self.state, self.history, self.panel = panel.context.model, panel.context.history, panel
        panel.overview.head_menu_requested.connect(lambda l, h, at: self.menu(l, h).exec(at))
        self.grid = None

    def attach_heads_grid(self, grid, live) -> None:
        """Right-clicks on ``grid`` (the All heads grid) knock out the open layer's heads;
        its knocked-out heads are drawn crossed after every repaint of the grid."""
        self.grid = grid
        grid.head_menu_requested.connect(self._on_grid_menu)
        live.updated.connect(lambda *_: self.draw_grid_crosses())
        self.state.events.knockouts.connect(lambda *_: self.draw_grid_crosses())
        self.state.events.origin.connect(lambda *_: self.draw_grid_crosses())

    def open_layer(self) -> int | None:
        """The layer of the open model session (None when no model layer is open)."""
        origin = self.state.origin
        return origin.layer if origin is not None else None

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
        """The knocked-out (layer, head) pairs of the open session, sorted."""
        return tuple(sorted(self.state.knockouts))

    def toggle(self, layer: int, head: int) -> bool:
        """Knock head (layer, head) out, or restore it: one undo step. False (with a message)
        when no model layer is open or there is no such head."""
        panel, state = self.panel, self.state
        if not state.active():
            panel.status.emit("Open a layer of the model first: knockouts change its run", 8000)
            return False
        weights = state.loaded.weights
        if not (0 <= layer < weights.n_layers and 0 <= head < weights.heads):
            panel.status.emit(
                f"There is no head {head} in layer {layer}: {state.loaded.name} has layers "
                f"0..{weights.n_layers - 1} and heads 0..{weights.heads - 1}",
                8000,
            )
            return False
        out = (layer, head) not in state.knockouts
        pairs = state.knockouts | {(layer, head)} if out else state.knockouts - {(layer, head)}
        verb = "Knock out" if out else "Restore"
        state.set_knockouts(pairs, f"{verb} layer {layer} head {head}")
        return True

    def menu(self, layer: int, head: int) -> QMenu:
        """The right-click menu of a head: knock it out, or restore it."""
        menu = QMenu(self.panel)
        out = (layer, head) in self.pairs()
        verb = "Restore" if out else "Knock out"
        action = menu.addAction(f"{verb} layer {layer} head {head}")
        action.setEnabled(self.state.origin is not None)
        action.triggered.connect(lambda: self.toggle(layer, head))
        return menu
