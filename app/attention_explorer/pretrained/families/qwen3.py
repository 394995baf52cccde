"""Qwen3 (dense, ``Qwen3ForCausalLM``): the Llama layout (pre-RMSNorm, RoPE, grouped-query
attention, SwiGLU, final norm and LM head, the same tensor names) with QK-norm: an RMSNorm
with its own ``[head_dim]`` weights (``self_attn.q_norm``, ``self_attn.k_norm``, shared by all
heads, epsilon ``rms_norm_eps``) on each head's q and k after the projections and before RoPE,
as transformers' ``Qwen3Attention`` applies it.

``attention_bias`` puts a bias on q, k, v and o (transformers builds all four from it); the
feed-forward has none. A checkpoint whose tensors disagree (a bias the config rules out, a
missing ``q_norm``/``k_norm``) is refused naming the tensor. ``head_dim`` defaults to 128 and
``tie_word_embeddings`` to false, as in ``Qwen3Config``. As for Qwen2, sliding-window layers
are refused by name (:func:`.qwen2.check_layer_types` and ``use_sliding_window``).
"""

from __future__ import annotations

from dataclasses import replace

from attention_explorer.pretrained.families import llama
from attention_explorer.pretrained.families.qwen2 import check_layer_types

_ATTN = "layers.{i}.self_attn."


ARCHITECTURE = replace(
    llama.ARCHITECTURE,
    family="qwen3",
    label="Qwen3 decoders (qwen3)",
    model_types=("qwen3",),
    sizes={
        **llama.LLAMA_SIZES,
        "head_dim": ("head_dim", 128),
        "max_positions": ("max_position_embeddings", 32768),
    },
    tensors={**llama.LLAMA_TENSORS, "q_norm": _ATTN + "q_norm", "k_norm": _ATTN + "k_norm"},
    accepted={
        **llama.LLAMA_ACCEPTED,
        "attention_bias": (False, True),
        "use_sliding_window": (False,),
    },
    reads=("rope_theta", "rope_scaling", "sliding_window", "max_window_layers", "layer_types"),
    extra_check=check_layer_types,
    biases={**dict.fromkeys(llama.LLAMA_BIASES, False), **dict.fromkeys("qkvo", "attention_bias")},
    qk_norm=True,
)
