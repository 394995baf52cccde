"""The routed-experts feed-forward of each family against transformers' own MoE block
(``Qwen3MoeSparseMoeBlock``, ``OlmoeSparseMoeBlock``, ``GptOssMLP``, ``DeepseekV3MoE``) in
float64, its plain expert loop and its float32 routers made float64: the expert tensors read
from the checkpoint transformers saved (per-expert, or gpt-oss's fused interleaved 3-D
layout with biases; DeepSeek-V3's shared experts and score-correction bias), the routing rule
and the weighted sum, on numpy and torch; the chosen experts are transformers'."""

from __future__ import annotations

import json
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from attention_explorer.pretrained.checkpoint.role_reader import RoleReader
from attention_explorer.pretrained.checkpoint.tensor_file import TensorFile
from attention_explorer.pretrained.experts import plans
from attention_explorer.pretrained.experts.compute import routed_feed_forward
from attention_explorer.pretrained.experts.reading import expert_weights
from attention_explorer.pretrained.experts.record import recording
from attention_explorer.pretrained.families import llama
from tests.models.exact_reference import exact_routers

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

BASE = dict(
    vocab_size=50,
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=8,
    num_experts_per_tok=2,
)
#: family -> (config class, model class, its plan, config, the routed layer)
CASES = {
    "qwen3_moe": (
        "Qwen3MoeConfig",
        "Qwen3MoeForCausalLM",
        plans.QWEN3_MOE,
        dict(intermediate_size=48, moe_intermediate_size=16, num_experts=6, norm_topk_prob=True),
        1,
    ),
    "olmoe": (
        "OlmoeConfig",
        "OlmoeForCausalLM",
        plans.OLMOE,
        dict(intermediate_size=16, num_experts=8, eos_token_id=None),
        0,
    ),
    "gpt_oss": (
        "GptOssConfig",
        "GptOssForCausalLM",
        plans.GPT_OSS,
        dict(intermediate_size=16, num_local_experts=4, swiglu_limit=1.5),
        1,
    ),
    "deepseek_v3": (
        "DeepseekV3Config",
        "DeepseekV3ForCausalLM",
        plans.DEEPSEEK_V3,
        dict(
            intermediate_size=48,
            moe_intermediate_size=16,
            n_routed_experts=8,
            num_experts_per_tok=3,
            n_group=4,
            topk_group=2,
            first_k_dense_replace=1,
            q_lora_rank=16,
            kv_lora_rank=16,
            qk_rope_head_dim=4,
            qk_nope_head_dim=4,
            v_head_dim=8,
            num_key_value_heads=4,
        ),
        1,
    ),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request, tmp_path_factory):
    """(the transformers block in float64 with its plain loop, our weights record, our layer
    weights read from the saved checkpoint, a text's hidden states x [12, d])."""
    config_class, model_class, plan, extra, layer = CASES[request.param]
    torch.manual_seed(1)
    config = getattr(transformers, config_class)(**{**BASE, **extra})
    model = getattr(transformers, model_class)(config).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(4.0) if p.dim() == 2 else p.add_(0.2 * torch.randn_like(p))
        for name, b in model.named_buffers():
            if name.endswith("e_score_correction_bias"):
                b.copy_(0.05 * torch.randn_like(b))
    folder = tmp_path_factory.mktemp(request.param)
    model.save_pretrained(folder)
    hf = getattr(transformers, model_class).from_pretrained(
        folder, dtype=torch.float64, experts_implementation="eager"
    )
    block = hf.model.layers[layer].mlp.eval()
    saved = json.loads((folder / "config.json").read_text())
    arch = replace(llama.ARCHITECTURE, experts=plan)
    reader = RoleReader(arch, TensorFile.open(folder), np.float64, config=saved)
    optional = ("router_score_bias", "b_experts_gate", "b_experts_in", "b_experts_out")
    lw = SimpleNamespace(**{**dict.fromkeys(optional), **expert_weights(reader, layer, 32)})
    w = SimpleNamespace(arch=arch, config=saved, activation="silu")
    x = np.random.default_rng(0).normal(size=(12, 32))  # [n, d]
    return block, w, lw, x


def reference(block, x: np.ndarray):
    """transformers' block on x, its routers in float64: (output [n, d], experts [n, k])."""
    seen = {}
    router = getattr(block, "gate", None) or block.router
    hook = router.register_forward_hook(lambda m, a, out: seen.update(idx=out[2]))
    with exact_routers() as calls, torch.no_grad():
        out = block(torch.from_numpy(x)[None])
    hook.remove()
    out = out[0] if isinstance(out, tuple) else out
    if isinstance(block, transformers.models.gpt_oss.modeling_gpt_oss.GptOssMLP):
        assert calls["router"] == 0  # gpt-oss's router already runs in the logits' dtype
    else:
        assert calls["router"] == 1
    return out[0].numpy(), np.sort(seen["idx"].numpy(), axis=1)


def on_torch(lw):
    return SimpleNamespace(
        **{k: None if v is None else torch.from_numpy(np.asarray(v)) for k, v in vars(lw).items()}
    )


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_the_block_is_transformers(case, backend):
    block, w, lw, x = case
    expected, chosen = reference(block, x)
    if backend == "torch":
        lw, x = on_torch(lw), torch.from_numpy(x)
    with recording() as routes:
        y = routed_feed_forward(w, lw, x)
    y = y if isinstance(y, np.ndarray) else y.numpy()
    np.testing.assert_allclose(y, expected, rtol=0, atol=1e-12)
    assert np.abs(expected).max() > 0.1  # the experts add something
    np.testing.assert_array_equal(np.sort(routes[0].experts, axis=1), chosen)
    assert len({tuple(r) for r in chosen.tolist()}) >= 3  # tokens route differently


def test_the_plan_changes_the_numbers(case):
    """Each rule's keys matter: without renormalising (softmax rules), without the score
    bias or the group limit (DeepSeek-V3), without the clamp (gpt-oss) the block differs."""
    block, w, lw, x = case
    expected, _ = reference(block, x)
    plan = w.arch.experts
    if plan.rule == "topk_softmax":
        changed = {**w.config, "swiglu_limit": 100.0}
    elif plan.rule == "sigmoid_grouped":
        changed = {**w.config, "topk_group": w.config["n_group"]}
        lw = SimpleNamespace(**{**vars(lw), "router_score_bias": None})
    else:
        changed = {**w.config, "norm_topk_prob": not w.config.get("norm_topk_prob", False)}
    y = routed_feed_forward(SimpleNamespace(**{**vars(w), "config": changed}), lw, x)
    assert np.abs(y - expected).max() > 1e-3
