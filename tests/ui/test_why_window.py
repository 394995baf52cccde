# ruff: noqa: F811 - the fixtures imported from model_folders are redefined as parameters
"""Model > Why? in the real window on the shipped tiny-induction model: the menu action opens
the dialog on the Model panel's model and text, the prompts count their tokens as typed and
offer the top predictions, and each view shows what the causal tools compute (the same
numbers, run here directly), with the induction head restoring the answer; a click opens that
layer in the explorer; unequal prompts and a model without an output head are refused in
one line."""

from __future__ import annotations

import numpy as np
import pytest
from model_folders import gpt2_folder, load, minilm_folder, model_window  # noqa: F401
from PySide6.QtCore import QEvent, QObject, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication

from attention_explorer import causal
from attention_explorer.pretrained import model_run, run_sweep

TINY = "tiny-induction"
CLEAN = "cat dog fox owl bee cat dog fox owl"
CORRUPTED = "pig hen ant bat elk cat dog fox owl"
RUN_MS = 60000


def _launcher(window):
    return window.findChild(QObject, "why_launcher")


def _why(qtbot, window, text=CLEAN, corrupted=CORRUPTED):
    load(qtbot, window, TINY, text)
    dialog = _launcher(window).show()
    qtbot.addWidget(dialog)
    qtbot.waitExposed(dialog)
    with qtbot.waitSignal(dialog.inputs.predictions_ready, timeout=RUN_MS):
        dialog.inputs.corrupted_edit.setText(corrupted)
    return dialog


def _hover(cell_map, row, col):
    """A mouse move over cell (row, col) of ``cell_map``, delivered to it."""
    at = QPointF(cell_map.cell_rect(row, col).center())
    event = QMouseEvent(
        QEvent.Type.MouseMove,
        at,
        cell_map.mapToGlobal(at),
        Qt.MouseButton.NoButton,
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(cell_map, event)


def _run(qtbot, view):
    view.result = None
    controls, ended = view.controls, []
    controls.finished.connect(ended.append)
    controls.failed.connect(ended.append)
    qtbot.mouseClick(controls.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(ended), timeout=RUN_MS)
    assert view.result is not None, controls.note.text()
    return view.result


@pytest.fixture
def why(qtbot, model_window):
    return model_window, _why(qtbot, model_window)


def test_the_model_menu_opens_why_on_the_panels_model(qtbot, model_window):
    action = _launcher(model_window).action
    assert action.shortcut().toString() == "Ctrl+Shift+Y"
    model_menu = next(a.menu() for a in model_window.menuBar().actions() if a.text() == "&Model")
    assert action in model_menu.actions()
    assert _launcher(model_window).show() is None  # no model yet: the Model dock says so
    dialog = _why(qtbot, model_window)
    assert dialog.inputs.clean == CLEAN
    assert dialog.model_note.text().startswith("tiny-induction: 2 layers × 1 heads")
    assert (dialog.inputs.clean_count.text(), dialog.inputs.corrupted_count.text()) == (
        "9 tokens",
        "9 tokens",
    )
    vocab = model_window.context.model.loaded.tokenizer
    assert dialog.inputs.answer == vocab.token_to_id("bee")  # the clean prompt's top prediction
    assert dialog.inputs.wrong == vocab.token_to_id("owl")  # the corrupted prompt's
    assert dialog.inputs.answer_box.currentText() == "bee   0.995"
    dialog.inputs.answer_box.setEditText("cat")  # a token typed, not offered
    assert dialog.inputs.answer == "cat"
    action.trigger()
    assert _launcher(model_window).dialog is dialog  # raised again, not rebuilt
    _run(qtbot, dialog.lens)
    assert dialog.lens.map.values.size
    load(qtbot, model_window, TINY, "owl duck frog cat bee owl duck")  # another Load
    assert dialog.lens.result is None and dialog.lens.map.values.size == 0
    assert dialog.inputs.clean == "owl duck frog cat bee owl duck"


def test_patching_shows_the_tools_map_and_a_click_opens_that_layer(qtbot, why):
    window, dialog = why
    view = dialog.patch
    result = _run(qtbot, view)
    loaded = window.context.model.loaded
    expected = causal.patch(loaded, CLEAN, CORRUPTED, site="resid_pre", answer="bee", wrong="owl")
    np.testing.assert_allclose(view.map.values, np.asarray(expected), atol=1e-6)
    assert result.axes == ("layer", "position") and view.map.values.shape == (2, 9)
    assert view.map.values[1, 4] > 0.99  # the answer's copy enters layer 1 at "bee"
    assert view.map.col_labels[4] == "4 bee"
    _hover(view.map, 1, 4)  # sent to the map: offscreen, the window on top takes the cursor
    assert view.map.last_hover.startswith("layer 1, position 4")
    assert "(bee / corrupted elk)" in view.map.last_hover
    panel = window.model_panel
    with qtbot.waitSignal(panel.loader.layer_ready, timeout=RUN_MS):
        qtbot.mouseClick(view.map, Qt.MouseButton.LeftButton, pos=view.map.cell_rect(1, 4).center())
    qtbot.waitUntil(lambda: window.context.model.origin is not None, timeout=10000)
    assert window.context.model.origin.layer == 1
    assert dialog.status.text() == "Opening layer 1, head 0 in the explorer…"

    view.site_box.setCurrentIndex(view.site_box.findData("head_out"))
    _run(qtbot, view)
    heads = causal.patch(loaded, CLEAN, CORRUPTED, site="head_out", answer="bee", wrong="owl")
    np.testing.assert_allclose(view.map.values, np.asarray(heads), atol=1e-6)
    assert view.map.col_labels == ["head 0"]


def test_unequal_prompts_are_refused_as_typed(qtbot, why):
    _window, dialog = why
    dialog.inputs.corrupted_edit.setText("pig hen ant bat cat dog fox owl")
    assert dialog.inputs.corrupted_count.text() == "8 tokens"
    assert dialog.inputs.corrupted_count.styleSheet() != ""
    assert dialog.patch.start() is False
    assert dialog.patch.controls.note.text() == (
        "The clean prompt has 9 tokens and the corrupted prompt 8; patching needs as many in both"
    )


def test_the_lens_attribution_and_cause_views_show_the_tools_numbers(qtbot, why):
    window, dialog = why
    loaded = window.context.model.loaded
    lens = _run(qtbot, dialog.lens)
    assert dialog.lens.map.values.shape == (3, 9)
    final = [t for t, _id, _p in model_run(loaded, CLEAN).top_tokens(None, 1)]
    assert dialog.lens.map.texts[-1][-1].split("\n")[0] == final[0] == "bee"
    np.testing.assert_allclose(dialog.lens.map.values, lens.top_prob)

    attribution, sweep = _run(qtbot, dialog.attribution)
    direct = causal.head_attribution(loaded, CLEAN, target="bee", distractor="owl")
    np.testing.assert_allclose(dialog.attribution.attribution_map.values, direct.values, atol=1e-6)
    knocked = run_sweep(loaded, CLEAN, "logprob", target="bee", position=-1)
    np.testing.assert_allclose(dialog.attribution.sweep_map.values, knocked.changes, atol=1e-6)
    assert direct.values[1, 0] > direct.values[0, 0]  # the induction head writes the answer

    cause = _run(qtbot, dialog.cause)
    assert cause.sources == (4,)  # "bee" earlier in the prompt
    attention = model_run(loaded, CLEAN).attentions[:, :, -1, 4]  # [layers, heads]
    np.testing.assert_allclose(cause.looks, attention, atol=1e-6)
    assert cause.looks[1, 0] > 0.9 and cause.effect[1, 0] > 0.99  # looks and matters
    assert "L0H0" in dialog.cause.flag_note.text().split("\n\n")[2]  # matters, looks elsewhere
    assert len(dialog.cause.scatter.points()) == 2


def test_a_model_without_an_output_head_is_refused_in_one_line(qtbot, model_window, minilm_folder):
    load(qtbot, model_window, minilm_folder, "the cat sat on the mat")
    dialog = _launcher(model_window).show()
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.inputs.note.text() != "", timeout=RUN_MS)
    assert "has no output head" in dialog.inputs.note.text()
    assert "\n" not in dialog.inputs.note.text()
    qtbot.mouseClick(dialog.lens.controls.start_button, Qt.MouseButton.LeftButton)
    note = dialog.lens.controls.note
    qtbot.waitUntil(lambda: "has no output head" in note.text(), timeout=RUN_MS)
    assert "\n" not in note.text() and dialog.lens.result is None


