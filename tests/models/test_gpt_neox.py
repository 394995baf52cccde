"""GPT-NeoX / Pythia (issue 28): partial rotary, the per-head fused query_key_value, the
parallel and the sequential residual, against transformers in float64 with its float32 steps
patched (``exact_reference``); a knockout and an edit; the session of a layer; refusals by
name. Mild and sharp parity on both backends is in ``test_exact_parity.py``."""

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
    rewrite_config,
)

TEXT = "The cat sat on the mat because it was"
SIZES = dict(
    hidden_size=32,
    intermediate_size=48,
    num_hidden_layers=2,
    num_attention_heads=4,
    max_position_embeddings=64,
    rotary_pct=0.5,
    rotary_emb_base=500.0,
)


def _neox(folder, **changes):
    return random_checkpoint(folder, "GPTNeoXConfig", "GPTNeoXForCausalLM", **{**SIZES, **changes})


@pytest.fixture(scope="module")
def neox(tmp_path_factory):
    return _neox(tmp_path_factory.mktemp("neox"))


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_the_sequential_residual_matches(tmp_path, backend):
    folder = _neox(tmp_path, use_parallel_residual=False, rotary_pct=0.25)
    run = model_run(folder, TEXT, dtype="float64", backend=backend)
    assert_like_reference(run, exact_reference.run_reference(folder, list(run.ids)))
    parallel = json.loads((folder / "config.json").read_text())
    assert parallel["use_parallel_residual"] is False


def test_an_older_config_with_rotary_pct_at_the_top_matches(tmp_path):
    """Pythia's config.json: rotary_pct and rotary_emb_base beside the sizes, no rope dict
    and no attention_bias (true by default)."""
    folder = _neox(tmp_path)
    rewrite_config(folder, rope_parameters=None, attention_bias=None)
    run = model_run(folder, TEXT, dtype="float64")
    assert_like_reference(run, exact_reference.run_reference(folder, list(run.ids)))


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_a_knockout_and_an_edit_match(neox, backend):
    check_knockout_and_edit(neox, TEXT, "gpt_neox.layers.0.attention.dense.weight", 8, backend)


def test_a_layer_opens_as_a_session_that_reproduces_it(neox):
    base = model_run(neox, TEXT, dtype="float64")
    for layer in (0, 1):
        session = from_model(neox, TEXT, layer=layer)
        assert session.config.mode == "projection"  # W_Q, W_K editable
        assert session.config.rotary_fraction < 1  # only the first dims of each head turn
        trace = compute(session.inputs, session.config, dtype="float64")
        np.testing.assert_allclose(trace.stages["weights"], base.attentions[layer], atol=1e-12)


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"head_dim": 4}, "head_dim"),
        (
            {
                "rope_parameters": {
                    "rope_type": "default",
                    "rope_theta": 500.0,
                    "partial_rotary_factor": 0.375,
                }
            },
            "partial_rotary_factor 0.375",
        ),
        ({"rope_parameters": {"rope_type": "su", "rope_theta": 500.0}}, "'su'"),
        ({"hidden_act": "relu2"}, "hidden_act"),
    ],
)
def test_config_values_not_implemented_are_refused_by_name(tmp_path, changes, named):
    folder = _neox(tmp_path)
    rewrite_config(folder, **changes)
    with pytest.raises(ModelError, match=named):
        model_run(folder, TEXT)


def test_tensors_that_disagree_with_the_config_are_refused(tmp_path):
    folder = _neox(tmp_path)
    rewrite_config(folder, attention_bias=False)
    with pytest.raises(ModelError, match=r"attention\.dense\.bias.*attention_bias=false"):
        model_run(folder, TEXT)
    rewrite_config(folder, attention_bias=True, num_attention_heads=8, hidden_size=64)
    with pytest.raises(ModelError, match="expected"):
        model_run(folder, TEXT)
