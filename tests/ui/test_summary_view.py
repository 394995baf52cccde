"""View > Long-context summary follows the selected head and query."""

from __future__ import annotations

import numpy as np
import window_fixtures

from attention_explorer.display import summaries

window, dialogs = window_fixtures.window, window_fixtures.dialogs


def _menu_action(window, menu_name, text):
    menu = next(
        a.menu() for a in window.menuBar().actions() if a.text().replace("&", "") == menu_name
    )
    return next(a for a in menu.actions() if a.text().replace("&", "") == text)


def test_summary_shows_entropy_distance_sinks_and_top_keys(window, qtbot):
    _menu_action(window, "View", "Long-context summary").trigger()
    view = window.summary_view
    qtbot.waitUntil(view.isVisible)
    trace = window.live.trace
    head = window.session.selected_head
    weights = trace.stage("weights", head)  # [n, m]
    x, y = view.entropy_curve.getData()
    assert len(x) == trace.n_queries
    np.testing.assert_allclose(y, summaries.row_entropy(weights))
    heights = view.bars.opts["height"]
    assert np.isclose(np.sum(heights), 1.0)
    assert "Attention sinks" in view.sinks.text()
    assert view.top.text().startswith("Top ") and trace.tokens[0][:5] in view.top.text()
    window.session.selected_cell = (trace.n_queries - 1, 0)
    assert f"query {trace.n_queries - 1}" in view.top.text()
    if window.session.config.heads > 1:
        window.session.selected_head = 1
        assert view.heading.text().startswith("Head 1:")
