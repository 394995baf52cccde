"""The Controls dock never scrolls sideways (issue 31): with every dock shown, at 1366x768 and
at 1600x1000, and with the dock at its least width (where the Model dock or a saved layout put
it), the panel's rows used to be some 50 px wider than the dock (a combo box asked for its
longest option). The rows now fit the dock; an option longer than
its box is shown elided, and whole as soon as the dock is wide enough."""

from __future__ import annotations

import pytest
import window_fixtures
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget
from test_layout import sized

from attention_explorer.session import History, Session, starter_session
from attention_explorer.ui.editing.controls_panel import ControlsPanel

window, dialogs = window_fixtures.window, window_fixtures.dialogs


def _every_dock_shown(window, qtbot):
    docks = window.findChildren(QDockWidget)
    for dock in docks:
        dock.show()
    assert window.model_dock in docks and len(docks) >= 5
    qtbot.waitUntil(lambda: all(d.isVisible() for d in docks))
    qtbot.wait(100)


def _fits(window) -> None:
    scroll = window.controls_dock.widget()
    panel = scroll.widget()
    assert panel is window.controls
    assert panel.minimumSizeHint().width() <= scroll.viewport().width()
    assert panel.width() <= scroll.viewport().width()
    assert scroll.horizontalScrollBar().maximum() == 0
    assert not scroll.horizontalScrollBar().isVisible()


@pytest.mark.parametrize("size", [(1366, 768), (1600, 1000)])
@pytest.mark.parametrize("example", ["starter", "tiny-induction-copy"])
def test_with_every_dock_shown_the_controls_never_scroll_sideways(window, qtbot, size, example):
    sized(window, qtbot, *size)
    assert example == "starter" or window.open_example(example)
    _every_dock_shown(window, qtbot)
    _fits(window)
    # the dock at its least width: where the Model dock, a saved layout or a drag puts it
    window.resizeDocks([window.controls_dock], [1], Qt.Orientation.Horizontal)
    qtbot.waitUntil(lambda: window.controls_dock.widget().width() <= 282)
    _fits(window)
    window.resize(size[0], 700)  # shorter: the dock may scroll down, never sideways
    qtbot.waitUntil(lambda: window.height() == 700)
    qtbot.wait(50)
    _fits(window)


def test_a_long_option_is_elided_in_a_narrow_panel_and_whole_in_a_wide_one(qtbot):
    session = Session.from_data(starter_session())
    panel = ControlsPanel(session, History(session))
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitExposed(panel)
    panel.qk_norm.setCurrentIndex(panel.qk_norm.count() - 1)  # the longest option
    full = panel.qk_norm.currentText()
    assert "Gemma 3" in full
    panel.resize(panel.minimumSizeHint().width(), panel.height())
    qtbot.waitUntil(lambda: panel.qk_norm.shown_text() != full)
    shown = panel.qk_norm.shown_text()
    assert shown.endswith("…") and full.startswith(shown[:-1])
    panel.resize(480, panel.height())
    qtbot.waitUntil(lambda: panel.qk_norm.shown_text() == full)
