"""The routed-experts families in the real window (issue 30: each new family opens in the
window): a tiny Qwen3-MoE and a tiny OLMoE load (the overview is the model's attention), a
click opens a layer in projection mode whose live trace is that head's attention, and an edit
there is followed to the output, whose panel names the router's choice for the token."""

from __future__ import annotations

import numpy as np
import pytest

from attention_explorer.pretrained import model_attention
from tests.models.conftest import random_checkpoint
from tests.models.test_model_panel import TEXT, click_map, load, window  # noqa: F401

pytest.importorskip("transformers")

SHAPES = {
    "qwen3_moe": (
        "Qwen3MoeConfig",
        "Qwen3MoeForCausalLM",
        dict(moe_intermediate_size=16, head_dim=8, mlp_only_layers=[0], num_experts=6),
    ),
    "olmoe": ("OlmoeConfig", "OlmoeForCausalLM", dict(num_experts=6)),
}


@pytest.fixture(scope="module", params=sorted(SHAPES))
def routed(request, tmp_path_factory):
    """(family, folder): a 2-layer, 4-head checkpoint routing each token to 2 of 6 experts."""
    config, model, extra = SHAPES[request.param]
    folder = random_checkpoint(
        tmp_path_factory.mktemp(request.param),
        config,
        model,
        hidden_size=32,
        intermediate_size=16,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        num_experts_per_tok=2,
        max_position_embeddings=64,
        tie_word_embeddings=False,
        **extra,
    )
    return request.param, folder


def test_a_routed_model_opens_and_an_edit_reaches_the_router_line(qtbot, window, routed):  # noqa: F811
    family, folder = routed
    panel = load(qtbot, window, folder)
    weights, _ = model_attention(folder, TEXT)
    np.testing.assert_allclose(panel.overview.weights, weights, atol=1e-6)
    click_map(qtbot, panel, layer=1, head=1)
    session = window.session
    assert session.config.mode == "projection" and session.selected_head == 1

    def shown():
        trace = window.live.trace
        return trace is not None and 1 in trace.heads

    qtbot.waitUntil(shown, timeout=30000)
    np.testing.assert_allclose(window.live.trace.stage("weights", 1), weights[1, 1], atol=1e-5)
    output = window.model_output
    W_O = np.array(session.inputs.W_O, dtype=np.float64)  # [heads * d_v, d]
    W_O *= 3.0
    with qtbot.waitSignal(window.live.updated, timeout=30000):
        with window.history.transaction("Edit W_O"):
            window.session.inputs = session.inputs.with_array("W_O", W_O)
    qtbot.waitUntil(lambda: output.router_text.text().startswith("Router of layer"), timeout=30000)
    assert "top 2 of 6" in output.router_text.text(), family
