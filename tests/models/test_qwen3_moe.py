"""Qwen3-MoE against transformers' ``Qwen3MoeForCausalLM`` (eager attention, its plain expert
loop, float64 with the float32 steps and the router's softmax patched to float64) on a tiny
random checkpoint (2 layers, d 32, 6 experts, top-2, layer 0 dense by ``mlp_only_layers``):
attentions, hidden states and logits within 1e-6 on mild and sharp weights, numpy and
torch; a knockout and an edit; the fused 3-D expert layout read as the per-expert one; which
layers are routed as transformers builds them; greedy generation's ids; refusals by name."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

import attention_explorer as ae
from attention_explorer.pretrained import ModelError, model_run
from attention_explorer.pretrained.experts.plans import QWEN3_MOE
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

TEXT = "The cat sat on the mat because it was tired and the dog watched it."
SIZES = dict(
    hidden_size=32,
    intermediate_size=48,
    moe_intermediate_size=16,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=8,
    max_position_embeddings=64,
    num_experts=6,
    num_experts_per_tok=2,
    norm_topk_prob=True,
    mlp_only_layers=[0],
    tie_word_embeddings=False,
)


@pytest.fixture(scope="module")
def moe_folder(tmp_path_factory):
    """The mild checkpoint (read only)."""
    folder = tmp_path_factory.mktemp("qwen3_moe")
    return random_checkpoint(folder, "Qwen3MoeConfig", "Qwen3MoeForCausalLM", **SIZES)


@pytest.fixture(scope="module")
def sharp_folder(moe_folder, tmp_path_factory):
    """The same checkpoint with QK-norm weights scaled so layer 0's rows peak near 0.6."""
    return sharp_copy(moe_folder, tmp_path_factory.mktemp("qwen3_moe_sharp"), TEXT)


@pytest.fixture(scope="module")
def references(moe_folder, sharp_folder):
    """The exact float64 references of both checkpoints."""
    ids = list(model_run(moe_folder, TEXT, dtype="float64").ids)
    return {"mild": run_reference(moe_folder, ids), "sharp": run_reference(sharp_folder, ids)}


@pytest.mark.parametrize("weights", ["mild", "sharp"])
@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_model_run_matches_transformers(weights, backend, moe_folder, sharp_folder, references):
    folder = moe_folder if weights == "mild" else sharp_folder
    reference = references[weights]
    assert reference.calls["router"] >= 1  # the router's softmax ran in float64
    run = model_run(folder, TEXT, dtype="float64", backend=backend)
    assert assert_like_reference(run, reference) < 1e-6
    if weights == "sharp":
        assert mean_row_max(run.attentions[0]) > 0.5


def test_the_experts_matter_and_tokens_route_differently(moe_folder, references):
    """Routing is not a no-op: several expert pairs are chosen, and the routed layer moves the
    hidden state by more than the tolerance."""
    run = model_run(moe_folder, TEXT, dtype="float64")
    routes = run.expert_choice(1)
    assert routes is not None and routes.experts.shape == (len(run.ids), 2)
    assert len({tuple(sorted(r)) for r in routes.experts.tolist()}) >= 3
    np.testing.assert_allclose(routes.weights.sum(axis=1), 1.0, atol=1e-12)  # norm_topk_prob
    assert run.expert_choice(0) is None  # mlp_only_layers: layer 0 is dense


def test_knockout_and_edit_match_transformers(moe_folder):
    check_knockout_and_edit(moe_folder, TEXT, "model.layers.0.self_attn.o_proj.weight", 8)


def test_without_renormalising_the_top_k(moe_folder, tmp_path):
    folder = tmp_path / "plain"
    shutil.copytree(moe_folder, folder)
    rewrite_config(folder, norm_topk_prob=False)
    run = model_run(folder, TEXT, dtype="float64")
    assert assert_like_reference(run, run_reference(folder, list(run.ids))) < 1e-6
    assert run.expert_choice(1).weights.sum(axis=1).max() < 1 - 1e-3


