"""Qwen3-MoE (``Qwen3MoeForCausalLM``): Qwen3's attention (QK-norm on each head's q and k,
``[head_dim]`` weights, before RoPE; grouped-query attention; ``attention_bias`` on q, k, v
and o) with a mixture-of-experts feed-forward, as transformers' ``Qwen3MoeSparseMoeBlock``
computes it: the router (``mlp.gate``, no bias) gives each token's softmax over
``num_experts`` experts, the ``num_experts_per_tok`` largest are kept (divided by their sum
when ``norm_topk_prob``) and weight those experts' SwiGLU MLPs (``moe_intermediate_size``).

A layer is routed unless listed in ``mlp_only_layers``, when ``(layer + 1) %
decoder_sparse_step == 0``; the other layers run a dense SwiGLU MLP (``intermediate_size``).
``output_router_logits`` and ``router_aux_loss_coef`` act in training only. Quantized
checkpoints (``quantization_config``) and sliding-window layers are refused by name.
"""

from __future__ import annotations

from dataclasses import replace

from attention_explorer.pretrained.experts.plans import QWEN3_MOE
from attention_explorer.pretrained.families import llama, qwen3

ARCHITECTURE = replace(
    qwen3.ARCHITECTURE,
    family="qwen3_moe",
    label="Qwen3-MoE decoders (qwen3_moe)",
    model_types=("qwen3_moe",),
    sizes={
        **llama.LLAMA_SIZES,
        "head_dim": ("head_dim", None),
        "max_positions": ("max_position_embeddings", 32768),
    },
    experts=QWEN3_MOE,
)
