"""Qwen2 and Qwen2.5: the Llama layout (pre-RMSNorm, RoPE, grouped-query attention, SwiGLU,
final norm and LM head, ``Qwen2ForCausalLM`` tensor names) with biases on q, k and v and on no
other layer, as transformers builds them (it reads no ``attention_bias``): a checkpoint
lacking one of the three, or with another, is refused by name. Sliding-window layers
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
)
from attention_explorer.pretrained.model_errors import ModelError


def check_layer_types(config: Mapping) -> None:
    """Refuse a ``layer_types`` list with any layer other than ``full_attention`` (Qwen2's
    and Qwen3's rule: the message names the config's model_type)."""
    kinds = config.get("layer_types") or ()
    other = sorted({str(k) for k in kinds} - {"full_attention"})
    if other:
        family = str(config.get("model_type", "qwen2")).capitalize()
        raise ModelError(
            "config",
            f"config.json sets layer_types with {', '.join(other)}, which {family} support here "
            "does not implement (supported: full_attention)",
        )


ARCHITECTURE = replace(
    LLAMA,
    family="qwen2",
    label="Qwen2/Qwen2.5 decoders (qwen2)",
    model_types=("qwen2",),
    sizes={**LLAMA_SIZES, "max_positions": ("max_position_embeddings", 32768)},
    accepted={**LLAMA_ACCEPTED, "use_sliding_window": (False,)},
    reads=("rope_theta", "rope_scaling", "sliding_window", "max_window_layers"),
    extra_check=check_layer_types,
    biases={**dict.fromkeys(LLAMA_BIASES, False), **dict.fromkeys("qkv", True)},
)
