"""Qwen3 (dense, ``Qwen3ForCausalLM``): the Llama layout (pre-RMSNorm, RoPE, grouped-query
attention, SwiGLU, final norm and LM head, the same tensor names) with QK-norm: an RMSNorm
with its own ``[head_dim]`` weights (``self_attn.q_norm``, ``self_attn.k_norm``, shared by all
heads, epsilon ``rms_norm_eps``) on each head's q and k after the projections and before RoPE,
as transformers' ``Qwen3Attention`` applies it.

``attention_bias`` puts a bias on q, k, v and o (transformers builds all four from it); the
feed-forward has none. A checkpoint whose tensors disagree (a bias the config rules out, a
missing ``q_norm``/``k_norm``) is refused naming the tensor. ``head_dim`` defaults to 128 and
``tie_word_embeddings`` to false, as in ``Qwen3Config``. Sliding-window layers
(``use_sliding_window: true``, or a ``layer_types`` entry other than ``full_attention``) are
refused by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from attention_explorer.pretrained.families.llama import (
    ARCHITECTURE as LLAMA,
    LLAMA_ACCEPTED,
    LLAMA_BIASES,
    LLAMA_SIZES,
    LLAMA_TENSORS,
)
from attention_explorer.pretrained.model_errors import ModelError

_ATTN = "layers.{i}.self_attn."


def check_layer_types(config: Mapping) -> None:
    """Refuse a ``layer_types`` list with any layer other than ``full_attention``."""
    kinds = config.get("layer_types") or ()
    other = sorted({str(k) for k in kinds} - {"full_attention"})
    if other:
        raise ModelError(
            "config",
            f"config.json sets layer_types with {', '.join(other)}, which Qwen3 support here "
            "does not implement (supported: full_attention)",
        )


ARCHITECTURE = replace(
    LLAMA,
    family="qwen3",
    label="Qwen3 decoders (qwen3)",
    model_types=("qwen3",),
    sizes={
        **LLAMA_SIZES,
        "head_dim": ("head_dim", 128),
        "max_positions": ("max_position_embeddings", 32768),
    },
    tensors={**LLAMA_TENSORS, "q_norm": _ATTN + "q_norm", "k_norm": _ATTN + "k_norm"},
    accepted={**LLAMA_ACCEPTED, "attention_bias": (False, True), "use_sliding_window": (False,)},
    reads=("rope_theta", "rope_scaling", "sliding_window", "max_window_layers", "layer_types"),
    extra_check=check_layer_types,
    biases={**dict.fromkeys(LLAMA_BIASES, False), **dict.fromkeys("qkvo", "attention_bias")},
    qk_norm=True,
)
