"""Presenter mode (View > Presenter, F5): for teaching from a projector.

Larger type, fewer panels (the controls, the editor, the banner and the bottom docks other
than the walkthrough are put away) and the current step large: the walkthrough's title and
narration grow and its dock takes a good share of the height, beside the stage views. F5
again puts everything back as it was.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QSplitter

from attention_explorer.ui.walkthrough.walkthrough_reveal import together

#: How much larger the type is while presenting.
TYPE_SCALE = 1.35
#: Share of the window's height the walkthrough takes while presenting.
WALK_SHARE = 0.42
#: How much larger the views' digits, tick names and axis names are on a 1080-pixel-high
#: screen (cell digits up to about 25 px; at least 18 where the cells allow); the scale
#: follows the window's height, never below VIEW_SCALE_LEAST.
VIEW_SCALE_1080 = 2.2
VIEW_SCALE_LEAST = 1.5


def view_scale(height: int) -> float:
    """How much larger the current step's views write while presenting in a window
    ``height`` pixels high."""
    return max(VIEW_SCALE_LEAST, VIEW_SCALE_1080 * height / 1080)


def _scaled(font, factor: float):
    font = type(font)(font)
    if font.pointSizeF() > 0:
        font.setPointSizeF(font.pointSizeF() * factor)
    else:
        font.setPixelSize(round(font.pixelSize() * factor))
    return font


class Presenter:
    """Switches ``window`` in and out of presenter mode."""

    def __init__(self, window):
        self.window = window
        self._saved: dict | None = None

    def active(self) -> bool:
        """True while presenting."""
        return self._saved is not None

    def toggle(self) -> bool:
        """Enter presenter mode, or leave it; returns whether presenting now."""
        if self.active():
            self.leave()
        else:
            self.enter()
        return self.active()

    def _put_away(self) -> list:
        w = self.window
        splitter = w.findChild(QSplitter, "mainSplitter")
        editor = splitter.widget(0) if splitter is not None else None
        return [
            x
            for x in (
                w.controls_dock,
                w.heads_dock,
                w.arithmetic_dock,
                w.model_dock,
                w.banner,
                editor,
            )
            if x is not None
        ]

    def enter(self) -> None:
        """Larger type, fewer panels, the current step large."""
        if self.active():
            return
        w, walk = self.window, self.window.walkthrough
        hidden = [x for x in self._put_away() if x.isVisible()]
        self._saved = {
            "state": w.saveState(),
            "font": w.font(),
            "title": walk.title.font(),
            "hidden": hidden,
        }
        for widget in hidden:
            widget.hide()
        w.setFont(_scaled(w.font(), TYPE_SCALE))
        walk.title.setFont(_scaled(walk.title.font(), TYPE_SCALE * 1.3))
        walk.narration.setFont(_scaled(w.font(), 1.15))
        w.walk_dock.show()
        w.walk_dock.raise_()
        w.resizeDocks([w.walk_dock], [round(w.height() * WALK_SHARE)], Qt.Orientation.Vertical)
        w.status.show("Presenter mode: F5 to leave")
        self._scale_views(view_scale(w.height()))
        walk.step_changed.connect(self._on_step)
        self._show_step_again()

    def leave(self) -> None:
        """Everything back as it was before presenting."""
        if not self.active():
            return
        w, walk, saved = self.window, self.window.walkthrough, self._saved
        self._saved = None
        walk.step_changed.disconnect(self._on_step)
        self._scale_views(1.0)
        w.stages.gather(())
        w.setFont(saved["font"])
        walk.title.setFont(saved["title"])
        walk.narration.setFont(saved["font"])
        for widget in saved["hidden"]:
            widget.show()
        w.restoreState(saved["state"])
        self._show_step_again()

    def _scale_views(self, scale: float) -> None:
        for view in self.window.stages.views().values():
            view.set_presenting(scale)

    def _on_step(self, step) -> None:
        """The current step's views alone in the stage column, after the walkthrough's own
        layout of the step (which the event loop runs first)."""
        QTimer.singleShot(0, self.window, lambda: self._gather(step))

    def _gather(self, step) -> None:
        if self.active() and step is self.window.walkthrough.current():
            self.window.stages.gather(together(step))

    def _show_step_again(self) -> None:
        """Once the new layout is in, frame the step's operands again (they may have moved)."""
        walk = self.window.walkthrough
        QTimer.singleShot(0, walk, walk.show_step_again)
