"""The whole window: edits, controls, the mask, refusals, undo, files, exports, walkthrough.

Every test drives the real MainWindow (with a throwaway QSettings) and compares what the
views show with the engine's own ``compute()`` on the session's data, never with numbers
written into the test.
"""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from cell_typing import type_into_cell  # noqa: E402
from PySide6.QtCore import QPointF, Qt  # noqa: E402
from PySide6.QtGui import QImage  # noqa: E402
from PySide6.QtWidgets import QMessageBox  # noqa: E402
from window_fixtures import RECOMPUTE_MS  # noqa: E402

from attention_explorer.engine import compute  # noqa: E402
from attention_explorer.exporting.numbers import read_csv_matrix  # noqa: E402
from attention_explorer.ui import dialogs as message_boxes
from attention_explorer.ui.export_all_dialog import ExportAllDialog  # noqa: E402
from attention_explorer.ui.export_dialog import ExportDialog  # noqa: E402


# -- helpers -------------------------------------------------------------------------------
def reference(window):
    """The engine's trace of the window's session, computed here, independently of the views."""
    s = window.session
    d = s.data()
    return compute(
        d.inputs,
        d.config,
        backend=s.backend,
        dtype=s.dtype,
        tokens=d.tokens,
        kv_tokens=d.kv_tokens or None,
    )


def shown_stages(window, trace):
    """The stage views that show something of ``trace`` (concat/output only with several heads)."""
    return {
        stage: view
        for stage, view in window.stages.views().items()
        if trace.has(stage) and view.isVisibleTo(window.stages)
    }


def assert_views_match(window, rtol=1e-6):
    """Every visible stage view shows the engine's numbers for the selected head."""
    trace = reference(window)
    head = window.session.selected_head
    views = shown_stages(window, trace)
    assert {"scores", "scaled", "masked", "weights", "head_outputs"} <= set(views)
    for stage, view in views.items():
        values = trace.stage(stage, head)  # [rows, cols], may hold -inf
        image = view.frame.image
        assert np.isfinite(image).all(), stage
        np.testing.assert_allclose(
            image, np.where(np.isfinite(values), values, 0.0), rtol=rtol, atol=1e-7, err_msg=stage
        )
        np.testing.assert_array_equal(view.frame.hidden, ~np.isfinite(values), err_msg=stage)
    return trace


def weights(window) -> np.ndarray:
    return window.stages.view("weights").frame.image.copy()


def all_arrays(window) -> dict[str, np.ndarray]:
    return {name: array.copy() for name, array in window.session.inputs.arrays().items()}


