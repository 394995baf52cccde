"""StableLM (issue 28): partial rotary, LayerNorm, q/k/v biases (``use_qkv_bias``), the
parallel residual with one shared norm and the sequential one, against transformers in
float64 with its float32 steps patched; a knockout and an edit; refusals by name. Mild and
sharp parity on both backends (parallel, half rotary, q/k/v biases) is in
``test_exact_parity.py``."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from attention_explorer.pretrained import model_run  # noqa: E402
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


def _stablelm(folder, **changes):
    return random_checkpoint(
        folder, "StableLmConfig", "StableLmForCausalLM", **{**SIZES, **changes}
    )


@pytest.fixture(scope="module")
def stablelm(tmp_path_factory):
    return _stablelm(tmp_path_factory.mktemp("stablelm"))  # sequential, quarter rotary


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_the_default_sequential_form_matches(stablelm, backend):
    run = model_run(stablelm, TEXT, dtype="float64", backend=backend)
    assert_like_reference(run, exact_reference.run_reference(stablelm, list(run.ids)))


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_a_knockout_and_an_edit_match(stablelm, backend):
    check_knockout_and_edit(stablelm, TEXT, "model.layers.0.self_attn.o_proj.weight", 8, backend)


def _edit_config(folder, **changes):
    path = folder / "config.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"qk_layernorm": True}, "qk_layernorm"),
        ({"head_dim": 4}, "head_dim"),
        ({"hidden_act": "relu2"}, "hidden_act"),
    ],
)
def test_config_values_not_implemented_are_refused_by_name(stablelm, tmp_path, changes, named):
    import shutil

    folder = tmp_path / "copy"
    shutil.copytree(stablelm, folder)
    _edit_config(folder, **changes)
    with pytest.raises(ModelError, match=named):
        model_run(folder, TEXT)


def test_tensors_that_disagree_with_the_config_are_refused(stablelm, tmp_path):
    import shutil

    folder = tmp_path / "copy"
    shutil.copytree(stablelm, folder)
    _edit_config(folder, use_qkv_bias=True)
    with pytest.raises(ModelError, match=r"q_proj\.bias.*use_qkv_bias=true"):
        model_run(folder, TEXT)
    _edit_config(folder, use_qkv_bias=False, use_parallel_residual=True)
    with pytest.raises(ModelError, match=r"post_attention_layernorm.*parallel residual shares"):
        model_run(folder, TEXT)  # a sequential checkpoint labelled parallel
