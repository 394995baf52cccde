"""The whole window: typing into a matrix, the controls and the custom mask.

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
    assert_views_match,
    choose,
    click_cell,
    open_example,
    show_editor,
    weights,
)
from window_fixtures import RECOMPUTE_MS  # noqa: E402


# -- typing into a matrix ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("example", "name", "head", "cell"),
    [
        (None, "X", None, (1, 3)),  # projection mode: an embedding
        ("three-tokens", "Q", 0, (1, 1)),  # direct mode, one head
        ("i-love-pizza-two-heads", "K", 1, (0, 0)),  # cross-attention, the second head's keys
    ],
)
def test_typing_into_a_cell_recomputes_the_views(qtbot, window, example, name, head, cell):
    if example is not None:
        open_example(qtbot, window, example)
    editor = show_editor(window, name, head)
    old = float(editor.model().matrix()[cell])
    before = weights(window)
    new = round(old + 1.75, 4)
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        type_into_cell(qtbot, editor, *cell, f"{new}")
    full = window.session.inputs.arrays()[name]
    assert (full[head] if head is not None else full)[cell] == new
    trace = assert_views_match(window)
    np.testing.assert_allclose(
        weights(window), trace.stage("weights", window.session.selected_head)
    )
    assert not np.allclose(weights(window), before)  # the edit reached the weights
    assert window.windowTitle().startswith(window.session.name + "*")


# -- the controls --------------------------------------------------------------------------
def test_tokens_slider_grows_and_shrinks_every_view(qtbot, window):
    c = window.controls
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        c.tokens.setValue(6)
    assert len(window.session.tokens) == 6
    assert window.stages.view("weights").frame.image.shape == (6, 6)
    assert window.stages.view("output").frame.image.shape == (6, 8)
    assert window.matrices.editor("X").model().rowCount() == 6
    assert_views_match(window)
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        c.tokens.setValue(2)
    assert window.stages.view("scores").frame.image.shape == (2, 2)
    assert_views_match(window)


def test_d_model_slider_resizes_the_projections(qtbot, window):
    c = window.controls
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        c.d_model.setValue(12)
    config = window.session.config
    assert (config.d_model, config.heads, config.head_dim) == (12, 2, 6)
    assert window.stages.view("head_outputs").frame.image.shape == (4, 6)
    assert window.stages.view("concat").frame.image.shape == (4, 12)
    assert window.stages.view("output").frame.image.shape == (4, 12)
    assert window.matrices.editor("X").model().columnCount() == 12
    assert [c.heads.itemData(k) for k in range(c.heads.count())] == [1, 2, 3, 4, 6, 12]
    assert_views_match(window)


def test_heads_combo_changes_the_number_of_heads(qtbot, window):
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        choose(window.controls.heads, 4)
    assert window.session.config.heads == 4
    assert window.heads_grid.head_count() == 4
    assert window.stages.view("head_outputs").frame.image.shape == (4, 2)
    assert window.stages.view("concat").frame.image.shape == (4, 8)
    assert_views_match(window)
    window.session.selected_head = 3
    trace = assert_views_match(window)
    np.testing.assert_allclose(weights(window), trace.stage("weights", 3))


def test_d_k_slider_resizes_the_heads_in_direct_mode(qtbot, window):
    open_example(qtbot, window, "three-tokens")
    c = window.controls
    assert c.d_k.isEnabled()
    before = window.stages.view("scores").frame.image.copy()
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        c.d_k.setValue(3)
    assert window.session.inputs.Q.shape == (1, 3, 3)
    assert window.matrices.editor("Q", 0).model().columnCount() == 3
    assert window.stages.view("head_outputs").frame.image.shape == (3, 3)
    assert_views_match(window)
    assert not np.allclose(window.stages.view("scores").frame.image, before)


def test_temperature_slider_divides_the_scaled_scores(qtbot, window):
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        window.controls.temperature.setValue(2.0)
    assert window.session.config.temperature == 2.0
    trace = assert_views_match(window)
    scores = window.stages.view("scores").frame.image
    expected = scores * trace.scale / 2.0
    np.testing.assert_allclose(window.stages.view("scaled").frame.image, expected, rtol=1e-5)


def test_mask_combo_hides_the_right_keys(qtbot, window):
    masked, w = window.stages.view("masked"), window.stages.view("weights")
    n = len(window.session.tokens)
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        choose(window.controls.mask, "none")
    assert not masked.frame.masked_cells.any()
    assert (w.frame.image > 0).all()
    assert_views_match(window)
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        choose(window.controls.mask, "padding")
    masked_cells = np.zeros((n, n), bool)
    masked_cells[:, -1] = True  # the last key is padding
    np.testing.assert_array_equal(masked.frame.masked_cells, masked_cells)
    assert (w.frame.image[:, -1] == 0).all()
    assert window.controls.pad.isEnabled() and window.controls.pad.value() == 1
    assert_views_match(window)
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        choose(window.controls.mask, "causal")
    np.testing.assert_array_equal(masked.frame.masked_cells, ~np.tri(n, n, dtype=bool))
    assert_views_match(window)


def test_scale_combo_and_factor_change_the_scaled_scores(qtbot, window):
    scores = window.stages.view("scores").frame.image.copy()
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        choose(window.controls.scale, "none")
    np.testing.assert_allclose(window.stages.view("scaled").frame.image, scores)
    assert_views_match(window)
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        choose(window.controls.scale, "custom")
    assert window.controls.scale_factor.isEnabled()
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        window.controls.scale_factor.setValue(0.5)
    assert window.session.config.scale_factor == 0.5
    np.testing.assert_allclose(window.stages.view("scaled").frame.image, scores * 0.5, rtol=1e-6)
    assert_views_match(window)


@pytest.mark.parametrize("normalizer", ["sparsemax", "sigmoid"])
def test_normaliser_combo_changes_the_weights(qtbot, window, normalizer):
    softmax = weights(window)
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        choose(window.controls.normalizer, normalizer)
    assert window.session.config.normalizer == normalizer
    assert_views_match(window)
    assert not np.allclose(weights(window), softmax)
    sums = weights(window).sum(axis=1)
    if normalizer == "sparsemax":
        np.testing.assert_allclose(sums, 1.0, rtol=1e-5)
    else:
        assert not np.allclose(sums, 1.0)  # sigmoid weights are independent per key
    assert window.stages.view("weights").frame.heading.startswith(normalizer)


def test_positions_combo_adds_position_information(qtbot, window):
    before = window.stages.view("scores").frame.image.copy()
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        choose(window.controls.positional, "sinusoidal")
    assert window.session.config.positional == "sinusoidal"
    assert_views_match(window)
    assert not np.allclose(window.stages.view("scores").frame.image, before)


# -- the custom mask -------------------------------------------------------------------
def test_clicking_the_masked_view_toggles_a_custom_mask_cell(qtbot, window):
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        choose(window.controls.mask, "custom")
    before = weights(window)  # the custom mask starts as the causal one
    masked = window.stages.view("masked")
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        click_cell(qtbot, masked, 2, 1)
    allowed = np.array(window.session.config.custom_mask)  # [n, m]
    expected = np.tri(4, 4, dtype=bool)
    expected[2, 1] = False
    np.testing.assert_array_equal(allowed, expected)
    np.testing.assert_array_equal(masked.frame.masked_cells, ~allowed)
    w = weights(window)
    assert (w[~allowed] == 0).all() and (w[allowed] > 0).all()
    np.testing.assert_array_equal(w[[0, 1, 3]], before[[0, 1, 3]])  # other rows untouched
    assert_views_match(window)
    assert "no longer sees" in window.statusBar().currentMessage()
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        click_cell(qtbot, masked, 2, 1)  # and back
    np.testing.assert_array_equal(weights(window), before)
    assert "may now look at" in window.statusBar().currentMessage()
    window.menus.undo.trigger()
    assert window.session.config.custom_mask[2][1] is False


def test_clicking_the_masked_view_under_a_causal_mask_only_selects(qtbot, window):
    config = window.session.config
    click_cell(qtbot, window.stages.view("masked"), 2, 1)
    assert window.session.config == config
    assert window.session.selected_cell == (2, 1)
    assert not window.history.can_undo
