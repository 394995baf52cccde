"""GPT-2-style decoders: pre-LayerNorm, causal, learned positions, ``Conv1D`` weights stored
``[in, out]`` with Q, K and V fused in ``c_attn``, a final LayerNorm ``ln_f`` and the output
head tied to the word table (or ``lm_head.weight`` when untied).

Scale rule, as transformers' GPT-2: scores are divided by ``sqrt(d_k)`` unless
``scale_attn_weights`` is false, and also by ``layer + 1`` when
``scale_attn_by_inverse_layer_idx`` is true.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from attention_explorer.pretrained.architecture import Architecture


def gpt2_scale(config: Mapping, layer: int, d_k: int) -> float:
    """GPT-2's score factor for ``layer``; see the module docstring."""
    factor = 1.0 / math.sqrt(d_k) if config.get("scale_attn_weights", True) else 1.0
    if config.get("scale_attn_by_inverse_layer_idx", False):
        factor /= float(layer + 1)
    return factor


_L = "h.{i}."

ARCHITECTURE = Architecture(
    family="gpt2",
    label="GPT-2-style decoders (gpt2)",
    model_types=("gpt2",),
    eps_key="layer_norm_epsilon",
    eps_default=1e-5,
    activation_key="activation_function",
    activation_default="gelu_new",
    sizes={
        "layers": ("n_layer", 12),
        "heads": ("n_head", 12),
        "d_model": ("n_embd", 768),
        "d_ff": ("n_inner", None),  # None: 4 * d_model
        "max_positions": ("n_positions", 1024),
        "vocab": ("vocab_size", 50257),
    },
    tensors={
        "word": "wte.weight",
        "position": "wpe.weight",
        "final_norm": "ln_f",
        "qkv": _L + "attn.c_attn",
        "o": _L + "attn.c_proj",
        "attn_norm": _L + "ln_1",
        "ffn_norm": _L + "ln_2",
        "ffn_in": _L + "mlp.c_fc",
        "ffn_out": _L + "mlp.c_proj",
        "lm_head": "lm_head.weight",
    },
    linear_layout="in_out",
    prefixes=("", "transformer."),
    scale_rule=gpt2_scale,
    accepted={
        "scale_attn_weights": (True, False),
        "scale_attn_by_inverse_layer_idx": (False, True),
        # only the order and precision of the score product change: same numbers in float64
        "reorder_and_upcast_attn": (False, True),
        "add_cross_attention": (False, True),
        "tie_word_embeddings": (True, False),
    },
    head="lm",
)
