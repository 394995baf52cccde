"""SmolLM3 (``SmolLM3ForCausalLM``) against transformers' exact float64 reference: NoPE layers
(``no_rope_layers``, ``no_rope_layer_interval``) and their sliding windows; the model run and
model_attention on numpy and torch, a knockout and an edit of the NoPE layer, a layer opened
by from_model, and what SmolLM3 support refuses by name."""

from __future__ import annotations

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
    worst,
    write_model,
)

#: Layer 0 rotates, layer 1 is a NoPE layer with a 5-token window (pad/bos/eos inside the
#: tiny vocabulary: SmolLM3Config's defaults are beyond it).
SMOLLM3 = dict(
    no_rope_layers=[1, 0],
    use_sliding_window=True,
    sliding_window=5,
    pad_token_id=0,
    bos_token_id=0,
    eos_token_id=0,
)


@pytest.fixture(scope="module")
def smollm3(tmp_path_factory):
    """A random 2-layer SmolLM3."""
    folder = tmp_path_factory.mktemp("smollm3")
    return write_model(folder, "SmolLM3Config", "SmolLM3ForCausalLM", **SMOLLM3)


@pytest.fixture
def smollm3_copy(smollm3, tmp_path):
    folder = tmp_path / "smollm3"
    shutil.copytree(smollm3, folder)
    return folder


@pytest.mark.parametrize("backend", BACKENDS)
def test_smollm3_matches_the_exact_reference(smollm3, backend):
    print(f"smollm3 parity on {backend}: {check_parity(smollm3, backend):.1e}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_knockout_and_edit_of_the_nope_layer_match_transformers(smollm3, tmp_path, backend):
    check_knockout(smollm3, tmp_path, layer=1, head=2, backend=backend)
    check_session_and_edit(smollm3, tmp_path, layer=1, backend=backend)


def test_the_nope_layer_has_no_rope_and_slides(smollm3):
    run = model_run(smollm3, TEXT, dtype="float64")
    w = run.model.weights
    assert w.rotary_of(0) is not None and w.rotary_of(1) is None
    assert [w.window_of(0), w.window_of(1)] == [None, 5]
    i, j = np.indices(run.attentions.shape[-2:])
    assert (run.attentions[1][:, i - j >= 5] == 0).all()


def test_which_layers_rotate_changes_the_numbers(smollm3_copy):
    """With RoPE in both layers (and no window) the run moves, and still matches."""
    base = model_run(smollm3_copy, TEXT, dtype="float64")
    rewrite_config(smollm3_copy, no_rope_layers=[1, 1], use_sliding_window=False, layer_types=None)
    moved = model_run(smollm3_copy, TEXT, dtype="float64")
    assert np.abs(moved.attentions[1] - base.attentions[1]).max() > 1e-2
    assert worst(moved, run_reference(smollm3_copy, list(moved.ids))) <= 1e-6


def test_the_interval_rule_when_no_rope_layers_is_absent(smollm3_copy):
    """no_rope_layer_interval 2: every second layer is NoPE (and, windowed, slides), as
    SmolLM3Config fills it."""
    rewrite_config(smollm3_copy, no_rope_layers=None, layer_types=None, no_rope_layer_interval=2)
    run = model_run(smollm3_copy, TEXT, dtype="float64")
    w = run.model.weights
    assert w.rotary_of(1) is None and w.window_of(1) == 5 and w.window_of(0) is None
    assert worst(run, run_reference(smollm3_copy, list(run.ids))) <= 1e-6


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"no_rope_layers": [1, 0, 1]}, "no_rope_layers must list"),
        ({"no_rope_layers": [1, 2]}, "no_rope_layers must list"),
        ({"no_rope_layer_interval": 0, "no_rope_layers": None}, "no_rope_layer_interval"),
        (
            {"use_sliding_window": False, "layer_types": ["full_attention", "sliding_attention"]},
            "layer 1 sliding_attention, but use_sliding_window is false",
        ),
        ({"layer_types": ["full_attention", "chunked_attention"]}, "chunked_attention"),
        ({"hidden_act": "relu2"}, "hidden_act"),
        ({"mlp_bias": True}, r"mlp_bias=true"),
    ],
)
def test_config_values_not_implemented_are_refused_by_name(smollm3_copy, changes, named):
    rewrite_config(smollm3_copy, **changes)
    with pytest.raises(ModelError, match=named):
        model_run(smollm3_copy, TEXT)
