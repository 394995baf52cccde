"""Gemma (``GemmaForCausalLM``) against transformers' exact float64 reference on tiny random
checkpoints: the model run and model_attention on numpy and torch (Gemma's 1 + w RMSNorms,
embeddings times sqrt(hidden_size), head_dim 12 against hidden 32 / 4 heads, the tanh GELU),
a knockout and an edit, a layer opened by from_model, and what Gemma support refuses by name."""

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
    rewrite_tensors,
    worst,
    write_model,
)


@pytest.fixture(scope="module")
def gemma(tmp_path_factory):
    """A random 2-layer Gemma (untied head)."""
    return write_model(tmp_path_factory.mktemp("gemma"), "GemmaConfig", "GemmaForCausalLM")


@pytest.fixture
def gemma_copy(gemma, tmp_path):
    folder = tmp_path / "gemma"
    shutil.copytree(gemma, folder)
    return folder


@pytest.mark.parametrize("backend", BACKENDS)
def test_gemma_matches_the_exact_reference(gemma, backend):
    print(f"gemma parity on {backend}: {check_parity(gemma, backend):.1e}")


def test_tied_gemma_with_biases_matches(tmp_path):
    folder = write_model(
        tmp_path, "GemmaConfig", "GemmaForCausalLM", tie_word_embeddings=True, attention_bias=True
    )
    assert not (folder / "model.safetensors").read_bytes().count(b"lm_head")
    check_parity(folder, "numpy")


@pytest.mark.parametrize("backend", BACKENDS)
def test_knockout_and_edit_match_transformers(gemma, tmp_path, backend):
    check_knockout(gemma, tmp_path, layer=1, head=2, backend=backend)
    check_session_and_edit(gemma, tmp_path, layer=1, backend=backend)


def test_each_gemma_step_changes_the_numbers(gemma_copy):
    """The 1 + w norms and the embedding scale are not vacuous: a norm weight of 0 still
    passes x̂ through (1 + 0), and the parity holds after the final norm's weights move."""
    base = model_run(gemma_copy, TEXT, dtype="float64")
    rewrite_tensors(
        gemma_copy, lambda t: t.__setitem__("model.norm.weight", 0 * t["model.norm.weight"])
    )
    moved = model_run(gemma_copy, TEXT, dtype="float64")
    assert np.abs(moved.logits - base.logits).max() > 1e-2 and np.abs(moved.logits).max() > 1e-2
    assert worst(moved, run_reference(gemma_copy, list(moved.ids))) <= 1e-6
    rewrite_config(gemma_copy, hidden_act="gelu")  # Gemma reads gelu as the tanh GELU
    assert np.abs(model_run(gemma_copy, TEXT, dtype="float64").logits - moved.logits).max() == 0


def test_the_embedding_scale_is_cast_to_the_run_dtype(gemma):
    """float32: the normaliser sqrt(32) rounded to float32, as transformers casts it."""
    run = model_run(gemma, TEXT, dtype="float32")
    exact = model_run(gemma, TEXT, dtype="float64")
    assert run.hidden.dtype == np.float32
    assert np.abs(run.hidden[0] - exact.hidden[0]).max() < 1e-5 * np.abs(exact.hidden[0]).max()


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"use_bidirectional_attention": True}, "use_bidirectional_attention"),
        ({"hidden_act": "relu2"}, "hidden_act"),
        ({"rope_parameters": {"rope_type": "su", "rope_theta": 500.0}}, "su"),
        ({"head_dim": 8}, "has shape"),
    ],
)
def test_config_keys_not_implemented_are_refused_by_name(gemma_copy, changes, named):
    rewrite_config(gemma_copy, **changes)
    with pytest.raises(ModelError, match=named):
        model_run(gemma_copy, TEXT)


def test_tensors_against_the_config_are_refused_by_name(gemma_copy):
    rewrite_tensors(
        gemma_copy,
        lambda t: t.__setitem__("model.layers.0.mlp.up_proj.bias", np.zeros(48, np.float32)),
    )
    with pytest.raises(ModelError, match=r"up_proj\.bias"):
        model_run(gemma_copy, TEXT)


def test_gemma_weights_labelled_llama_are_not_gemma(gemma_copy):
    """Gemma's tensors under model_type llama run as Llama (w, not 1 + w): the numbers are not
    Gemma's, so a relabelled checkpoint cannot pass for one (the family is read from
    model_type, as transformers reads it)."""
    gemma_run = model_run(gemma_copy, TEXT, dtype="float64")
    rewrite_config(gemma_copy, model_type="llama", architectures=["LlamaForCausalLM"])
    llama_run = model_run(gemma_copy, TEXT, dtype="float64")
    assert np.abs(llama_run.logits - gemma_run.logits).max() > 1e-2


def test_a_refused_value_reads_as_config_json_writes_it(gemma_copy):
    rewrite_config(gemma_copy, use_bidirectional_attention=True)
    with pytest.raises(ModelError) as err:
        model_run(gemma_copy, TEXT)
    assert str(err.value).endswith(
        "use_bidirectional_attention true, which Gemma decoders "
        "(gemma) support here does not implement; only null or false are"
    )
