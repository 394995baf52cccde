"""OLMoE (``OlmoeForCausalLM``): the Llama layout (pre-RMSNorm, RoPE, grouped-query
attention, final norm and LM head) with QK-norm over the whole projection (``q_norm``
``[hidden_size]``, ``k_norm`` ``[kv_heads * head_dim]``, after the projections, before the
split into heads and RoPE, as transformers' ``OlmoeAttention`` applies it) and a
mixture-of-experts feed-forward in every layer (``OlmoeSparseMoeBlock``): softmax over
``num_experts``, the ``num_experts_per_tok`` largest (renormalised iff ``norm_topk_prob``)
weighting SwiGLU experts of width ``intermediate_size``.

``clip_qkv`` (a clamp of q, k and v) is refused by name unless null; ``attention_bias`` puts
a bias on q, k, v and o; quantized checkpoints are refused by name.
"""

from __future__ import annotations

from dataclasses import replace

from attention_explorer.pretrained.experts.plans import OLMOE
from attention_explorer.pretrained.families import llama

ARCHITECTURE = replace(
    llama.ARCHITECTURE,
    family="olmoe",
    label="OLMoE decoders (olmoe)",
    model_types=("olmoe",),
    eps_default=1e-5,
    sizes={**llama.LLAMA_SIZES, "max_positions": ("max_position_embeddings", 4096)},
    tensors={
        **llama.LLAMA_TENSORS,
        "q_norm": "layers.{i}.self_attn.q_norm",
        "k_norm": "layers.{i}.self_attn.k_norm",
    },
    accepted={
        **llama.LLAMA_ACCEPTED,
        "attention_bias": (False, True),
        "clip_qkv": (None,),
    },
    reads=("rope_theta", "rope_scaling", "rope_parameters"),
    biases={**dict.fromkeys(llama.LLAMA_BIASES, False), **dict.fromkeys("qkvo", "attention_bias")},
    qk_norm=True,
    qk_norm_over="all",
    experts=OLMOE,
)
