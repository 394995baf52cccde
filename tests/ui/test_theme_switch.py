"""Switching the theme while the app runs restyles the heatmap cards, the matrix editor and
its toolbar: dark -> light -> system, colours checked on the real widgets."""

from __future__ import annotations

import window_fixtures
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication, QTableView

from attention_explorer.ui.window.theme import DARK_COLOURS

window, dialogs = window_fixtures.window, window_fixtures.dialogs
BASE, TEXT = QPalette.ColorRole.Base, QPalette.ColorRole.Text


def _luminance(colour) -> float:
    return 0.2126 * colour.redF() + 0.7152 * colour.greenF() + 0.0722 * colour.blueF()


def _colours(window, qtbot):
    """What the learner sees: card, plot, title, editor table and toolbar colours."""
    qtbot.wait(20)
    view = window.stages.view("scores")
    table = window.matrices.findChildren(QTableView)[0]
    editor = table.parent()
    button = editor.random_button
    return {
        "card": view.palette().color(BASE).name(),
        "plot": view.graphics.backgroundBrush().color().name(),
        "title": view.title_bar.title.palette().color(TEXT).name(),
        "table": table.viewport().palette().color(BASE).name(),
        "button": button.palette().color(button.foregroundRole()),
        "behind button": button.palette().color(QPalette.ColorRole.Window),
    }


def test_dark_light_system_restyle_cards_editor_and_toolbar(window, qtbot):
    window.stages.view("scores").set_highlighted(True)  # a card with its walkthrough frame
    window.prefs.theme = "dark"
    dark = _colours(window, qtbot)
    base = DARK_COLOURS[BASE]
    assert dark["card"] == dark["plot"] == dark["table"] == base
    assert dark["title"] == DARK_COLOURS[TEXT]
    window.prefs.theme = "light"
    light = _colours(window, qtbot)
    app_base = QApplication.instance().palette().color(BASE).name()
    assert light["card"] == light["plot"] == light["table"] == app_base != base
    assert light["title"] != dark["title"]
    window.prefs.theme = "system"
    system = _colours(window, qtbot)
    assert system["card"] == system["table"] == QApplication.instance().palette().color(BASE).name()
    for colours in (dark, light, system):  # toolbar labels stay readable
        contrast = abs(_luminance(colours["button"]) - _luminance(colours["behind button"]))
        assert contrast > 0.4, colours


def test_the_walkthrough_frame_survives_a_theme_switch(window, qtbot):
    view = window.stages.view("weights")
    view.set_highlighted(True)
    window.prefs.theme = "dark"
    qtbot.wait(20)
    assert view.is_highlighted() and "f0a020" in view.styleSheet()
    window.prefs.theme = "system"
