"""Issue 31.12: the q · k side view in projection mode says where q and k come from and offers
to switch to typing Q, K and V (no greyed boxes without a reason); its products are readable
at 1366x768 (each written in its cell, over a bar as long as the cell allows)."""

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox
from window_fixtures import RECOMPUTE_MS

from attention_explorer.ui.widgets import dialogs as message_boxes


def to_step(walk, key):
    walk.restart()
    while walk.current().key != key:
        walk.go_next()


def test_projection_mode_says_where_q_comes_from(qtbot, window):
    window.resize(1366, 768)
    to_step(window.walkthrough, "scores")
    pair = window.dot_product
    assert window.session.config.mode == "projection"
    assert pair.source.isVisible() and "q = x·W_Q" in pair.source.text()
    assert not pair.q_box.isVisible() and not pair.k_box.isVisible()
    assert pair.direct_button.isVisible()


def test_the_button_switches_to_typing_q_after_asking(qtbot, window, monkeypatch):
    asked = []

    def yes(parent, title, text, *args, **kwargs):
        asked.append(text)
        return QMessageBox.StandardButton.Yes

    monkeypatch.setattr(message_boxes, "question", yes)
    to_step(window.walkthrough, "scores")
    pair = window.dot_product
    q = window.live.trace.stage("Q", pair.pair[0]).copy()
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        qtbot.mouseClick(pair.direct_button, Qt.MouseButton.LeftButton)
    assert asked and "direct mode" in asked[0]
    assert window.session.config.mode == "direct"
    np.testing.assert_allclose(window.live.trace.stage("Q", pair.pair[0]), q, rtol=1e-6)
    to_step(window.walkthrough, "scores")  # direct mode has fewer steps before it
    qtbot.waitUntil(lambda: pair.q_box.isVisible() and pair.q_box.isEnabled())
    assert not pair.source.isVisible() and not pair.direct_button.isVisible()


def test_the_weighted_sum_says_where_v_comes_from(qtbot, window):
    to_step(window.walkthrough, "weighted_sum")
    total = window.sum_view
    assert total.source.isVisible() and "v = x·W_V" in total.source.text()
    assert total.direct_button.isVisible() and not total.k_box.isVisible()


def test_products_are_readable_at_1366x768(qtbot, window):
    window.resize(1366, 768)
    qtbot.wait(50)
    to_step(window.walkthrough, "scores")
    pair = window.dot_product
    canvas = pair.canvas
    qtbot.waitUntil(lambda: canvas.products.size > 0)
    line = canvas.fontMetrics().height()
    row = canvas.cell_rect(2, 0)
    assert row.height() >= line  # a line of text: the product's number is written in it
    assert canvas.shows_numbers()
    largest = int(np.argmax(np.abs(canvas.products)))
    assert canvas.bar_rect(largest).width() >= 0.4 * row.width()  # not a 4-pixel sliver
    assert canvas.bar_rect(largest).height() >= line - 4
    sign = np.sign(canvas.products[largest])
    middle = row.center().x()
    bar = canvas.bar_rect(largest)
    assert (bar.left() >= middle - 1) if sign > 0 else (bar.right() <= middle + 1)
