"""Puts the model-run features into the window: the Compare dock (View > Compare with
original, Ctrl+Shift+D). One call from MainWindow, so main_window.py stays as it was."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence

from attention_explorer.ui.compare_view import CompareView


def _menu(window, title: str):
    for action in window.menuBar().actions():
        if action.menu() is not None and action.text().replace("&", "") == title:
            return action.menu()
    return window.menuBar().addMenu(title)


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
    window.document.replaced.connect(lambda: window.compare.set_original(window.session.data()))


def install_model_features(window) -> None:
    """Everything this module adds to ``window`` (a MainWindow)."""
    install_compare(window)
