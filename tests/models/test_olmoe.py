"""OLMoE against transformers' ``OlmoeForCausalLM`` (eager, plain expert loop, float64 with
its float32 steps and the router's softmax patched) on a tiny random checkpoint (2 layers,
d 32, 8 experts, top-2, every layer routed; QK-norm over the whole projection): attentions,
hidden states and logits within 1e-6 on mild and sharp weights, numpy and torch; a knockout
and an edit; ``clip_qkv`` refused by name."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import attention_explorer as ae
from attention_explorer.pretrained import ModelError, model_run
from tests.generation.conftest import cache_arrays, hf_generate
from tests.models.conftest import (
    assert_like_reference,
    check_knockout_and_edit,
    random_checkpoint,
    rewrite_config,
    sharp_copy,
)
from tests.models.exact_reference import mean_row_max, run_reference

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

TEXT = "A dog ran in the park and the cat watched it."
SIZES = dict(
    hidden_size=32,
    intermediate_size=16,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=64,
    num_experts=8,
    num_experts_per_tok=2,
    tie_word_embeddings=False,
    eos_token_id=None,
)


@pytest.fixture(scope="module")
def olmoe_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("olmoe")
    return random_checkpoint(folder, "OlmoeConfig", "OlmoeForCausalLM", **SIZES)


@pytest.fixture(scope="module")
def sharp_folder(olmoe_folder, tmp_path_factory):
    return sharp_copy(olmoe_folder, tmp_path_factory.mktemp("olmoe_sharp"), TEXT)


@pytest.fixture(scope="module")
def references(olmoe_folder, sharp_folder):
    ids = list(model_run(olmoe_folder, TEXT, dtype="float64").ids)
    return {"mild": run_reference(olmoe_folder, ids), "sharp": run_reference(sharp_folder, ids)}


@pytest.mark.parametrize("weights", ["mild", "sharp"])
@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_model_run_matches_transformers(weights, backend, olmoe_folder, sharp_folder, references):
    folder = olmoe_folder if weights == "mild" else sharp_folder
    reference = references[weights]
    assert reference.calls["router"] == 2  # both layers routed, the softmax in float64
    run = model_run(folder, TEXT, dtype="float64", backend=backend)
    assert assert_like_reference(run, reference) < 1e-6
    if weights == "sharp":
        assert mean_row_max(run.attentions[0]) > 0.5


def test_every_layer_routes_and_the_weights_are_not_renormalised(olmoe_folder):
    run = model_run(olmoe_folder, TEXT, dtype="float64")
    assert run.routed_layers() == [0, 1]
    choice = run.expert_choice(0)
    assert choice.logits.shape == (len(run.ids), 8)
    assert (choice.weights.sum(axis=1) < 1).all()  # norm_topk_prob false: a share of 1
    assert (choice.weights[:, 0] >= choice.weights[:, 1]).all()  # largest first


def test_knockout_and_edit_match_transformers(olmoe_folder):
    check_knockout_and_edit(olmoe_folder, TEXT, "model.layers.0.self_attn.o_proj.weight", 8)


def test_clip_qkv_is_refused_by_name(olmoe_folder, tmp_path):
    folder = tmp_path / "clipped"
    shutil.copytree(olmoe_folder, folder)
    rewrite_config(folder, clip_qkv=8.0)
    with pytest.raises(ModelError, match="clip_qkv"):
        model_run(folder, TEXT, dtype="float64")


def test_greedy_generation_and_its_cache_match_transformers(olmoe_folder):
    """ae.generate on OLMoE (QK-norm over the whole projection, experts in every layer):
    transformers' greedy ids, and its cache's keys and values (after QK-norm and RoPE)."""
    steps = 5
    ours = ae.generate(olmoe_folder, "A dog ran in", steps, dtype="float64")
    ids, past = hf_generate(olmoe_folder, ours.ids[: ours.prompt_length], steps)
    assert list(ours.ids) == ids
    fed = len(ids) - 1  # the last generated token is never fed
    for layer, cache in enumerate(ours.cache):
        keys, values = cache_arrays(past, layer)  # [kv, positions, d]
        np.testing.assert_allclose(cache.keys, keys[:, :fed], atol=1e-6)
        np.testing.assert_allclose(cache.values, values[:, :fed], atol=1e-6)
