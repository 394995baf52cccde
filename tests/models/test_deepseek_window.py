"""A DeepSeek-V3 model in the real window: it loads (its layers x heads overview is the model's
attention), a click on a latent-attention head opens that layer as a direct-mode session
whose live trace is the model's attention for that head, and a value of V changed there
marks the layer as edited from the model."""

from __future__ import annotations

import numpy as np
import pytest

from attention_explorer.pretrained import from_model, model_attention
from tests.models.test_model_panel import TEXT, click_map, load, window  # noqa: F401

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def deepseek_small(tmp_path_factory):
    """The tiny DeepSeek-V3 of test_deepseek_v3 (layer 1 routes to experts)."""
    from tests.models.test_deepseek_v3 import make_deepseek

    return make_deepseek(tmp_path_factory.mktemp("deepseek-window"), first_k_dense_replace=1)


def test_a_deepseek_layer_opens_in_the_window(qtbot, window, deepseek_small):  # noqa: F811
    panel = load(qtbot, window, deepseek_small)
    weights, tokens = model_attention(deepseek_small, TEXT)
    np.testing.assert_allclose(panel.overview.weights, weights, atol=1e-6)
    assert "2 layers x 4 heads" in panel.message.text()
    click_map(qtbot, panel, layer=1, head=2)
    session = window.session
    assert session.config.mode == "direct" and session.selected_head == 2
    assert (session.config.d_k, session.config.d_v) == (16, 12)  # nope + rope, v_head_dim
    want = from_model(deepseek_small, TEXT, layer=1)
    np.testing.assert_array_equal(session.inputs.K, want.inputs.K)

    def shown():
        trace = window.live.trace
        return trace is not None and trace.config.mode == "direct" and 2 in trace.heads

    qtbot.waitUntil(shown, timeout=30000)
    trace = window.live.trace
    np.testing.assert_allclose(trace.stage("weights", 2), weights[1, 2], atol=1e-6)
    V = np.array(session.inputs.V, dtype=np.float64)  # [heads, n, v_dim]
    V[2, 0, 0] += 3.0
    with qtbot.waitSignal(window.live.updated, timeout=30000):
        with window.history.transaction("Edit V"):
            window.session.inputs = session.inputs.with_array("V", V)
    assert panel.origin_label.text() == f"Edited from layer 1 of {deepseek_small.name}"
