"""Every token name on every heatmap's axes of a 32-token session, at 1366x768 and 1600x1000
(issue 20, item 5): rows get a line each at 7 pt or more (the views grow taller and the stage
column scrolls), columns a shortened name each, staggered over up to six lines."""

from __future__ import annotations

import dataclasses

import pytest
import window_fixtures
from PySide6.QtGui import QFontMetricsF
from test_layout import sized

from attention_explorer.core.stages import stage as catalogue_stage
from attention_explorer.session import resize, starter_session
from attention_explorer.ui.heatmap.heatmap_labels import ALL_LABELS_UP_TO, MIN_POINTS, TOKEN_AXES

window, dialogs = window_fixtures.window, window_fixtures.dialogs


def _names(labels, shown) -> bool:
    """True when ``shown`` names every label in order, each whole or cut with an ellipsis."""
    return len(shown) == len(labels) and all(
        s == t or (s.endswith("…") and len(s) >= 3 and t.startswith(s[:-1]))
        for s, t in zip(shown, labels)
    )


def _tick_font(axis):
    return axis.style.get("tickFont") or axis.font()


def _check_view(view) -> None:
    frame = view.frame
    box = view.plot.getViewBox()
    entry = catalogue_stage(view.stage)
    for side, labels, pixels in (
        ("left", frame.row_labels, box.height()),
        ("bottom", frame.col_labels, box.width()),
    ):
        if len(labels) < 2 or (entry.rows, entry.cols)[side == "bottom"] not in TOKEN_AXES:
            continue  # a dimension axis: round numbers
        axis = view.plot.getAxis(side)
        shown = view.axes.shown(side)
        assert _names(labels, shown), (view.stage, side, shown)
        font = _tick_font(axis)
        assert font.pointSizeF() >= MIN_POINTS, (view.stage, side, font.pointSizeF())
        if side == "left":  # one line per row: the letters of two names never overlap
            ink = QFontMetricsF(font).tightBoundingRect("".join(shown)).height()
            assert ink <= pixels / len(labels), (view.stage, ink, pixels)


@pytest.mark.parametrize("size", [(1366, 768), (1600, 1000)])
def test_a_32_token_session_names_every_row_and_column_of_every_view(window, qtbot, size):
    n = ALL_LABELS_UP_TO
    sized(window, qtbot, *size)  # the window is up, then the session opens (as from a file)
    window.document.replace(resize.set_token_count(starter_session(), n))
    qtbot.waitUntil(lambda: window.live.trace.n_queries == n, timeout=10000)
    panel = window.stages
    if not panel.inputs_open():
        panel.inputs_toggle.click()  # X, Q, K and V too
    checked = []
    for stage in panel.on_screen_stages():
        view = panel.view(stage)
        panel.scroll_area().ensureWidgetVisible(view)  # views out of sight draw when shown
        qtbot.waitUntil(lambda v=view: v.frame is not None and len(v.frame.row_labels) == n)
        qtbot.waitUntil(lambda v=view: len(v.axes.shown("left")) == n, timeout=5000)
        _check_view(view)
        checked.append(stage)
    every = {"X", "Q", "K", "V", "scores", "scaled", "masked", "weights", "head_outputs"}
    assert every <= set(checked), checked
    tokens = list(window.live.trace.tokens)
    weights = panel.view("weights")
    assert weights.axes.shown("left") == tokens  # the rows: every name whole
    assert _names(tokens, weights.axes.shown("bottom"))


@pytest.mark.parametrize("size", [(1366, 768), (1600, 1000)])
def test_growing_to_32_tokens_keeps_the_layout_and_names_every_token(window, qtbot, size):
    """From the starter's 4 tokens to 32, an edit: the views stay where they were laid out
    (issue 20, item 3) and still name every row and column."""
    n = ALL_LABELS_UP_TO
    sized(window, qtbot, *size)
    panel = window.stages
    lines = panel._arrangement[1]
    assert window.tokens.set_count(n)
    qtbot.waitUntil(lambda: window.live.trace.n_queries == n, timeout=10000)
    qtbot.wait(30)  # the views' width requests arrive: an edit's wait for a new size
    assert panel._arrangement[1] == lines
    for stage in ("scores", "weights"):
        view = panel.view(stage)
        panel.scroll_area().ensureWidgetVisible(view)
        qtbot.waitUntil(lambda v=view: len(v.axes.shown("left")) == n, timeout=5000)
        _check_view(view)


def test_a_new_document_with_the_same_name_is_laid_out_afresh(window, qtbot):
    """Opening a file is a new document even when its session has the open one's name (a
    32-token file saved from the starter): its views are laid out for it, as a session of
    another name would be, not kept in the starter's 4-token lines."""
    sized(window, qtbot, 1600, 1000)
    panel = window.stages
    grown = resize.set_token_count(starter_session(), ALL_LABELS_UP_TO)
    renamed = dataclasses.replace(grown, name="A session of another name")

    def open_and_read(data):
        window.document.replace(starter_session())
        qtbot.waitUntil(lambda: window.live.trace.n_queries == 4, timeout=10000)
        qtbot.wait(50)
        window.document.replace(data)
        qtbot.waitUntil(lambda: window.live.trace.n_queries == ALL_LABELS_UP_TO, timeout=10000)
        qtbot.wait(200)  # the views draw, then the panel lays them out
        return panel.columns(), panel._arrangement[1]

    assert grown.name == starter_session().name
    assert open_and_read(grown) == open_and_read(renamed)
