"""The q · k pair view at the score step: q, k, their products (from the engine), the sum,
and edits that move the score, the weight and the output, undoably (issue 20, item 2)."""

import numpy as np
from PySide6.QtCore import QPoint, Qt
from window_fixtures import RECOMPUTE_MS, explorer_window

from attention_explorer.session import resize, starter_session


def to_scores(walk):
    walk.restart()
    while walk.current().key != "scores":
        walk.go_next()


def test_the_pair_view_shows_q_k_products_and_the_score(qtbot, tmp_path, dialogs):
    with explorer_window(qtbot, tmp_path) as win:
        walk, pair = win.walkthrough, win.dot_product
        assert not pair.isVisible()
        to_scores(walk)
        assert pair.isVisible()
        head, row, col = pair.pair
        assert (row, col) == walk.current().cells[0]
        trace = win.live.trace
        q, k = trace.stage("Q", head)[row], trace.stage("K", head)[col]
        np.testing.assert_allclose(pair.canvas.q, q)
        np.testing.assert_allclose(pair.canvas.k, k)
        np.testing.assert_allclose(pair.canvas.products, q * k)
        assert np.isclose(pair.canvas.products.sum(), trace.stage("scores", head)[row, col])
        walk.go_next()
        assert not pair.isVisible()


def test_typing_a_component_moves_score_weight_and_output_and_undo_restores(
    qtbot, tmp_path, dialogs
):
    with explorer_window(qtbot, tmp_path) as win:
        win.document.replace(resize.set_mode(starter_session(), "direct"))
        qtbot.waitUntil(lambda: win.live.trace.config.mode == "direct", timeout=RECOMPUTE_MS)
        walk, pair = win.walkthrough, win.dot_product
        to_scores(walk)
        before = pair.numbers()
        assert pair.q_box.isEnabled()
        with qtbot.waitSignal(win.live.updated, timeout=RECOMPUTE_MS):
            pair.component.setValue(0)
            pair.q_box.setValue(pair.q_box.value() + 3.0)
        after = pair.numbers()
        assert after["score"] != before["score"] and after["weight"] != before["weight"]
        head, row, col = pair.pair
        assert np.isclose(pair.canvas.products.sum(), after["score"])
        with qtbot.waitSignal(win.live.updated, timeout=RECOMPUTE_MS):
            win.history.undo()
        assert np.isclose(pair.numbers()["score"], before["score"])


def test_dragging_a_q_cell_edits_q_as_one_undo_step(qtbot, tmp_path, dialogs):
    with explorer_window(qtbot, tmp_path) as win:
        win.document.replace(resize.set_mode(starter_session(), "direct"))
        qtbot.waitUntil(lambda: win.live.trace.config.mode == "direct", timeout=RECOMPUTE_MS)
        walk, pair = win.walkthrough, win.dot_product
        to_scores(walk)
        before = pair.numbers()["score"]
        canvas = pair.canvas
        start = canvas.cell_rect(0, 0).center().toPoint()
        qtbot.mousePress(canvas, Qt.MouseButton.LeftButton, pos=start)
        for dy in (5, 10, 20):
            qtbot.mouseMove(canvas, start - QPoint(0, dy))
        qtbot.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=start - QPoint(0, 20))
        qtbot.waitUntil(lambda: pair.numbers()["score"] != before, timeout=RECOMPUTE_MS)
        with qtbot.waitSignal(win.live.updated, timeout=RECOMPUTE_MS):
            win.history.undo()  # the whole drag at once
        assert np.isclose(pair.numbers()["score"], before)


def test_projection_mode_explains_why_q_cannot_be_typed_here(qtbot, tmp_path, dialogs):
    with explorer_window(qtbot, tmp_path) as win:
        to_scores(win.walkthrough)
        pair = win.dot_product
        assert win.session.config.mode == "projection"
        assert not pair.q_box.isEnabled() and "X·W_Q" in pair.q_box.toolTip()
        assert pair.set_component(0, 0, 5.0) is False


def test_the_weighted_sum_shows_the_weights_and_v_and_edits_v(qtbot, tmp_path, dialogs):
    with explorer_window(qtbot, tmp_path) as win:
        win.document.replace(resize.set_mode(starter_session(), "direct"))
        qtbot.waitUntil(lambda: win.live.trace.config.mode == "direct", timeout=RECOMPUTE_MS)
        walk, total = win.walkthrough, win.sum_view
        walk.restart()
        while walk.current().key != "weighted_sum":
            walk.go_next()
        assert total.isVisible() and not win.dot_product.isVisible()
        head, row, col = total.pair
        trace = win.live.trace
        w, v = trace.stage("weights", head)[row], trace.stage("V", head)[:, col]
        np.testing.assert_allclose(total.canvas.q, w)
        np.testing.assert_allclose(total.canvas.k, v)
        assert np.isclose(total.canvas.products.sum(), total.numbers()["output"])
        assert not total.q_box.isEnabled() and total.k_box.isEnabled()  # weights are computed
        before = total.numbers()["output"]
        key = int(np.argmax(w))  # a key with weight, so its value moves the output
        with qtbot.waitSignal(win.live.updated, timeout=RECOMPUTE_MS):
            total.component.setValue(key)
            total.k_box.setValue(total.k_box.value() + 2.0)
        assert not np.isclose(total.numbers()["output"], before)
        with qtbot.waitSignal(win.live.updated, timeout=RECOMPUTE_MS):
            win.history.undo()
        assert np.isclose(total.numbers()["output"], before)


def test_under_qk_norm_the_pair_view_shows_the_normed_q_and_k(qtbot, tmp_path, dialogs):
    """The scores read the normed q and k under QK-norm (issue 28.1): so does the side view,
    whose products must add up to the score."""
    with explorer_window(qtbot, tmp_path) as win:
        data = starter_session()
        d_k = data.config.head_dim
        rng = np.random.default_rng(0)
        data = data.with_changes(
            config=data.config.with_changes(qk_norm="rms"),
            inputs=data.inputs.with_changes(
                q_norm=rng.uniform(0.5, 2.0, d_k), k_norm=rng.uniform(0.5, 2.0, d_k)
            ),
        )
        win.document.replace(data)
        qtbot.waitUntil(lambda: win.live.trace.config.qk_norm == "rms", timeout=RECOMPUTE_MS)
        walk, pair = win.walkthrough, win.dot_product
        to_scores(walk)
        head, row, col = pair.pair
        trace = win.live.trace
        np.testing.assert_allclose(pair.canvas.q, trace.stage("Q_normed", head)[row])
        np.testing.assert_allclose(pair.canvas.k, trace.stage("K_normed", head)[col])
        assert np.isclose(pair.canvas.products.sum(), trace.stage("scores", head)[row, col])
