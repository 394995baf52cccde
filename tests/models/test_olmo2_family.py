"""OLMo 2 (``Olmo2ForCausalLM``) against transformers' exact float64 reference: norms only on
the sublayers' outputs, QK-norm over the whole projection before the heads are split; the
model run and model_attention on numpy and torch, a knockout and an edit, layers opened by
from_model (in projection mode with the engine's QK-norm, a yarn RoPE too), and what OLMo 2
support refuses by name."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from attention_explorer.engine import compute
from attention_explorer.pretrained import ModelError, from_model, model_run
from tests.models.exact_reference import run_reference
from tests.models.test_gemma_common import (
    BACKENDS,
    TEXT,
    check_knockout,
    check_parity,
    check_session_and_edit,
    rewrite_config,
    rewrite_tensors,
    worst,
    write_model,
)


@pytest.fixture(scope="module")
def olmo2(tmp_path_factory):
    """A random 2-layer OLMo 2 (4 heads, 2 key/value heads, head_dim 12)."""
    folder = tmp_path_factory.mktemp("olmo2")
    return write_model(folder, "Olmo2Config", "Olmo2ForCausalLM", eos_token_id=0)


@pytest.fixture
def olmo2_copy(olmo2, tmp_path):
    folder = tmp_path / "olmo2"
    shutil.copytree(olmo2, folder)
    return folder


@pytest.mark.parametrize("backend", BACKENDS)
def test_olmo2_matches_the_exact_reference(olmo2, backend):
    print(f"olmo2 parity on {backend}: {check_parity(olmo2, backend):.1e}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_knockout_and_edit_match_transformers(olmo2, tmp_path, backend):
    check_knockout(olmo2, tmp_path, layer=0, head=3, backend=backend)
    check_session_and_edit(olmo2, tmp_path, layer=1, backend=backend)


def test_qk_norm_runs_over_the_whole_projection(olmo2_copy):
    """Scaling one head's q by 10 before a whole-width norm changes every head's q (a per-head
    norm would undo it): doubling part of q_norm's weight moves the other heads' attention
    only through the norm's shared mean, which is what transformers computes."""
    base = model_run(olmo2_copy, TEXT, dtype="float64")
    name = "model.layers.0.self_attn.q_proj.weight"
    rewrite_tensors(olmo2_copy, lambda t: t[name].__setitem__(slice(0, 12), 10 * t[name][:12]))
    moved = model_run(olmo2_copy, TEXT, dtype="float64")
    assert np.abs(moved.attentions[0, 1:] - base.attentions[0, 1:]).max() > 1e-3  # other heads
    assert worst(moved, run_reference(olmo2_copy, list(moved.ids))) <= 1e-6


def test_a_yarn_layer_opens_in_projection_mode_and_reproduces(olmo2_copy):
    """With a yarn RoPE (an engine setting since issue 28) the layer opens in projection mode,
    its whole-projection QK-norm and the yarn frequencies and attention factor the session's
    own, and reproduces the model run."""
    rewrite_config(
        olmo2_copy,
        rope_parameters={
            "rope_type": "yarn",
            "factor": 4.0,
            "original_max_position_embeddings": 16,
            "rope_theta": 500.0,
        },
        rope_theta=None,
    )
    run = model_run(olmo2_copy, TEXT, dtype="float64")
    assert worst(run, run_reference(olmo2_copy, list(run.ids))) <= 1e-6
    session = from_model(olmo2_copy, TEXT, layer=1)
    config = session.config
    assert config.mode == "projection" and session.inputs.W_Q is not None
    assert config.rope_scaling == "yarn" and config.qk_norm_width == "all"
    trace = compute(session.inputs, config, dtype="float64")
    assert np.abs(trace.stages["weights"] - run.attentions[1]).max() < 1e-12


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"hidden_act": "relu2"}, "hidden_act"),
        ({"rope_parameters": {"rope_type": "su", "rope_theta": 500.0}}, "su"),
        ({"attention_bias": True}, r"_proj\.bias, which config.json's attention_bias=true"),
        ({"head_dim": 8}, "has shape"),
    ],
)
def test_config_values_not_implemented_are_refused_by_name(olmo2_copy, changes, named):
    rewrite_config(olmo2_copy, **changes)
    with pytest.raises(ModelError, match=named):
        model_run(olmo2_copy, TEXT)


def test_a_per_head_qk_norm_is_refused_by_shape(olmo2_copy):
    """Qwen3-style [head_dim] QK-norm weights in an OLMo 2 file: named with both shapes."""
    name = "model.layers.0.self_attn.k_norm.weight"
    rewrite_tensors(olmo2_copy, lambda t: t.__setitem__(name, t[name][:12].copy()))
    with pytest.raises(ModelError, match=r"k_norm\.weight has shape \[12\], expected \[24\]"):
        model_run(olmo2_copy, TEXT)


def test_a_pre_norm_tensor_is_not_read(olmo2_copy):
    """OLMo 2 has no input_layernorm: the Llama name is not looked for, and its absence is
    what transformers builds (the run still matches)."""
    run = model_run(olmo2_copy, TEXT, dtype="float64")
    keys = run.model.weights.stored.keys[0]
    assert not any("input_layernorm" in key for key in keys)
    assert any("post_feedforward_layernorm" in key for key in keys)
