# ruff: noqa: F811 - the fixtures imported from model_folders are redefined as parameters
"""The whole model follows an edit of a model layer (issue 18.2): every edit recomputes the
rest of that layer, every later layer and the output off the UI thread; the overview shows
Edited, Original or Difference with unchanged layers marked; the Output panel shows the
prediction before and after; knockouts are one undo step each and drawn crossed."""

from __future__ import annotations

import numpy as np
import pytest
from model_folders import (  # noqa: F401 - fixtures pytest finds here
    TEXT,
    bert_folder,
    gpt2_folder,
    load,
    minilm_folder,
    model_window,
    open_head,
)

import attention_explorer.models as models

model_run = getattr(models, "model_run", None)
pytestmark = pytest.mark.skipif(model_run is None, reason="the model run is not merged yet")
RUN_MS = 60000


def ran(qtbot, window):
    """Wait until the model run of the latest request is shown."""
    live = window.model_live
    qtbot.waitUntil(
        lambda: live.edited is not None and live.runner.request_id == live.shown_request,
        timeout=RUN_MS,
    )
    return live


def edit_w_q(window, factor=3.0, cell=None):
    inputs = window.session.inputs
    w_q = inputs.W_Q.copy()  # [d_model, heads*d_k]
    if cell is None:
        w_q *= factor
    else:
        w_q[cell] = factor
    with window.history.transaction("Edit W_Q"):
        window.session.inputs = inputs.with_array("W_Q", w_q)


def test_an_edit_runs_the_rest_of_the_model(qtbot, model_window, gpt2_folder):
    window = model_window
    load(qtbot, window, gpt2_folder)
    open_head(qtbot, window, 1, 0)
    live = ran(qtbot, window)
    assert live.edited is live.original  # nothing edited yet: the model's own run
    assert window.output_dock.isVisible()
    edit_w_q(window)
    qtbot.waitUntil(lambda: live.edited is not live.original, timeout=RUN_MS)
    want = model_run(gpt2_folder, TEXT, edits={1: window.session.data()})
    np.testing.assert_allclose(live.edited.attentions, want.attentions, atol=1e-5)
    np.testing.assert_allclose(live.edited.logits, want.logits, atol=1e-4)
    assert live.edited.recomputed_from == 1  # layer 0 was reused
    overview = window.model_panel.overview
    np.testing.assert_allclose(overview.weights, want.attentions, atol=1e-5)
    assert overview.unchanged_labels() == 1  # layer 0 before the edited one
    window.model_panel.show_box.setCurrentText("Difference")
    diff = want.attentions - live.original.attentions
    np.testing.assert_allclose(overview.weights, diff, atol=1e-5)
    assert overview.levels[1] == -overview.levels[0] > 0
    assert np.allclose(overview.weights[0], 0.0)
    window.model_panel.show_box.setCurrentText("Original")
    np.testing.assert_allclose(overview.weights, live.original.attentions, atol=1e-6)
