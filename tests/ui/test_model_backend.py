# ruff: noqa: F811 - the fixtures imported from model_folders are redefined as parameters
"""The window's model run follows the Backend box: with torch chosen, the whole model runs on
torch (its own forward pass), an edit still recomputes from its layer, and the numbers are
numpy's to float32 rounding."""

from __future__ import annotations

import numpy as np
import pytest
from model_folders import (  # noqa: F401 - fixtures pytest finds here
    TEXT,
    gpt2_folder,
    load,
    model_window,
    open_head,
)
from test_model_live import RUN_MS, edit_w_q, ran

from attention_explorer.pretrained import model_run
from attention_explorer.ui.model.model_runner import backend_name

pytest.importorskip("torch")


def _choose(window, label: str) -> None:
    box = window.controls.backend
    index = next(i for i in range(box.count()) if box.itemText(i) == label)
    box.setCurrentIndex(index)


def test_the_model_runs_on_the_backend_chosen(qtbot, model_window, gpt2_folder):
    window = model_window
    load(qtbot, window, gpt2_folder)
    open_head(qtbot, window, 1, 0)
    live = ran(qtbot, window)
    assert live.original.backend == "numpy"
    _choose(window, "torch cpu")
    qtbot.waitUntil(lambda: live.original.backend == "torch:cpu", timeout=RUN_MS)
    numpy_run = model_run(gpt2_folder, TEXT)
    np.testing.assert_allclose(live.original.logits, numpy_run.logits, atol=1e-4)
    edit_w_q(window)
    qtbot.waitUntil(lambda: live.edited is not live.original, timeout=RUN_MS)
    live = ran(qtbot, window)
    assert live.edited.backend == "torch:cpu" and live.edited.recomputed_from == 1
    assert "to the output on torch cpu in" in window.model_panel.message.text()
    want = model_run(gpt2_folder, TEXT, edits={1: window.session.data()})
    np.testing.assert_allclose(live.edited.logits, want.logits, atol=1e-4)
    _choose(window, "numpy")
    qtbot.waitUntil(lambda: live.edited.backend == "numpy", timeout=RUN_MS)


def test_backend_names():
    from attention_explorer.engine import Backend

    assert backend_name(Backend()) == "numpy"
    assert backend_name(Backend("torch", "cuda:1")) == "torch:cuda:1"
    assert backend_name("torch") == "torch"


def test_the_sweep_runs_on_the_backend_chosen(qtbot, model_window, gpt2_folder):
    from attention_explorer.pretrained import knockout_sweep

    window = model_window
    load(qtbot, window, gpt2_folder)
    open_head(qtbot, window, 1, 0)
    _choose(window, "torch cpu")
    window.sweep.action.trigger()
    dialog = window.sweep.dialog
    assert dialog.options()["backend"] == "torch:cpu"
    with qtbot.waitSignal(dialog.worker.finished, timeout=RUN_MS):
        dialog.start(confirmed=True)
    want = knockout_sweep(gpt2_folder, TEXT)  # numpy, float32
    np.testing.assert_allclose(dialog.result.changes, want, atol=1e-3)
    dialog.close()
