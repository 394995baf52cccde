"""The long-context summary reads plainly (issue 31, item 5): the entropy line is a strong
colour, its axis runs from 0 to log2 n (no auto-zoom that makes 1.92-1.98 bits look like large
swings), query positions get whole-number ticks, and the axis names are plain words."""

import numpy as np
import window_fixtures
from PySide6.QtGui import QColor

from attention_explorer.ui.pipeline.summary_view import integer_ticks

window, dialogs = window_fixtures.window, window_fixtures.dialogs


def _open(window, qtbot):
    menu = next(a.menu() for a in window.menuBar().actions() if a.text().replace("&", "") == "View")
    next(a for a in menu.actions() if a.text().replace("&", "") == "Long-context summary").trigger()
    view = window.summary_view
    qtbot.waitUntil(view.isVisible)
    return view


def _label(plot, side):
    return plot.getAxis(side).labelText + plot.getAxis(side).labelUnitPrefix


def test_the_summary_reads_plainly(window, qtbot):
    view = _open(window, qtbot)
    trace = window.live.trace
    n, m = trace.stage("weights", window.session.selected_head).shape
    colour = view.entropy_curve.opts["pen"].color()
    assert colour.lightness() < 140 and colour.saturation() > 100  # not light grey
    assert view.entropy_curve.opts["pen"].widthF() >= 2
    low, high = view.entropy_plot.getViewBox().viewRange()[1]
    assert low <= 0.0 + 0.05 and abs(high - np.log2(m)) < 0.1 * np.log2(m)
    ticks = view.entropy_plot.getAxis("bottom")._tickLevels[0]
    assert ticks and all(float(v).is_integer() for v, _ in ticks)
    for plot in (view.entropy_plot, view.distance_plot):
        for side in ("left", "bottom"):
            text = _label(plot, side)
            assert "x0" not in text and "bins from" not in text and "|" not in text
            assert not plot.getAxis(side).autoSIPrefix


def test_integer_ticks_are_whole_positions():
    assert integer_ticks(0, 3) == [(0.0, "0"), (1.0, "1"), (2.0, "2"), (3.0, "3")]
    values = [v for v, _ in integer_ticks(0, 4095)]
    assert all(v.is_integer() for v in values) and 3 <= len(values) <= 7
    assert QColor("#1f5fbf").lightness() < 140
