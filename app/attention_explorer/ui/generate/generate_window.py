"""Model > Generate… (Ctrl+Shift+G): a non-modal window in which the Model panel's model
writes one token at a time (:class:`~.generate_panel.GeneratePanel`), with the KV cache
view (:class:`~.cache_view.CacheView`) as a tab beside the tokens, whose "Open this step's
layer" opens it in the main window (:func:`~.open_step.connect_open_step`).
:class:`GenerateLauncher` makes the menu action and the window (once; shown again, not
rebuilt). Without a model the window says so and offers to show the Model panel. Closing the
window stops what runs.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QSettings
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QDialog, QMenu, QWidget

from attention_explorer.ui.generate.cache_view import CacheView
from attention_explorer.ui.generate.generate_panel import GeneratePanel
from attention_explorer.ui.generate.generate_state import GenerateState
from attention_explorer.ui.generate.open_step import connect_open_step
from attention_explorer.ui.widgets import layout_parts as parts


class GenerateWindow(QDialog):
    """The Generate window over model mode's ``model_state``, a child of the main window
    ``parent`` (where a step's layer opens); its choices are kept in ``settings``;
    ``show_model()`` loads the model ``offer()`` names (the open session's), or
    brings the Model panel forward to choose one when it names none."""

    def __init__(
        self,
        model_state,
        settings: QSettings,
        show_model: Callable[[], None] | None = None,
        parent: QWidget | None = None,
        offer: Callable[[], str] | None = None,
    ):
        super().__init__(parent)
        self.setWindowTitle("Generate: watch the model write, one token at a time")
        self.setModal(False)
        self.state = GenerateState(model_state, self)
        self.panel = GeneratePanel(self.state, settings, offer)
        self.cache_view = CacheView(self.state)
        self.panel.tabs.addTab(self.cache_view, "KV cache")
        # "Open this step's layer" opens it in the main window (the parent) as its document
        self.opener = connect_open_step(parent, self.state, self.cache_view) if parent else None
        if show_model is not None:
            self.panel.load_requested.connect(show_model)
        parts.column(self, self.panel).setContentsMargins(6, 6, 6, 6)
        self._fit()

    def _fit(self) -> None:
        screen = QGuiApplication.primaryScreen()
        room = screen.availableGeometry() if screen is not None else None
        width, height = 1100, 760
        if room is not None:
            width = min(width, int(room.width() * 0.92))
            height = min(height, int(room.height() * 0.9))
        self.resize(width, height)

    def done(self, result: int) -> None:  # noqa: D102 - QDialog API: stop what runs
        self.state.cancel()
        self.state.release()  # the steppers' converted weights are not kept for a closed window
        self.panel.remember()
        super().done(result)


class GenerateLauncher(QObject):
    """Model > Generate… (Ctrl+Shift+G) in ``menu``: ``action`` opens the Generate window on
    ``window``'s model state (``window.context.model``) and settings; ``dialog`` is the window
    (None before the first). A child of ``window`` named ``generate_launcher``."""

    def __init__(self, window, menu: QMenu):
        super().__init__(window)
        self.setObjectName("generate_launcher")
        self.window = window
        self.dialog: GenerateWindow | None = None
        self.action = QAction("&Generate…", window)
        self.action.setShortcut(QKeySequence("Ctrl+Shift+G"))
        self.action.setStatusTip(
            "Watch the model write one token at a time: Step, Run N, temperature, top-k, top-p"
        )
        self.action.triggered.connect(lambda *_: self.show())
        menu.addAction(self.action)

    def offer(self) -> str:
        """The model the open session was read from (its model record's name), or ""; the
        Model panel has taken it up in its model box."""
        record = self.window.context.model.record()
        return record.name if record is not None else ""

    def show_model(self) -> None:
        """Bring the Model panel forward and load the model it names (else focus its box)."""
        window = self.window
        window.model_dock.show()
        window.model_dock.raise_()
        panel = window.model_panel
        if self.offer():
            panel.load()
            return
        panel.model_edit.setFocus()
        window.status.show("Choose a model in the Model panel and Load it, then Step or Run")

    def show(self) -> GenerateWindow:
        """Open (or raise) the Generate window."""
        if self.dialog is None:
            window = self.window
            self.dialog = GenerateWindow(
                window.context.model, window.settings, self.show_model, window, self.offer
            )
        self.dialog.panel.refresh()
        self.dialog.show()
        self.dialog.raise_()
        self.dialog.activateWindow()
        return self.dialog
