"""The window on a long sequence: views drawn from the pass's previews, numbers from rows
recomputed on demand, all equal to the same session computed in full, independently."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
import pytest
from PySide6.QtCore import Qt
from window_fixtures import shown_stage_panel

from attention_explorer.core.numbers import format_number
from attention_explorer.core.stages import stage
from attention_explorer.display import levels_for, shrink
from attention_explorer.display.shrink import signed_levels
from attention_explorer.engine.recompute import RecomputedStage
from attention_explorer.session.compute_session import compute_session
from attention_explorer.session.evented_session import Session
from attention_explorer.session.resize import set_token_count
from attention_explorer.session.starter import starter_session
from attention_explorer.ui.state import live_trace
from attention_explorer.ui.state.live_trace import LiveTrace

TOKENS = 600  # beyond the 512 display limit: previewed, 2×2 blocks
SQUARE = ("scores", "scaled", "masked", "weights")


@pytest.fixture
def long_panel(qtbot, monkeypatch):
    # 2 heads x 600 x 600 cells count as long: the pass keeps the selected head, previewed
    monkeypatch.setattr(live_trace, "SELECTED_HEAD_ONLY_THRESHOLD", 2 * 500 * 500)
    session = Session.from_data(set_token_count(starter_session(), TOKENS))
    live, panel = shown_stage_panel(qtbot, session)
    qtbot.waitUntil(lambda: panel.view("weights").frame is not None, timeout=20000)
    yield session, live, panel
    live.shutdown()


def _full(session):
    """The session computed here in full ([n, n] arrays), without previews."""
    return compute_session(session.data(), session.backend, dtype=session.dtype)


def test_the_views_draw_previews_equal_to_the_full_stages(long_panel, qtbot):
    session, live, panel = long_panel
    trace, full = live.trace, _full(session)
    assert trace.heads == (0,) and live.preview == 512
    assert set(trace.previews) >= {*SQUARE, "mask"}  # the window asked for previews
    for name in SQUARE:
        assert isinstance(trace[name], RecomputedStage), name  # no [n, n] array kept
        view = panel.view(name)  # (a view out of sight builds its frame when read)
        whole = full.stage(name, 0)  # [600, 600]
        expected = shrink(whole, stage(name).shrink)
        assert view.frame.block == (2, 2), name
        np.testing.assert_allclose(view.frame.image, expected.image, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(view.frame.masked_cells, expected.masked_cells, err_msg=name)
        # signed block means are coloured on levels fitted to them (the title says so)
        levels = signed_levels(name, expected) or levels_for(name, whole)
        np.testing.assert_allclose(view.frame.levels, levels, rtol=1e-5)
        assert "600×600 shown as 300×300" in view.frame.heading


def test_hover_and_zoom_read_recomputed_rows_with_the_full_numbers(long_panel, qtbot):
    session, live, panel = long_panel
    full = _full(session)
    for name, cell in (("weights", (417, 3)), ("scores", (9, 588))):
        value = float(full.stage(name, 0)[cell])
        assert format_number(value) in panel.view(name).tooltip_text(*cell), name
    view = panel.view("weights")
    view.graphics.setFocus()
    for _ in range(5):
        qtbot.keyClick(view.graphics, Qt.Key.Key_Plus)
    qtbot.waitUntil(lambda: view.frame.zoomed and view.frame.block == (1, 1))
    r0, r1, c0, c1 = view.frame.region
    np.testing.assert_allclose(
        view.frame.image, full.stage("weights", 0)[r0:r1, c0:c1], rtol=1e-5, atol=1e-7
    )


def test_a_pass_of_every_head_keeps_full_stages(qtbot):
    """Below the head limit every head is computed and kept whole: previewing all of them
    would shrink stages no view shows."""
    session = Session.from_data(set_token_count(starter_session(), TOKENS))
    live = LiveTrace(session)
    try:
        live.recompute_now()
        qtbot.waitUntil(lambda: live.trace is not None, timeout=20000)
        assert live.preview is None and live.trace.heads == (0, 1)
        assert not live.trace.previews and isinstance(live.trace["weights"], np.ndarray)
    finally:
        live.shutdown()


def test_the_walkthrough_zooms_a_shrunk_view_onto_its_cell(qtbot, window):
    with qtbot.waitSignal(window.live.updated, timeout=20000):
        window.controls.tokens.setValue(TOKENS)  # 600 x 600: shown as 300 x 300 blocks
    walk = window.walkthrough
    walk.restart()
    while walk.current().key != "scores":
        walk.go_next()
    row, col = walk.current().cells[0]
    view = window.stages.view("scores")
    qtbot.waitUntil(lambda: view.frame.zoomed and view.frame.block == (1, 1))
    r0, r1, c0, c1 = view.frame.region
    assert r0 <= row < r1 and c0 <= col < c1 and r1 - r0 <= 12 and c1 - c0 <= 12
    assert f"of {TOKENS}×{TOKENS}" in view.frame.heading  # the title says it is zoomed
    assert len(view.frame.texts) == (r1 - r0) * (c1 - c0)  # exact cells, with their numbers


def test_the_walkthrough_leaves_small_views_whole(qtbot, window):
    walk = window.walkthrough
    walk.restart()
    while walk.current().key != "scores":
        walk.go_next()
    assert not window.stages.view("scores").frame.zoomed
