"""Puts the model-run features into the window: the Compare dock (View > Compare with
original, Ctrl+Shift+D), the Model output dock, the run that follows every edit of a model
layer (ModelLive) and knockouts. One call from MainWindow, so main_window.py stays small."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QScrollArea

from attention_explorer.ui.model.compare_view import CompareView
from attention_explorer.ui.model.model_knockouts import Knockouts
from attention_explorer.ui.model.model_live import ModelLive
from attention_explorer.ui.model.model_output import OutputPanel


def _menu(window, title: str):
    for action in window.menuBar().actions():
        if action.menu() is not None and action.text().replace("&", "") == title.replace("&", ""):
            return action.menu()
    bar = window.menuBar()
    menu = QMenu(title, bar)
    help_menu = next((a for a in bar.actions() if a.text().replace("&", "") == "Help"), None)
    bar.insertMenu(help_menu, menu) if help_menu is not None else bar.addMenu(menu)
    return menu


def install_compare(window) -> None:
    """The Compare dock and its View menu entry (Ctrl+Shift+D)."""
    window.compare = CompareView(window.session, window.live, window.prefs)
    window.compare_dock = window._dock(  # noqa: SLF001 - the window's own dock factory
        "Compare", window.compare, Qt.DockWidgetArea.BottomDockWidgetArea
    )
    window.tabifyDockWidget(window.walk_dock, window.compare_dock)
    window.compare_dock.hide()
    window.walk_dock.raise_()

    def show_compare() -> None:
        window.compare.set_stage(window.session.selected_stage)
        window.compare_dock.show()
        window.compare_dock.raise_()

    action = QAction("Compare with &original", window)
    action.setShortcut(QKeySequence("Ctrl+Shift+D"))
    action.setStatusTip("The selected stage as opened, as edited, and their difference")
    action.triggered.connect(lambda *_: show_compare())
    _menu(window, "View").addAction(action)
    window.compare_action = action
    window.banner.compare_requested.connect(show_compare)  # a tried experiment, compared
    window.document.replaced.connect(lambda: window.compare.set_original(window.session.data()))


def install_model_run(window) -> None:
    """The Model output dock (under the Model dock), the live model run and knockouts."""
    window.model_output = OutputPanel()
    scroll = QScrollArea()  # at 1366x768 the ten predictions and the two maps scroll
    scroll.setWidget(window.model_output)
    scroll.setWidgetResizable(True)
    window.output_dock = window._dock(  # noqa: SLF001 - the window's own dock factory
        "Model output", scroll, Qt.DockWidgetArea.RightDockWidgetArea
    )
    # A tab beside the Model dock: both need the height (10 predictions and two maps; the
    # overview's maps at 40 px or more); the Model panel's message line sums the output up.
    window.tabifyDockWidget(window.model_dock, window.output_dock)
    window.output_dock.hide()
    window.model_live = ModelLive(window.model_panel, window.model_output, window)
    window.knockouts = Knockouts(window.model_panel, window)
    window.knockouts.attach_heads_grid(window.heads_grid, window.live)

    def follow_origin() -> None:
        shown = window.model_dock.isVisible() and window.model_panel.origin is not None
        window.output_dock.setVisible(shown)
        if shown:
            window.model_dock.raise_()

    window.model_panel.origin_changed.connect(follow_origin)
    _menu(window, "View").addAction(window.output_dock.toggleViewAction())


def show_sweep(window):
    """Model > Which heads matter?: the sweep dialog for the Model panel's model and text."""
    from attention_explorer.ui.model.model_sweep import SweepDialog

    panel = window.model_panel
    if panel.loaded is None:
        window.model_dock.show()
        window.status.show("Load a model in the Model panel first, then ask which heads matter")
        return None
    live = window.model_live
    layer = live.edited_layer()
    edits = {} if layer is None else {layer: window.session.data()}
    dialog = SweepDialog(panel, edits, window)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.show()
    window.sweep_dialog = dialog
    return dialog


def install_sweep(window) -> None:
    """The Model menu with Which heads matter?"""
    action = QAction("Which heads &matter?", window)
    action.setStatusTip("Knock out each head in turn and map the change in the model's output")
    action.triggered.connect(lambda *_: show_sweep(window))
    menu = _menu(window, "&Model")
    menu.addAction(action)
    window.sweep_action = action


def install_model_features(window) -> None:
    """Everything this module adds to ``window`` (a MainWindow)."""
    install_compare(window)
    install_model_run(window)
    install_sweep(window)