def test_the_fused_expert_layout_reads_as_the_per_expert_one(moe_folder, tmp_path):
    """transformers holds experts as ``experts.gate_up_proj [E, 2f, d]`` (gate rows first) and
    ``experts.down_proj [E, d, f]``: a file in that layout gives the same run."""
    from safetensors.numpy import load_file, save_file

    folder = tmp_path / "fused"
    shutil.copytree(moe_folder, folder)
    path = folder / "model.safetensors"
    tensors = load_file(str(path))
    stem = "model.layers.1.mlp.experts."
    parts = {
        k: [tensors.pop(f"{stem}{j}.{k}_proj.weight") for j in range(6)]
        for k in ("gate", "up", "down")
    }
    gate_up = [np.concatenate([g, u]) for g, u in zip(parts["gate"], parts["up"])]
    tensors[stem + "gate_up_proj"] = np.stack(gate_up)  # [E, 2f, d]
    tensors[stem + "down_proj"] = np.stack(parts["down"])  # [E, d, f]
    save_file(tensors, str(path), metadata={"format": "pt"})
    fused = model_run(folder, TEXT, dtype="float64")
    plain = model_run(moe_folder, TEXT, dtype="float64")
    np.testing.assert_array_equal(fused.logits, plain.logits)


@pytest.mark.parametrize(
    "extra",
    [
        {"decoder_sparse_step": 2, "mlp_only_layers": []},
        {"decoder_sparse_step": 1, "mlp_only_layers": [1, 2]},
        {"decoder_sparse_step": 3, "mlp_only_layers": [5]},
        {"num_experts": 0},
    ],
)
def test_routed_layers_are_those_transformers_builds(extra):
    config = transformers.Qwen3MoeConfig(**{**SIZES, "num_hidden_layers": 6, **extra})
    model = transformers.Qwen3MoeModel(config)
    built = [type(layer.mlp).__name__.endswith("SparseMoeBlock") for layer in model.layers]
    saved = {**SIZES, "num_hidden_layers": 6, **extra}
    assert [QWEN3_MOE.is_sparse(saved, i) for i in range(6)] == built


def test_greedy_generation_matches_transformers(moe_folder):
    from tests.generation.conftest import hf_generate

    ours = ae.generate(moe_folder, "The cat sat on", 6, dtype="float64")
    ids, _ = hf_generate(moe_folder, ours.ids[: ours.prompt_length], 6)
    assert list(ours.ids) == ids


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"quantization_config": {"quant_method": "fp8"}}, "quantization_config"),
        ({"num_experts_per_tok": 7}, "num_experts_per_tok"),
        ({"norm_topk_prob": "yes"}, "norm_topk_prob"),
        ({"use_sliding_window": True}, "use_sliding_window"),
        ({"decoder_sparse_step": 0}, "decoder_sparse_step"),
        ({"mlp_only_layers": "0"}, "mlp_only_layers"),
    ],
)
def test_what_is_not_implemented_is_refused_by_name(moe_folder, tmp_path, change, named):
    folder = tmp_path / "changed"
    shutil.copytree(moe_folder, folder)
    rewrite_config(folder, **change)
    with pytest.raises(ModelError, match=named):
        model_run(folder, TEXT, dtype="float64")


def test_a_config_that_disagrees_with_the_tensors_is_refused_naming_them(moe_folder, tmp_path):
    """Routing layer 0 too (no mlp_only_layers) while the file holds its dense MLP: refused
    naming the dense tensor; and the other way, a router in a layer the config makes dense."""
    folder = tmp_path / "changed"
    shutil.copytree(moe_folder, folder)
    rewrite_config(folder, mlp_only_layers=[])
    with pytest.raises(ModelError, match=r"layers\.0\.mlp\.up_proj"):
        model_run(folder, TEXT, dtype="float64")
    rewrite_config(folder, mlp_only_layers=[0, 1])
    with pytest.raises(ModelError, match=r"layers\.1\.mlp\.gate\.weight"):
        model_run(folder, TEXT, dtype="float64")
    config = json.loads((folder / "config.json").read_text())
    assert config["mlp_only_layers"] == [0, 1]
