"""The experts plans of the four families with routed experts, as transformers 5.24 builds
them (``Qwen3MoeSparseMoeBlock``, ``OlmoeSparseMoeBlock``, ``GptOssMLP``,
``DeepseekV3MoE``). A family file sets ``experts=`` one of these on its record.

Tensor names are the per-expert layout of the Hub checkpoints and of transformers'
``save_pretrained`` (``mlp.experts.{j}.gate_proj``…); the fused 3-D layout (``mlp.experts.
gate_up_proj``, as transformers holds it in memory and gpt-oss saves it) is read as well.
"""

from __future__ import annotations

from collections.abc import Mapping

from attention_explorer.pretrained.experts.plan import ExpertsPlan
from attention_explorer.pretrained.model_errors import ModelError

_M = "layers.{i}.mlp."

#: Per-expert SwiGLU experts and the fused layout (Qwen3-MoE, OLMoE, DeepSeek-V3).
PER_EXPERT_TENSORS = {
    "router": _M + "gate",
    "expert_gate": _M + "experts.{j}.gate_proj",
    "expert_up": _M + "experts.{j}.up_proj",
    "expert_down": _M + "experts.{j}.down_proj",
    "experts_gate_up": _M + "experts.gate_up_proj",
    "experts_down": _M + "experts.down_proj",
}

#: Quantized checkpoints (gpt-oss's MXFP4, DeepSeek-V3's fp8) are not read.
QUANTIZED = {
    "quantization_config": "quantized weights (MXFP4, fp8…) are not read here; use a "
    "checkpoint stored in bfloat16, float16 or float32"
}


def _count(config: Mapping, key: str, default: int, least: int = 0) -> int:
    """An integer setting (``default`` when absent or null), at least ``least``."""
    value = config.get(key)
    value = default if value is None else value
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ModelError(
            "config", f"config.json sets {key} {value!r}; expected an integer >= {least}"
        )
    return value


def _layer_index(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def qwen3_moe_sparse(config: Mapping, layer: int) -> bool:
    """Qwen3-MoE's rule: a layer is sparse unless listed in ``mlp_only_layers``, when there
    are experts and ``(layer + 1) % decoder_sparse_step == 0``."""
    key = "num_experts" if config.get("num_experts") is not None else "num_local_experts"
    count = _count(config, key, 128)
    step = _count(config, "decoder_sparse_step", 1, least=1)
    dense = config.get("mlp_only_layers") or []
    if not isinstance(dense, list) or not all(_layer_index(i) for i in dense):
        raise ModelError(
            "config", f"config.json sets mlp_only_layers {dense!r}; expected a list of layers"
        )
    return layer not in dense and count > 0 and (layer + 1) % step == 0


def first_k_dense(config: Mapping, layer: int) -> bool:
    """DeepSeek-V3's rule: the first ``first_k_dense_replace`` layers are dense."""
    return layer >= _count(config, "first_k_dense_replace", 3)


QWEN3_MOE = ExpertsPlan(
    rule="softmax_topk",
    tensors=PER_EXPERT_TENSORS,
    count_keys=("num_experts", "num_local_experts"),
    sparse=qwen3_moe_sparse,
    layer_keys=("decoder_sparse_step", "mlp_only_layers"),
    refused=QUANTIZED,
    defaults={"num_experts_per_tok": 8, "moe_intermediate_size": 768, "norm_topk_prob": False},
    accepted={"norm_topk_prob": (False, True)},
)

OLMOE = ExpertsPlan(
    rule="softmax_topk",
    tensors=PER_EXPERT_TENSORS,
    count_keys=("num_experts", "num_local_experts"),
    width_key="intermediate_size",
    refused=QUANTIZED,
    defaults={"num_experts_per_tok": 8, "norm_topk_prob": False},
    accepted={"norm_topk_prob": (False, True)},
)

GPT_OSS = ExpertsPlan(
    rule="topk_softmax",
    tensors={
        "router": _M + "router",
        "experts_gate_up": _M + "experts.gate_up_proj",
        "experts_down": _M + "experts.down_proj",
    },
    count_keys=("num_local_experts", "num_experts"),
    width_key="intermediate_size",
    kind="clamped_swiglu",
    router_bias=True,
    expert_bias=True,
    fused_layout="interleaved",
    fused_orientation="in_out",
    refused=QUANTIZED,
    defaults={"num_experts_per_tok": 4, "swiglu_limit": 7.0, "swiglu_alpha": 1.702},
)

DEEPSEEK_V3 = ExpertsPlan(
    rule="sigmoid_grouped",
    tensors={
        **PER_EXPERT_TENSORS,
        "router_score_bias": _M + "gate.e_score_correction_bias",
        "shared_gate": _M + "shared_experts.gate_proj",
        "shared_up": _M + "shared_experts.up_proj",
        "shared_down": _M + "shared_experts.down_proj",
    },
    count_keys=("n_routed_experts", "num_local_experts"),
    shared_key="n_shared_experts",
    sparse=first_k_dense,
    layer_keys=("first_k_dense_replace",),
    refused=QUANTIZED,
    defaults={
        "num_experts_per_tok": 8,
        "moe_intermediate_size": 2048,
        "n_group": 8,
        "topk_group": 4,
        "norm_topk_prob": True,
        "routed_scaling_factor": 2.5,
        "n_shared_experts": 1,
    },
    accepted={
        "norm_topk_prob": (True, False),
        "topk_method": ("noaux_tc",),  # the original config's names for what 5.24 runs
        "scoring_func": ("sigmoid",),
        "moe_layer_freq": (1,),
    },
)
