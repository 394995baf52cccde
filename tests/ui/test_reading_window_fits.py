"""The window fits a 1366x768 laptop (issue 31, item 3): with the induction example open and
every dock shown (the Model dock too) it can be made 1366x700; the experiment banner is one
title line that opens on demand, and does not repeat the walkthrough's About text."""

import window_fixtures
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget
from test_layout import sized

window, dialogs = window_fixtures.window, window_fixtures.dialogs


def _induction_with_every_dock(window, qtbot):
    sized(window, qtbot, 1366, 768)
    assert window.open_example("tiny-induction-copy")
    qtbot.waitUntil(lambda: window.banner.isVisible(), timeout=10000)
    docks = window.findChildren(QDockWidget)
    for dock in docks:
        dock.show()
    assert window.model_dock in docks and len(docks) >= 5
    qtbot.waitUntil(lambda: all(d.isVisible() for d in docks))
    qtbot.wait(200)
    return docks


def test_with_every_dock_shown_the_window_can_be_1366x700(window, qtbot):
    docks = _induction_with_every_dock(window, qtbot)
    assert window.minimumSizeHint().height() <= 700
    window.resize(1366, 700)
    qtbot.waitUntil(lambda: window.height() == 700, timeout=3000)
    assert window.width() == 1366
    assert all(d.isVisible() for d in docks)


def test_the_banner_is_a_title_line_that_opens_on_demand(window, qtbot):
    _induction_with_every_dock(window, qtbot)
    banner, about = window.banner, window.session.description
    assert banner.title_line.isVisible() and not banner.scroll.isVisible()
    line = banner.title_line.text()
    assert "tiny-induction" not in line or about[:40] not in line  # not the About text
    assert banner.height() <= 3 * banner.fontMetrics().lineSpacing() + 16
    qtbot.mouseClick(banner.more_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: banner.scroll.isVisible())
    assert banner.expanded() and "Look for:" in banner.details_text()
    assert "knockouts break it" not in banner.plain_text()  # the notes are the About step's
    assert banner.scroll.height() <= int(768 * 0.2) + 1 and window.height() == 768
    qtbot.mouseClick(banner.more_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not banner.scroll.isVisible())
