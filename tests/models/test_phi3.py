"""Phi-3 (issue 28): the fused qkv_proj and gate_up_proj split as transformers splits them,
longrope (short factors within the original context, long ones past it, its attention
factor), partial rotary, a sliding window, against transformers in float64 with its float32
steps patched; a knockout and an edit; refusals by name. Mild and sharp parity on both
backends (longrope past its context, half rotary, a window of 5) is in
``test_exact_parity.py``."""

from __future__ import annotations

import copy
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
    original_max_position_embeddings=8,
    rope_theta=500.0,
    rope_scaling={
        "type": "longrope",
        "short_factor": [1.0, 1.2, 1.5, 2.0],
        "long_factor": [1.0, 2.0, 4.0, 8.0],
    },
    **dict.fromkeys(("bos_token_id", "eos_token_id", "pad_token_id"), 0),
)


def _phi3(folder, **changes):
    config = copy.deepcopy({**SIZES, **changes})  # transformers fills in the rope dict it gets
    return random_checkpoint(folder, "Phi3Config", "Phi3ForCausalLM", **config)


@pytest.fixture(scope="module")
def phi3(tmp_path_factory):
    return _phi3(tmp_path_factory.mktemp("phi3"))


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_a_knockout_and_an_edit_match(phi3, backend):
    check_knockout_and_edit(phi3, TEXT, "model.layers.0.self_attn.o_proj.weight", 8, backend)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_longrope_within_its_original_context_uses_the_short_factors(tmp_path, backend):
    folder = _phi3(tmp_path, original_max_position_embeddings=32, sliding_window=4)
    run = model_run(folder, TEXT, dtype="float64", backend=backend)
    assert len(run.ids) <= 32
    assert_like_reference(run, exact_reference.run_reference(folder, list(run.ids)))


def _edit_config(folder, **changes):
    path = folder / "config.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


def test_rope_types_phi3_does_not_read_are_refused_by_name(tmp_path):
    folder = _phi3(tmp_path)
    config = json.loads((folder / "config.json").read_text())
    key = "rope_parameters" if "rope_parameters" in config else "rope_scaling"
    _edit_config(folder, **{key: {"rope_type": "dynamic", "factor": 2.0}})
    with pytest.raises(
        ModelError, match=r"'dynamic' is not implemented; supported: default, longrope"
    ):
        model_run(folder, TEXT)
    _edit_config(
        folder, **{key: {"rope_type": "longrope", "short_factor": [1.0], "long_factor": [2.0]}}
    )
    with pytest.raises(ModelError, match="short_factor and long_factor have 1 values"):
        model_run(folder, TEXT)


def test_a_fused_tensor_of_the_wrong_size_is_named(tmp_path):
    folder = _phi3(tmp_path)
    _edit_config(folder, intermediate_size=40)
    with pytest.raises(
        ModelError, match=r"gate_up_proj.weight has shape \[96, 32\], expected \[80, 32\]"
    ):
        model_run(folder, TEXT)


def test_phi3_weights_labelled_llama_are_named_for_their_layout(phi3, tmp_path):
    import shutil

    folder = tmp_path / "copy"
    shutil.copytree(phi3, folder)
    config = json.loads((folder / "config.json").read_text())
    config.update(model_type="llama", architectures=["LlamaForCausalLM"])
    config.pop("rope_parameters", None)
    config.pop("rope_scaling", None)
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelError) as err:
        model_run(folder, TEXT)
    message = str(err.value)
    assert "the tensors follow the Phi-3 decoders (phi3) layout" in message, message
    assert "gate_up_proj" in message and "set it to 'phi3'" in message, message
    assert "has no weight" not in message, message
