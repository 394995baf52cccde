"""install_model_support(window): File > Open Model… and the Model dock, added to a MainWindow.

The main window's own files stay unaware of models; its constructor calls this once.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMenu

from attention_explorer.ui.model_panel import ModelPanel


def _file_menu(window) -> QMenu | None:
    for action in window.menuBar().actions():
        menu = action.menu()
        if menu is not None and action.text().replace("&", "") == "File":
            return menu
    return None


def install_model_support(window) -> ModelPanel:
    """Add the Model dock (hidden until used) and File > Open Model… (Ctrl+Shift+M).

    Open Model… shows the dock and asks for a model folder; the dock also takes a hub id.
    Returns the panel.
    """
    panel = ModelPanel(window)
    dock = QDockWidget("Model", window)
    dock.setObjectName("dock_model")
    dock.setWidget(panel)
    window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
    dock.hide()
    window.model_panel, window.model_dock = panel, dock

    def open_model() -> None:
        dock.show()
        dock.raise_()
        panel.choose_folder()

    action = QAction("Open &Model…", window)
    action.setShortcut(QKeySequence("Ctrl+Shift+M"))
    action.setStatusTip("Load a real model (BERT, MiniLM, GPT-2) and explore its attention")
    action.triggered.connect(lambda *_: open_model())
    menu = _file_menu(window)
    if menu is not None:
        actions = menu.actions()
        after_open = next((a for a in actions if a.text().replace("&", "") == "Open…"), None)
        index = actions.index(after_open) + 1 if after_open in actions else 0
        menu.insertAction(actions[index] if index < len(actions) else None, action)
    else:  # pragma: no cover - the window always has a File menu
        window.addAction(action)
    window.open_model_action = action
    view = dock.toggleViewAction()
    view.setText("&Model panel")
    window.addAction(view)
    return panel
