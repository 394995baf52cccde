"""Choosing "Rotary (RoPE)" in the controls brings the rotated Q and K views, from the
catalogue alone: the panel, the captions and the cell arithmetic follow."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
from window_fixtures import RECOMPUTE_MS  # noqa: E402

from attention_explorer.engine.explain import explain  # noqa: E402


def test_choosing_rope_shows_the_rotated_views(qtbot, window):
    combo = window.controls.positional
    assert combo.itemText(combo.findData("rope")) == "Rotary (RoPE)"
    shown = window.stages.shown_stages()
    assert "Q_rot" not in shown and "K_rot" not in shown
    before = window.stages.view("scores").frame.image.copy()
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        combo.setCurrentIndex(combo.findData("rope"))
    assert window.session.config.positional == "rope"
    shown = window.stages.shown_stages()
    assert "Q_rot" in shown and "K_rot" in shown and "positions" not in shown
    trace = window.live.trace
    qtbot.waitUntil(lambda: window.stages.view("Q_rot").frame is not None)
    view = window.stages.view("Q_rot")
    assert view.frame.heading.startswith("queries Q after rotation")
    caption = window.stages.findChild(type(window.stages.header), "caption_K_rot")
    assert "θ=10000" in caption.text()
    assert not np.allclose(window.stages.view("scores").frame.image, before)  # rotated scores
    cell = explain(trace, "Q_rot", window.session.selected_head, 1, 0)
    assert "angle = position 1" in cell.steps[0].title


def test_the_pair_view_shows_the_rotated_q_and_k_under_rope(qtbot, tmp_path, dialogs):
    from window_fixtures import explorer_window

    from attention_explorer.session import resize, starter_session

    with explorer_window(qtbot, tmp_path) as win:
        data = resize.set_mode(starter_session(), "direct")
        win.document.replace(data.with_changes(config=data.config.with_changes(positional="rope")))
        qtbot.waitUntil(lambda: win.live.trace.config.positional == "rope", timeout=RECOMPUTE_MS)
        walk, pair = win.walkthrough, win.dot_product
        walk.restart()
        while walk.current().key != "scores":
            walk.go_next()
        head, row, col = pair.pair
        trace = win.live.trace
        np.testing.assert_allclose(pair.canvas.q, trace.stage("Q_rot", head)[row])
        np.testing.assert_allclose(pair.canvas.k, trace.stage("K_rot", head)[col])
        assert np.isclose(pair.canvas.products.sum(), trace.stage("scores", head)[row, col])
        assert not pair.q_box.isEnabled()  # rotated values are not typed: not edited here