def test_a_head_map_cell_opens_that_layer_and_head(qtbot, model_window, gpt2_folder):
    load(qtbot, model_window, gpt2_folder, "the cat sat on the mat")
    dialog = _launcher(model_window).show()
    qtbot.addWidget(dialog)
    with qtbot.waitSignal(dialog.inputs.predictions_ready, timeout=RUN_MS):
        dialog.inputs.corrupted_edit.setText("the mat sat on the cat")
    view = dialog.patch
    view.site_box.setCurrentIndex(view.site_box.findData("pattern"))
    result = _run(qtbot, view)
    assert view.map.values.shape == (3, 4) and result.site == "pattern"
    assert view.map.col_labels == ["head 0", "head 1", "head 2", "head 3"]
    panel = model_window.model_panel
    with qtbot.waitSignal(panel.loader.layer_ready, timeout=RUN_MS):
        qtbot.mouseClick(view.map, Qt.MouseButton.LeftButton, pos=view.map.cell_rect(2, 3).center())
    qtbot.waitUntil(lambda: model_window.context.model.origin is not None, timeout=10000)
    assert model_window.context.model.origin.layer == 2
    assert model_window.session.selected_head == 3


@pytest.fixture(scope="module")
def llama_folder(tmp_path_factory):
    """A random 2-layer Llama (4 heads sharing 2 key/value heads, RMSNorm, RoPE)."""
    pytest.importorskip("transformers")
    from tests.models.test_llama_family import make_checkpoint

    folder = tmp_path_factory.mktemp("llama-why")
    make_checkpoint(folder, "llama")
    return folder


def test_a_llama_family_model_answers_every_view(qtbot, model_window, llama_folder):
    clean, corrupted = (
        "The cat sat on the mat because it was",
        "The token sat on the mat because it was",
    )
    load(qtbot, model_window, llama_folder, clean)
    dialog = _launcher(model_window).show()
    qtbot.addWidget(dialog)
    with qtbot.waitSignal(dialog.inputs.predictions_ready, timeout=RUN_MS):
        dialog.inputs.corrupted_edit.setText(corrupted)
    loaded = model_window.context.model.loaded
    inputs = dialog.inputs
    assert inputs.clean_count.text() == inputs.corrupted_count.text()
    cause = _run(qtbot, dialog.cause)
    heads = causal.patch(
        loaded, clean, corrupted, site="head_out", answer=inputs.answer, wrong=inputs.wrong
    )
    np.testing.assert_allclose(cause.effect, np.asarray(heads), atol=1e-6)
    assert len(dialog.cause.scatter.points()) == loaded.weights.n_layers * loaded.weights.heads
    lens = _run(qtbot, dialog.lens)
    assert dialog.lens.map.values.shape == (loaded.weights.n_layers + 1, len(lens.tokens))
    attribution, _sweep = _run(qtbot, dialog.attribution)
    assert abs(attribution.parts_sum - attribution.total) < 1e-3
