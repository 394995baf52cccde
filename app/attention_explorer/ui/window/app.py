"""run_app(): create the QApplication and the main window."""

from __future__ import annotations

import sys

from attention_explorer._version import __version__


def create_application():
    """The QApplication (reused if one exists), named for QSettings, with the app icon."""
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    from attention_explorer.exporting.qt_app import quiet_font_warnings

    quiet_font_warnings()
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setOrganizationName("AttentionExplorer")
    app.setApplicationName("Attention Explorer")
    app.setApplicationVersion(__version__)
    app.setDesktopFileName("attention-explorer")
    from attention_explorer.ui.window.resources import icon_path

    icon = icon_path()
    if icon is not None:
        app.setWindowIcon(QIcon(str(icon)))
    return app


def run_app(session_path: str | None = None) -> int:
    """Open the window (on a session file, if given) and run the event loop.

    A worked example opens through :func:`attention_explorer.api.show` instead.
    """
    app = create_application()
    from PySide6.QtCore import QTimer

    from attention_explorer.ui.window.main_window import MainWindow

    window = MainWindow()
    window.show()
    # Opened from the event loop, so the window is up first: a file that cannot be read shows a
    # message box over the starter session instead of stopping the app before it starts.
    if session_path:
        QTimer.singleShot(0, lambda: window.document.open(session_path))
    return app.exec()
