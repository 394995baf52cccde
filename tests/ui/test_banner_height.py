"""A long example note does not push the views off a small screen: the banner is as tall as
its text up to a fifth of the window, then its text scrolls (the induction example's note is
13 lines at 1366x768)."""

from __future__ import annotations

import window_fixtures
from test_layout import sized

from attention_explorer.ui.walkthrough.experiment_banner import MAX_HEIGHT_SHARE

window, dialogs = window_fixtures.window, window_fixtures.dialogs


def _open(window, qtbot, key):
    assert window.open_example(key)
    qtbot.waitUntil(lambda: window.banner.isVisible(), timeout=5000)
    window.banner.set_expanded(True)  # the banner starts as one line; Details opens it
    qtbot.wait(100)


def test_a_long_note_scrolls_inside_a_fifth_of_the_window(window, qtbot):
    sized(window, qtbot, 1366, 768)
    _open(window, qtbot, "tiny-induction-copy")
    banner = window.banner
    assert banner.scroll.height() <= int(768 * MAX_HEIGHT_SHARE)
    assert banner.scroll.verticalScrollBar().maximum() > 0  # the rest is a scroll away
    assert "knockouts break it" in banner.plain_text()  # nothing of the text is lost
    window.resize(1600, 1000)  # a taller window gives the banner more room
    qtbot.waitUntil(lambda: banner.scroll.height() > int(768 * MAX_HEIGHT_SHARE), timeout=3000)
    assert banner.scroll.height() <= int(1000 * MAX_HEIGHT_SHARE)


def test_a_short_note_shows_whole_without_a_scroll_bar(window, qtbot):
    sized(window, qtbot, 1366, 768)
    _open(window, qtbot, "starter")
    banner = window.banner
    assert banner.scroll.verticalScrollBar().maximum() == 0
    assert banner.scroll.height() >= banner.text.heightForWidth(banner.scroll.viewport().width())
