"""After "Try it" the tried change is said once (in the Details), and at 1366x768 the banner's
title line is elided with "…" and a tooltip holding the whole line, never clipped (issue 31.3)."""

from __future__ import annotations

import pytest
import window_fixtures
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetrics
from window_fixtures import RECOMPUTE_MS

from attention_explorer.ui.walkthrough.experiment_banner import ExperimentBanner

window, dialogs = window_fixtures.window, window_fixtures.dialogs


@pytest.fixture
def tried_window(window, qtbot):
    window.resize(1366, 768)
    qtbot.waitUntil(lambda: window.width() == 1366, timeout=3000)
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        assert window.open_example("causal-mask")
    qtbot.waitUntil(lambda: window.banner.isVisible(), timeout=RECOMPUTE_MS)
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        qtbot.mouseClick(window.banner.try_button, Qt.MouseButton.LeftButton)
    return window


def test_the_tried_change_is_said_once_in_the_details(tried_window):
    banner = tried_window.banner
    assert "Tried: mask = none" in banner.details_text()
    title = banner.title_full_text()
    assert "mask = none" not in title and "Tried" not in title
    assert "Experiment applied" in title
    assert banner.plain_text().count("mask = none") == 1


def test_a_title_too_wide_is_elided_with_the_whole_line_in_its_tooltip(tried_window, qtbot):
    banner: ExperimentBanner = tried_window.banner
    banner.session.name = "a very long example name " * 8
    banner.refresh()
    qtbot.waitUntil(banner.title_elided, timeout=3000)
    label = banner.title_line
    assert label.textFormat() == Qt.TextFormat.PlainText
    assert label.text().endswith("…")
    width = label.contentsRect().width()
    assert label.fontMetrics().horizontalAdvance(label.text()) <= width
    assert banner.title_full_text() in label.toolTip()
    assert "<b>" not in label.text()
    # short again: the full line (bold name) is back where it fits, and the tooltip is cleared
    banner.session.name = "s"
    banner.refresh()
    bold = QFont(label.font())
    bold.setBold(True)
    fits = QFontMetrics(bold).horizontalAdvance(banner.title_full_text()) <= width
    assert banner.title_elided() is not fits
    if fits:
        assert "<b>s</b>" in label.text() and label.toolTip() == ""
