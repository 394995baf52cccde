"""Gemma 3 text (``Gemma3ForCausalLM``) against transformers' exact float64 reference: QK-norm
with Gemma's 1 + w, local layers rotating with their own base and global layers with
``rope_theta`` and a linear scaling, sliding windows, the logits' soft-cap; the model run and
model_attention on numpy and torch, a knockout and an edit, a layer opened by from_model, the
legacy config keys (``rope_local_base_freq``, ``sliding_window_pattern``) and what Gemma 3
support refuses by name."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from attention_explorer.pretrained import ModelError, model_run
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

ROPES = {
    "full_attention": {"rope_type": "linear", "factor": 4.0, "rope_theta": 900.0},
    "sliding_attention": {"rope_type": "default", "rope_theta": 50.0},
}
GEMMA3 = dict(
    sliding_window=5,
    layer_types=["sliding_attention", "full_attention"],
    final_logit_softcapping=3.0,
    rope_parameters=ROPES,
)


@pytest.fixture(scope="module")
def gemma3(tmp_path_factory):
    """A random 2-layer Gemma 3: layer 0 local (window 5, base 50), layer 1 global (base
    900, linear scaling 4)."""
    folder = tmp_path_factory.mktemp("gemma3")
    return write_model(folder, "Gemma3TextConfig", "Gemma3ForCausalLM", **GEMMA3)


@pytest.fixture
def gemma3_copy(gemma3, tmp_path):
    folder = tmp_path / "gemma3"
    shutil.copytree(gemma3, folder)
    return folder


@pytest.mark.parametrize("backend", BACKENDS)
def test_gemma3_matches_the_exact_reference(gemma3, backend):
    print(f"gemma3 parity on {backend}: {check_parity(gemma3, backend):.1e}")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("layer", [0, 1])
def test_knockout_and_edit_match_transformers(gemma3, tmp_path, layer, backend):
    check_knockout(gemma3, tmp_path, layer=layer, head=3, backend=backend)
    check_session_and_edit(gemma3, tmp_path, layer=layer, backend=backend)


def test_local_and_global_layers_rotate_with_their_own_rope(gemma3):
    w = model_run(gemma3, TEXT, dtype="float64").model.weights
    local, full = w.rotary_of(0), w.rotary_of(1)
    assert local.theta == 50.0 and local.scaling.kind == "default"
    assert full.theta == 900.0 and full.scaling.kind == "linear" and full.scaling.factor == 4.0
    assert [w.window_of(0), w.window_of(1)] == [5, None]


def test_qk_norm_with_one_plus_w_changes_the_numbers(gemma3_copy):
    """q_norm's stored weight is an offset from 1: zeroing it leaves x̂ * 1, which still
    differs from the trained offsets, and transformers agrees on both."""
    base = model_run(gemma3_copy, TEXT, dtype="float64")
    name = "model.layers.0.self_attn.q_norm.weight"
    rewrite_tensors(gemma3_copy, lambda t: t.__setitem__(name, 0 * t[name]))
    moved = model_run(gemma3_copy, TEXT, dtype="float64")
    assert np.abs(moved.attentions[0] - base.attentions[0]).max() > 1e-3
    assert worst(moved, run_reference(gemma3_copy, list(moved.ids))) <= 1e-6


def test_the_legacy_keys_give_the_same_model(gemma3, gemma3_copy):
    """rope_theta + rope_scaling (global), rope_local_base_freq (local) and
    sliding_window_pattern, as Hub configs write them, read as rope_parameters and
    layer_types do."""
    nested = model_run(gemma3, TEXT, dtype="float64")
    rewrite_config(
        gemma3_copy,
        rope_parameters=None,
        layer_types=None,
        rope_theta=900.0,
        rope_scaling={"rope_type": "linear", "factor": 4.0},
        rope_local_base_freq=50.0,
        sliding_window_pattern=2,
    )
    legacy = model_run(gemma3_copy, TEXT, dtype="float64")
    assert np.abs(legacy.logits - nested.logits).max() < 1e-12
    assert worst(legacy, run_reference(gemma3_copy, list(legacy.ids))) <= 1e-6


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"attn_logit_softcapping": 50.0}, "attn_logit_softcapping"),
        ({"use_bidirectional_attention": True}, "use_bidirectional_attention"),
        ({"rope_parameters": {"rope_type": "default", "rope_theta": 10.0}}, "rope_parameters"),
        (
            {"rope_parameters": {**ROPES, "full_attention": {"rope_type": "su"}}},
            "su",
        ),
        ({"layer_types": ["sliding_attention", "chunked_attention"]}, "chunked_attention"),
        ({"sliding_window_pattern": 0, "layer_types": None}, "sliding_window_pattern"),
    ],
)
def test_config_values_not_implemented_are_refused_by_name(gemma3_copy, changes, named):
    rewrite_config(gemma3_copy, **changes)
    with pytest.raises(ModelError, match=named):
        model_run(gemma3_copy, TEXT)


def test_missing_qk_norm_is_refused_by_name(gemma3_copy):
    rewrite_tensors(gemma3_copy, lambda t: t.pop("model.layers.1.self_attn.k_norm.weight"))
    with pytest.raises(ModelError, match=r"layers\.1\.self_attn\.k_norm\.weight"):
        model_run(gemma3_copy, TEXT)


def test_the_config_as_written_by_transformers_is_read(gemma3):
    """transformers 5 writes rope_parameters keyed by layer type and layer_types in full."""
    config = json.loads((gemma3 / "config.json").read_text())
    assert set(config["rope_parameters"]) == {"full_attention", "sliding_attention"}
    assert config["model_type"] == "gemma3_text"


def test_the_knockout_sweep_runs_every_head(gemma3):
    """The sweep's [layers, heads] changes are the model run's own knockouts."""
    from attention_explorer.pretrained.sweep import knockout_sweep

    def measure(run):
        return float(run.logits[-1].max())

    changes = knockout_sweep(gemma3, TEXT, measure=measure, dtype="float64")
    assert changes.shape == (2, 4) and np.abs(changes).max() > 1e-4
    base = measure(model_run(gemma3, TEXT, dtype="float64"))
    knocked = measure(model_run(gemma3, TEXT, dtype="float64", knockout=[(1, 2)]))
    assert abs(changes[1, 2] - (knocked - base)) < 1e-12
