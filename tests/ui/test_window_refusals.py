"""The whole window refuses bad input with a message and stays finite on huge values.

Every test drives the real MainWindow (with a throwaway QSettings) and compares what the
views show with the engine's own ``compute()`` on the session's data, never with numbers
written into the test.
"""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from cell_typing import type_into_cell  # noqa: E402
from main_window_checks import (  # noqa: E402
    all_arrays,
    assert_same_arrays,
    assert_views_match,
    choose,
    click_cell,
    open_example,
    reference,
    show_editor,
    weights,
)
from PySide6.QtCore import Qt  # noqa: E402
from window_fixtures import RECOMPUTE_MS  # noqa: E402


# -- refusals --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "says"),
    [("abc", "keeps its value"), ("nan", "keeps its value"), ("1e31", "too large")],
)
def test_invalid_text_is_refused_with_a_message_and_nothing_changes(qtbot, window, text, says):
    arrays, shown = all_arrays(window), weights(window)
    editor = show_editor(window, "X")
    type_into_cell(qtbot, editor, 1, 2, text)
    assert says in editor.message()
    assert editor.message_label.isVisible()
    assert window.statusBar().currentMessage() == editor.message()
    assert_same_arrays(all_arrays(window), arrays)
    assert not window.history.can_undo
    assert not window.menus.undo.isEnabled()
    assert "*" not in window.windowTitle()
    np.testing.assert_array_equal(weights(window), shown)


def test_a_d_model_the_heads_do_not_divide_is_refused(qtbot, window):
    config, arrays = window.session.config, all_arrays(window)
    with qtbot.assertNotEmitted(window.live.updated, wait=50):
        window.controls.d_model.setValue(9)  # 2 heads do not divide 9
    assert window.session.config == config
    assert_same_arrays(all_arrays(window), arrays)
    assert "not divisible by 2 heads" in window.controls.error.text()
    assert window.controls.error.isVisible()
    assert "not divisible" in window.statusBar().currentMessage()
    assert window.controls.d_model.value() == 8  # the slider shows the session again
    for view in map(window.stages.view, window.stages.shown_stages()):
        assert not np.isnan(view.frame.image).any()


def test_an_experiment_with_heads_not_dividing_d_model_is_refused(qtbot, window):
    open_example(qtbot, window, "checkpoint-heads-not-dividing")
    assert window.banner.try_button.isVisible()
    config = window.session.config
    qtbot.mouseClick(window.banner.try_button, Qt.MouseButton.LeftButton)
    assert window.session.config == config
    assert "not divisible by 3 heads" in window.statusBar().currentMessage()
    assert "Engine says" in window.banner.text.text()
    assert not window.history.can_undo
    assert_views_match(window)


def test_a_fully_masked_row_gives_zero_weights_a_message_and_no_nan(qtbot, window):
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        choose(window.controls.mask, "custom")
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        click_cell(qtbot, window.stages.view("masked"), 0, 0)  # row 0 saw only key 0
    trace = assert_views_match(window)
    assert trace.fully_masked_rows == (0,)
    assert (weights(window)[0] == 0).all()
    assert window.stages.view("masked").frame.masked_cells[0].all()
    assert "Every key is hidden from The" in window.statusBar().currentMessage()
    for view in map(window.stages.view, window.stages.shown_stages()):
        assert np.isfinite(view.frame.image).all(), view.stage


def test_a_1e30_value_is_computed_without_nan_or_inf(qtbot, window):
    editor = show_editor(window, "X")
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        type_into_cell(qtbot, editor, 1, 2, "1e30")
    assert window.session.inputs.X[1, 2] == 1e30
    assert "float64" in window.statusBar().currentMessage()
    for view in map(window.stages.view, window.stages.shown_stages()):
        assert np.isfinite(view.frame.image).all(), view.stage
    trace = reference(window)
    assert trace.notes and np.isfinite(trace.stage("scores", 0)).all()
    scores = trace.stage("scores", 0)
    assert np.abs(scores).max() > np.finfo(np.float32).max  # beyond float32: the hard case
    np.testing.assert_allclose(window.stages.view("scores").frame.image, scores, rtol=1e-12)
    assert_views_match(window)


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_a_1e30_value_in_a_long_sequence_stays_finite_when_downsampled(qtbot, window):
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        window.controls.tokens.setValue(600)  # 600 x 600 scores: shrunk by 2 x 2 blocks
    editor = show_editor(window, "X")
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        assert editor.model().setData(editor.model().index(1, 2), "1e30")
    trace = reference(window)
    assert trace.notes  # computed in float64
    scores = trace.stage("scores", 0)  # [600, 600]
    image = window.stages.view("scores").frame.image
    assert image.shape == (300, 300) and np.isfinite(image).all()
    np.testing.assert_allclose(image, scores.reshape(300, 2, 300, 2).mean(axis=(1, 3)), rtol=1e-9)
    for view in map(window.stages.view, window.stages.shown_stages()):
        assert np.isfinite(view.frame.image).all(), view.stage


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_a_constant_huge_stage_still_gets_two_colour_levels(qtbot, window):
    open_example(qtbot, window, "three-tokens")
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        window.controls.tokens.setValue(1)  # one key: its weight is exactly 1
    editor = show_editor(window, "V", 0)
    editor.table.setFocus()
    editor.table.selectAll()
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        assert editor.paste("1e20")  # one number pasted over a selection fills it
    assert (window.session.inputs.V == 1e20).all()
    view = window.stages.view("head_outputs")
    low, high = view.frame.levels
    assert low < 1e20 < high
    assert len(view.frame.texts) == 2
    assert_views_match(window)


def test_fewer_heads_move_the_selected_head_onto_one_that_exists(qtbot, window):
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        choose(window.controls.heads, 8)
    window.session.selected_head = 7
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        choose(window.controls.heads, 2)
    assert window.session.selected_head == 1
    assert window.stages.view("weights").frame is not None
    assert window.heads_grid.selected_frame() == 1
    assert_views_match(window)
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        window.menus.undo.trigger()  # back to 8 heads: head 1 stays selected
    assert window.session.config.heads == 8 and window.session.selected_head == 1
    window.session.selected_head = 6
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        window.menus.redo.trigger()  # 2 heads again, this time through redo
    assert window.session.selected_head == 1
    assert_views_match(window)
