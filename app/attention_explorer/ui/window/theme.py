"""Light, dark or system colour scheme, for Qt widgets and the pyqtgraph views.

Qt's colour-scheme hint is only honoured where the platform supports it (not on a bare X11
desktop), so ``light`` and ``dark`` also set a palette of their own: the choice always shows.
Widgets styled by a style sheet are re-polished after a switch (:func:`restyle_sheeted_widgets`)
so they take the new colours too.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QWidget

#: The dark palette's colours, by role (Fusion-style dark grey, blue highlight).
DARK_COLOURS = {
    QPalette.ColorRole.Window: "#2b2b2b",
    QPalette.ColorRole.WindowText: "#e6e6e6",
    QPalette.ColorRole.Base: "#1e1e1e",
    QPalette.ColorRole.AlternateBase: "#2f2f2f",
    QPalette.ColorRole.ToolTipBase: "#3a3a3a",
    QPalette.ColorRole.ToolTipText: "#f0f0f0",
    QPalette.ColorRole.PlaceholderText: "#8a8a8a",
    QPalette.ColorRole.Text: "#e6e6e6",
    QPalette.ColorRole.Button: "#353535",
    QPalette.ColorRole.ButtonText: "#e6e6e6",
    QPalette.ColorRole.BrightText: "#ff6060",
    QPalette.ColorRole.Link: "#6ab0ff",
    QPalette.ColorRole.Highlight: "#3d8ee6",
    QPalette.ColorRole.HighlightedText: "#ffffff",
}


def dark_palette() -> QPalette:
    """A dark palette with a bright highlight (the keyboard focus frame uses it)."""
    palette = QPalette()
    for role, colour in DARK_COLOURS.items():
        palette.setColor(role, QColor(colour))
    disabled = QPalette.ColorGroup.Disabled
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText):
        palette.setColor(disabled, role, QColor("#7a7a7a"))
    palette.setColor(disabled, QPalette.ColorRole.WindowText, QColor("#7a7a7a"))
    return palette


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
    style = app.style() if hasattr(app, "style") else None
    before = app.palette()
    if theme == "dark":
        app.setPalette(dark_palette())
    elif style is not None:  # light, or the system's own colours
        app.setPalette(style.standardPalette())
    palette = app.palette()
    pg.setConfigOption("background", palette.color(QPalette.ColorRole.Base))
    pg.setConfigOption("foreground", palette.color(QPalette.ColorRole.Text))
    if palette != before:
        restyle_sheeted_widgets()


def restyle_sheeted_widgets() -> int:
    """Give every widget with a style sheet the new application palette; return how many.

    A widget polished by a style sheet keeps the palette it had then (Qt resolves it as set
    by hand), so after a theme switch a heatmap card, the matrix editor's table or a label
    with a sheet would keep the old theme's colours: white in dark, dark text in light. Each
    one's sheet is taken off, its own palette dropped, and the sheet put back.
    """
    if not isinstance(QApplication.instance(), QApplication):
        return 0
    count = 0
    widgets = []
    for window in QApplication.topLevelWidgets():  # live windows and their children only
        widgets += [window, *window.findChildren(QWidget)]
    for widget in widgets:
        sheet = widget.styleSheet()
        if not sheet:
            continue
        widget.setStyleSheet("")
        widget.setPalette(QPalette())  # nothing set by hand: follow the parent and the app
        widget.setStyleSheet(sheet)
        count += 1
    return count