def assert_same_arrays(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for name in a:
        assert np.array_equal(a[name], b[name]), name


def show_editor(window, name: str, head: int | None = None):
    """Bring the editor of ``name`` (head ``head``) to the front, as a click on its tab would."""
    panel = window.matrices
    panel.tabs.setCurrentIndex(panel.tab_names().index(name))
    if head is not None and window.session.selected_head != head:
        window.session.selected_head = head  # the Q/K/V head tabs follow the selected head
    editor = panel.editor(name, head)
    assert editor.isVisible()
    return editor


def click_cell(qtbot, view, row: int, col: int) -> None:
    """A left click in the middle of cell (row, col) of a stage view."""
    scene = view.plot.getViewBox().mapViewToScene(QPointF(col + 0.5, row + 0.5))
    point = view.graphics.mapFromScene(scene)
    qtbot.mouseClick(view.graphics.viewport(), Qt.MouseButton.LeftButton, pos=point)


def choose(combo, key) -> None:
    """Pick the combo box item whose data is ``key``, as the user would from the list."""
    index = combo.findData(key)
    assert index >= 0, f"{key!r} is not offered"
    combo.setCurrentIndex(index)


def open_example(qtbot, window, key: str) -> None:
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        assert window.open_example(key)


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
    assert not masked.frame.hidden.any()
    assert (w.frame.image > 0).all()
    assert_views_match(window)
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        choose(window.controls.mask, "padding")
    hidden = np.zeros((n, n), bool)
    hidden[:, -1] = True  # the last key is padding
    np.testing.assert_array_equal(masked.frame.hidden, hidden)
    assert (w.frame.image[:, -1] == 0).all()
    assert window.controls.pad.isEnabled() and window.controls.pad.value() == 1
    assert_views_match(window)
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        choose(window.controls.mask, "causal")
    np.testing.assert_array_equal(masked.frame.hidden, ~np.tri(n, n, dtype=bool))
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
    np.testing.assert_array_equal(masked.frame.hidden, ~allowed)
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
    assert window.stages.view("masked").frame.hidden[0].all()
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


# -- undo and redo ---------------------------------------------------------------------
def test_undo_and_redo_restore_the_exact_matrices(qtbot, window):
    states = [window.session.data()]
    editor = show_editor(window, "X")
    type_into_cell(qtbot, editor, 0, 0, "0.123456789")
    states.append(window.session.data())
    window.controls.tokens.setValue(5)
    states.append(window.session.data())
    choose(window.controls.heads, 4)
    states.append(window.session.data())
    qtbot.mouseClick(show_editor(window, "W_Q").random_button, Qt.MouseButton.LeftButton)
    states.append(window.session.data())
    assert all(a != b for a, b in zip(states, states[1:]))  # each step changed something

    def step(action, state):
        assert action.isEnabled()
        with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
            action.trigger()
        assert window.session.data() == state
        assert_same_arrays(window.session.inputs.arrays(), state.inputs.arrays())
        assert window.live.trace.config == state.config
        assert_views_match(window)

    for state in reversed(states[:-1]):
        step(window.menus.undo, state)
    assert not window.menus.undo.isEnabled()
    assert "*" not in window.windowTitle()
    for state in states[1:]:
        step(window.menus.redo, state)
    assert not window.menus.redo.isEnabled()
    assert window.controls.heads.currentData() == 4 and window.controls.tokens.value() == 5


def test_a_slider_drag_is_one_undo_step_and_each_list_pick_is_its_own(qtbot, window):
    start = window.session.data()
    for n in (5, 6, 7):  # one drag of the tokens slider
        window.controls.tokens.setValue(n)
    dragged = window.session.data()
    choose(window.controls.heads, 4)
    four = window.session.data()
    choose(window.controls.heads, 8)
    window.menus.undo.trigger()
    assert window.session.data() == four
    window.menus.undo.trigger()
    assert window.session.data() == dragged
    window.menus.undo.trigger()
    assert window.session.data() == start
    assert not window.history.can_undo
    qtbot.waitUntil(lambda: window.controls.tokens.value() == 4)
    assert window.controls.heads.currentData() == 2


CTRL, SHIFT = Qt.KeyboardModifier.ControlModifier, Qt.KeyboardModifier.ShiftModifier


@pytest.mark.parametrize("redo_keys", [(Qt.Key.Key_Y, CTRL), (Qt.Key.Key_Z, CTRL | SHIFT)])
def test_undo_and_redo_keys_in_a_matrix_editor(qtbot, window, redo_keys):
    before = window.session.inputs.X.copy()
    editor = show_editor(window, "X")
    type_into_cell(qtbot, editor, 2, 2, "7")
    edited = window.session.inputs.X.copy()
    assert not np.array_equal(edited, before)
    window.activateWindow()
    qtbot.keyClick(editor.table, Qt.Key.Key_Z, CTRL)
    assert np.array_equal(window.session.inputs.X, before)
    qtbot.keyClick(editor.table, *redo_keys)
    assert np.array_equal(window.session.inputs.X, edited)


# -- files -----------------------------------------------------------------------------
def test_save_then_open_gives_identical_session_data(qtbot, window, tmp_path):
    editor = show_editor(window, "X")
    type_into_cell(qtbot, editor, 3, 5, "0.1234567890123457")
    choose(window.controls.mask, "custom")
    window.toggle_mask_cell(3, 0)
    window.controls.temperature.setValue(1.37)
    saved = window.session.data()
    path = tmp_path / "session.json"
    assert window.document._write(path)
    assert "*" not in window.windowTitle() and window.windowTitle().startswith("session.json")
    open_example(qtbot, window, "three-tokens")
    assert window.session.data() != saved
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        assert window.document.open(path)
    loaded = window.session.data()
    assert loaded == saved
    assert_same_arrays(loaded.inputs.arrays(), saved.inputs.arrays())
    assert loaded.config == saved.config and loaded.tokens == saved.tokens
    assert window.document.path == path
    assert str(path) in window.document.recent_files()
    assert_views_match(window)


def test_opening_a_broken_file_shows_a_message_and_keeps_the_session(window, tmp_path, dialogs):
    path = tmp_path / "broken.json"
    path.write_text('{"format": "attention-explorer-session", "version": 1, "tokens": [')
    before = window.session.data()
    assert not window.document.open(path)
    assert window.session.data() == before
    assert dialogs and dialogs[-1][0] == "warning" and "broken.json" in dialogs[-1][1]
    assert "broken.json" in window.statusBar().currentMessage()
    assert window.document.path is None


def test_closing_with_unsaved_changes_asks_and_cancel_keeps_everything(qtbot, window, monkeypatch):
    asked = []

    def answer_with(button):
        def question(parent, title, text, *args, **kwargs):
            asked.append(text)
            return button

        monkeypatch.setattr(message_boxes, "question", question)

    window.close()  # nothing edited yet: closes without a question
    assert asked == [] and not window.isVisible()
    window.show()
    type_into_cell(qtbot, show_editor(window, "X"), 0, 0, "2.5")
    edited = window.session.data()
    assert "*" in window.windowTitle()
    answer_with(QMessageBox.StandardButton.Cancel)
    assert not window.close()
    assert len(asked) == 1 and window.isVisible() and window.session.data() == edited
    answer_with(QMessageBox.StandardButton.Discard)
    assert window.close()
    assert len(asked) == 2 and not window.isVisible()


# -- backends --------------------------------------------------------------------------
def test_torch_backend_gives_the_numpy_weights(qtbot, window):
    pytest.importorskip("torch")
    numpy_trace = reference(window)
    combo = window.controls.backend
    offered = [combo.itemData(k) for k in range(combo.count())]
    index = next(k for k, b in enumerate(offered) if b is not None and b.name == "torch")
    with qtbot.waitSignal(window.live.updated, timeout=30000):
        combo.setCurrentIndex(index)
    assert window.session.backend.name == "torch"
    assert window.live.trace.backend.name == "torch"
    for head in range(window.session.config.heads):
        window.session.selected_head = head
        np.testing.assert_allclose(weights(window), numpy_trace.stage("weights", head), atol=1e-6)
        for stage in ("scores", "head_outputs", "output"):
            shown = window.stages.view(stage).frame.image
            np.testing.assert_allclose(shown, numpy_trace.stage(stage, head), rtol=1e-5, atol=1e-6)
    assert_views_match(window)


# -- exports ---------------------------------------------------------------------------
def test_export_dialog_writes_a_png(window, tmp_path):
    dialog = window.export_dialog("weights", 1)
    assert isinstance(dialog, ExportDialog)
    assert (dialog.stage(), dialog.head(), dialog.fmt()) == ("weights", 1, "png")
    assert dialog.path_edit.text().endswith("weights_head1.png")
    path = tmp_path / "picture.png"
    dialog.path_edit.setText(str(path))
    assert dialog.export()
    assert dialog.written == path
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = QImage(str(path))
    assert not image.isNull() and image.width() > 100 and image.height() > 100


@pytest.mark.parametrize("where", ["missing", "a_file"])
def test_export_dialog_refuses_a_folder_it_cannot_write(window, tmp_path, where):
    exports = tmp_path / "exports"
    exports.mkdir()
    (exports / "a_file").write_text("not a folder")
    target = exports / where / "picture.png"
    dialog = window.export_dialog("scores", 0)
    dialog.path_edit.setText(str(target))
    assert not dialog.export()
    assert dialog.message.text().startswith("Not exported:")
    assert dialog.written is None
    assert [p.name for p in exports.iterdir()] == ["a_file"]  # nothing written, nothing made


def test_export_all_writes_every_stage_with_predictable_names(window, tmp_path):
    dialog = window.export_all_dialog()
    assert isinstance(dialog, ExportAllDialog)
    for fmt, box in dialog.format_boxes.items():
        box.setChecked(fmt in ("png", "csv"))
    folder = tmp_path / "out"
    folder.mkdir()
    dialog.folder_edit.setText(str(folder))
    assert dialog.export(), dialog.message.text()
    names = {p.name for p in folder.iterdir()}
    assert names == {p.name for p in dialog.written}
    for name in (
        "weights_head0.png",
        "weights_head1.png",
        "weights_grid.png",
        "scores_head0.csv",
        "masked_head1.png",
        "concat.csv",
        "output.png",
        "mask.png",
        "X.csv",
    ):
        assert name in names
    trace = reference(window)
    rows, cols, values = read_csv_matrix(folder / "weights_head1.csv")
    assert rows == list(window.session.tokens) and cols == list(window.session.tokens)
    np.testing.assert_allclose(values, trace.stage("weights", 1), rtol=1e-6)
    assert QImage(str(folder / "weights_head0.png")).width() > 100


def test_export_all_refuses_a_missing_folder_and_writes_nothing(window, tmp_path):
    dialog = window.export_all_dialog()
    dialog.folder_edit.setText(str(tmp_path / "nowhere"))
    assert not dialog.export()
    assert "does not exist" in dialog.message.text()
    assert dialog.written == []
    assert not (tmp_path / "nowhere").exists()


# -- examples and the walkthrough ------------------------------------------------------
def test_opening_an_example_restarts_the_walkthrough_and_steps_highlight_views(qtbot, window):
    walk = window.walkthrough
    walk.go_next()
    walk.go_next()
    assert walk.index() == 2
    open_example(qtbot, window, "three-tokens")
    assert window.session.tokens == ("t1", "t2", "t3")
    assert walk.index() == 0
    assert "*" not in window.windowTitle()
    trace = reference(window)
    assert walk.current() is not None and walk.steps()[0] is walk.current()
    stepped = 0
    while walk.next_button.isEnabled():
        with qtbot.waitSignal(walk.step_changed, timeout=RECOMPUTE_MS):
            walk.go_next()
        step = walk.current()
        highlighted = {s for s, v in window.stages.views().items() if v.is_highlighted()}
        if step.stage in window.stages.views():
            assert highlighted == {step.stage}, step.key
            assert window.session.selected_head == step.head
            # every step selects the followed (query, key), so the views agree on one cell
            assert window.session.selected_cell == step.selection
            stepped += 1
        else:
            assert highlighted == set(), step.key
    assert stepped >= 4  # scores, scaled, masked, weights at least
    assert trace.stage("weights", 0).shape == (3, 3)


def test_walkthrough_menu_actions_step_and_highlight(qtbot, window):
    walk = window.walkthrough
    walk.restart()
    seen = []
    while window.menus.next_step.isEnabled() and walk.next_button.isEnabled():
        window.menus.next_step.trigger()
        step = walk.current()
        if step.stage in window.stages.views():
            assert window.stages.view(step.stage).is_highlighted()
            seen.append(step.stage)
    assert {"scores", "weights", "head_outputs"} <= set(seen)
    window.menus.back_step.trigger()
    assert walk.index() == len(walk.steps()) - 2
