"""Light, dark or system colour scheme, for Qt widgets and the pyqtgraph views."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QPalette


def apply_theme(theme: str) -> None:
    """Follow the system (``system``) or force ``light``/``dark``; views take the window colours."""
    app = QGuiApplication.instance()
    if app is None:
        return
    hints = app.styleHints()
    scheme = {"light": Qt.ColorScheme.Light, "dark": Qt.ColorScheme.Dark}.get(
        theme, Qt.ColorScheme.Unknown
    )
    if hasattr(hints, "setColorScheme"):
        hints.setColorScheme(scheme)
    palette = app.palette()
    pg.setConfigOption("background", palette.color(QPalette.ColorRole.Base))
    pg.setConfigOption("foreground", palette.color(QPalette.ColorRole.Text))
