# ruff: noqa: F811 - the fixtures imported from model_folders are redefined as parameters
"""Issue 31.10: the induction example is not "Edited from layer 1 of tiny-induction" before
any edit. Its file stores the model's numbers to 7 significant digits (at most 5e-7 from the
checkpoint's float32 values), so the open layer is compared with the model at that precision;
a real edit, however small a learner types it, still counts."""

from __future__ import annotations

from main_window_checks import open_example
from model_folders import load, model_window  # noqa: F401 - fixtures pytest finds

from attention_explorer.session.examples import example_or_starter

TINY = "tiny-induction"
RUN_MS = 60000


def test_the_induction_example_is_not_edited_until_edited(qtbot, model_window):
    window = model_window
    state = window.context.model
    open_example(qtbot, window, "tiny-induction-copy")
    text = example_or_starter("tiny-induction-copy").experiment["model"]["text"]
    load(qtbot, window, TINY, text)  # the panel rebuilds the model's numbers of layer 1
    qtbot.waitUntil(lambda: state.origin is not None, timeout=RUN_MS)
    gap = abs(window.session.inputs.X - state.origin_data.inputs.X).max()
    assert 0 < gap <= 5e-7  # the file's rounding: not bit-equal, the same numbers
    assert not state.is_edited() and state.edits() == {}
    label = window.model_panel.origin_label
    assert label.text() == f"The numbers of layer 1 of {TINY}"
    X = window.session.inputs.X.copy()  # a learner's edit: one number, to 4 decimals
    X[3, 5] = round(X[3, 5] + 0.0001, 4)
    window.session.inputs = window.session.inputs.with_array("X", X)
    assert state.is_edited()
    assert label.text() == f"Edited from layer 1 of {TINY}"
