"""Builds the model-run features of the window and returns them (:class:`ModelParts`): the
Compare dock (View > Compare with original, Ctrl+Shift+D), the Model output dock, the run that
follows every edit of a model layer (ModelLive), knockouts, Model > Which heads matter? and
Model > Why? (Ctrl+Shift+Y: patching, the logit lens, head attribution, attention beside
cause) and Model > Latent stages… (a latent-attention model only). One call from MainWindow,
which keeps what it returns."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMenu, QScrollArea

from attention_explorer.ui.model.compare_view import CompareView
from attention_explorer.ui.model.latent_launcher import LatentLauncher
from attention_explorer.ui.model.model_knockouts import Knockouts
from attention_explorer.ui.model.model_live import ModelLive
from attention_explorer.ui.model.model_output import OutputPanel


def menu_named(window, title: str) -> QMenu:
    """The menu ``title`` of ``window``'s menu bar, made (before Help) when it has none."""
    for action in window.menuBar().actions():
        if action.menu() is not None and action.text().replace("&", "") == title.replace("&", ""):
            return action.menu()
    bar = window.menuBar()
    menu = QMenu(title, bar)
    help_menu = next((a for a in bar.actions() if a.text().replace("&", "") == "Help"), None)
    bar.insertMenu(help_menu, menu) if help_menu is not None else bar.addMenu(menu)
    return menu


class SweepLauncher:
    """Model > Which heads matter?: ``action`` opens the sweep dialog on the Model panel's model
    and text; ``dialog`` is the last one opened (None before the first)."""

    def __init__(self, window):
        self.window = window
        self.dialog = None
        self.action = QAction("Which heads &matter?", window)
        self.action.setStatusTip(
            "Knock out each head in turn and map the change in the model's output"
        )
        self.action.triggered.connect(lambda *_: self.show())
        menu_named(window, "&Model").addAction(self.action)

    def show(self):
        """Open the sweep dialog (None, with a message, when no model is loaded)."""
        from attention_explorer.ui.model.model_sweep import SweepDialog

        window = self.window
        state = window.context.model
        if state.loaded is None:
            window.model_dock.show()
            window.status.show("Load a model in the Model panel first, then ask which heads matter")
            return None
        dialog = SweepDialog(state, window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        self.dialog = dialog
        return dialog


class WhyLauncher(QObject):
    """Model > Why? (Ctrl+Shift+Y): ``action`` opens the Why? dialog on model mode's state;
    ``dialog`` is the one opened (None before the first; shown again, not rebuilt). A child of
    the window named ``why_launcher``."""

    def __init__(self, window):
        super().__init__(window)
        self.setObjectName("why_launcher")
        self.window = window
        self.dialog = None
        self.action = QAction("&Why?…", window)
        self.action.setShortcut(QKeySequence("Ctrl+Shift+Y"))
        self.action.setStatusTip(
            "Patch from a second prompt, read the logit lens, attribute the answer to heads"
        )
        self.action.triggered.connect(lambda *_: self.show())
        menu_named(window, "&Model").addAction(self.action)

    def show(self):
        """Open (or raise) the Why? dialog (None, with a message, when no model is loaded)."""
        from attention_explorer.ui.why.why_dialog import WhyDialog

        window = self.window
        state = window.context.model
        if state.loaded is None:
            window.model_dock.show()
            window.status.show("Load a model in the Model panel first, then ask why")
            return None
        if self.dialog is None:
            self.dialog = WhyDialog(state, window.model_panel.open_head, window)
        self.dialog.show()
        self.dialog.raise_()
        return self.dialog


@dataclass(frozen=True)
class CompareParts:
    """The Compare dock: its view, the dock and the View menu's action."""

    view: CompareView
    dock: QDockWidget
    action: QAction


@dataclass(frozen=True)
class ModelParts:
    """What model mode adds to the window beside the Model dock (which the window builds)."""

    compare: CompareParts
    output: OutputPanel
    output_dock: QDockWidget
    live: ModelLive
    knockouts: Knockouts
    why: WhyLauncher
    latent: LatentLauncher


def install_compare(window) -> CompareParts:
    """The Compare dock and its View menu entry (Ctrl+Shift+D)."""
    view = CompareView(window.session, window.live, window.prefs)
    dock = window.add_dock("Compare", view, Qt.DockWidgetArea.BottomDockWidgetArea)
    window.tabifyDockWidget(window.walk_dock, dock)
    dock.hide()
    window.walk_dock.raise_()

    def show_compare() -> None:
        view.set_stage(window.session.selected_stage)
        dock.show()
        dock.raise_()

    action = QAction("Compare with &original", window)
    action.setShortcut(QKeySequence("Ctrl+Shift+D"))
    action.setStatusTip("The selected stage as opened, as edited, and their difference")
    action.triggered.connect(lambda *_: show_compare())
    menu_named(window, "View").addAction(action)
    window.banner.compare_requested.connect(show_compare)  # a tried experiment, compared
    window.document.replaced.connect(lambda: view.set_original(window.session.data()))
    return CompareParts(view, dock, action)


def install_model_features(window) -> ModelParts:
    """The Compare dock, the Model output dock (under the Model dock), the live model run and
    knockouts of ``window`` (a MainWindow, whose Model dock and heads grid are built)."""
    compare = install_compare(window)
    output = OutputPanel()
    scroll = QScrollArea()  # at 1366x768 the ten predictions and the two maps scroll
    scroll.setWidget(output)
    scroll.setWidgetResizable(True)
    dock = window.add_dock("Model output", scroll, Qt.DockWidgetArea.RightDockWidgetArea)
    # A tab beside the Model dock: both need the height (10 predictions and two maps; the
    # overview's maps at 40 px or more); the Model panel's message line sums the output up.
    window.tabifyDockWidget(window.model_dock, dock)
    dock.hide()
    panel = window.model_panel
    live = ModelLive(panel, output, window)
    knockouts = Knockouts(panel, window)
    knockouts.attach_heads_grid(window.heads_grid, window.live)

    def follow_origin() -> None:
        shown = window.model_dock.isVisible() and panel.origin is not None
        dock.setVisible(shown)
        if shown:
            window.model_dock.raise_()

    window.context.model.events.origin.connect(lambda *_: follow_origin())
    menu_named(window, "View").addAction(dock.toggleViewAction())
    why = WhyLauncher(window)
    # Model > Latent stages…: a latent model's c_kv, rotary key and up-projections (a
    # non-modal window, so the docks keep their room); shown only for a latent model.
    latent = LatentLauncher(window, menu_named(window, "&Model"))
    return ModelParts(compare, output, dock, live, knockouts, why, latent)
