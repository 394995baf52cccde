"""Phi-1/1.5/2 (issue 28): one LayerNorm shared by the parallel attention and feed-forward,
partial rotary, the ``dense`` output projection, ``final_layernorm`` and an LM head with a
bias, against transformers in float64 with its float32 steps patched; a knockout and an edit;
the session of a layer; refusals by name. Mild and sharp parity on both backends is in
``test_exact_parity.py``."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from attention_explorer.engine import compute  # noqa: E402
from attention_explorer.pretrained import from_model, model_run  # noqa: E402
from attention_explorer.pretrained.model_errors import ModelError  # noqa: E402
from tests.models import exact_reference  # noqa: E402
from tests.models.conftest import (  # noqa: E402
    assert_like_reference,
    check_knockout_and_edit,
    random_checkpoint,
)

TEXT = "The cat sat on the mat because it was"
SIZES = dict(
    hidden_size=32,
    intermediate_size=48,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=64,
    rope_theta=500.0,
)


def _phi(folder, **changes):
    return random_checkpoint(folder, "PhiConfig", "PhiForCausalLM", **{**SIZES, **changes})


@pytest.fixture(scope="module")
def phi(tmp_path_factory):
    return _phi(tmp_path_factory.mktemp("phi"))


def _edit_config(folder, **changes):
    path = folder / "config.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_a_knockout_and_an_edit_match(phi, backend):
    check_knockout_and_edit(phi, TEXT, "model.layers.0.self_attn.dense.weight", 8, backend)


def test_a_quarter_rotary_and_a_tied_head_with_its_bias_match(tmp_path):
    folder = _phi(tmp_path, partial_rotary_factor=0.25, tie_word_embeddings=True)
    run = model_run(folder, TEXT, dtype="float64")
    assert_like_reference(run, exact_reference.run_reference(folder, list(run.ids)))


def test_a_layer_opens_as_a_session_that_reproduces_it(phi):
    base = model_run(phi, TEXT, dtype="float64")
    session = from_model(phi, TEXT, layer=1)
    assert session.config.mode == "projection" and session.config.rotary_fraction == 0.5
    trace = compute(session.inputs, session.config, dtype="float64")
    np.testing.assert_allclose(trace.stages["weights"], base.attentions[1], atol=1e-12)


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"qk_layernorm": True}, "qk_layernorm"),
        ({"partial_rotary_factor": 0.375, "rope_parameters": None}, "partial_rotary_factor 0.375"),
        ({"rope_parameters": {"rope_type": "llama4", "rope_theta": 10.0}}, "'llama4'"),
    ],
)
def test_config_values_not_implemented_are_refused_by_name(tmp_path, changes, named):
    folder = _phi(tmp_path)
    config = json.loads((folder / "config.json").read_text())
    config.update(changes)
    (folder / "config.json").write_text(
        json.dumps({k: v for k, v in config.items() if v is not None})
    )
    with pytest.raises(ModelError, match=named):
        model_run(folder, TEXT)


def test_a_head_without_its_bias_is_refused(tmp_path):
    from safetensors.torch import load_file, save_file

    folder = _phi(tmp_path)
    path = folder / "model.safetensors"
    tensors = load_file(str(path))
    del tensors["lm_head.bias"]
    save_file(tensors, str(path), metadata={"format": "pt"})
    with pytest.raises(ModelError, match="lm_head.bias"):
        model_run(folder, TEXT)
