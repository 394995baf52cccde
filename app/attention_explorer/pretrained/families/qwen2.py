"""Qwen2 and Qwen2.5: the Llama layout (pre-RMSNorm, RoPE, grouped-query attention, SwiGLU,
final norm and LM head, ``Qwen2ForCausalLM`` tensor names) with biases on q, k and v and on no
other layer, as transformers builds them (it reads no ``attention_bias``): a checkpoint
lacking one of the three, or with another, is refused by name.

Sliding-window layers as ``Qwen2Config`` sets them up: with ``use_sliding_window: true`` the
layers from ``max_window_layers`` on (28 when absent) are ``sliding_attention`` and see the
last ``sliding_window`` keys (4096 when absent; query i sees key j when ``0 <= i - j <
window``), the earlier ones every earlier key; a ``layer_types`` list in config.json (as
transformers 5 writes it) says which layers slide instead. With ``use_sliding_window: false``
there is no window, and a ``layer_types`` that still makes a layer slide is refused by name
(transformers has no window to give it); so is any other layer type.
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
from attention_explorer.pretrained.layer_plan import (
    LayerKind,
    layer_types,
    positive,
    sliding_windows,
)
from attention_explorer.pretrained.model_errors import ModelError


def check_layer_types(config: Mapping) -> None:
    """Refuse a ``layer_types`` list with any layer other than ``full_attention`` (Qwen3's
    rule: the message names the config's model_type)."""
    kinds = config.get("layer_types") or ()
    other = sorted({str(k) for k in kinds} - {"full_attention"})
    if other:
        family = str(config.get("model_type", "qwen2")).capitalize()
        raise ModelError(
            "config",
            f"config.json sets layer_types with {', '.join(other)}, which {family} support here "
            "does not implement (supported: full_attention)",
        )


def _flag(config: Mapping, key: str) -> bool:
    value = config.get(key, False)
    if not isinstance(value, bool):
        raise ModelError("config", f"config.json sets {key} to {value!r}; expected true or false")
    return value


def _count(config: Mapping, key: str, default: int) -> int:
    value = config.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ModelError("config", f"config.json sets {key} to {value!r}; expected a count >= 0")
    return value


def qwen2_layers(config: Mapping) -> tuple[LayerKind, ...]:
    """Each layer's window, as ``Qwen2Config`` fills ``layer_types`` and ``sliding_window``."""
    use = _flag(config, "use_sliding_window")
    window = positive(config, "sliding_window", integer=True, default=4096) if use else None
    first = _count(config, "max_window_layers", 28)
    kinds = layer_types(
        config,
        int(config["num_hidden_layers"]),
        lambda i: "sliding_attention" if window is not None and i >= first else "full_attention",
        str(config.get("model_type", "qwen2")).capitalize(),
    )
    why = "sliding_window is null" if use else "use_sliding_window is false"
    return tuple(LayerKind(window=w) for w in sliding_windows(kinds, window, why))


ARCHITECTURE = replace(
    LLAMA,
    family="qwen2",
    label="Qwen2/Qwen2.5 decoders (qwen2)",
    model_types=("qwen2",),
    sizes={**LLAMA_SIZES, "max_positions": ("max_position_embeddings", 32768)},
    accepted=LLAMA_ACCEPTED,
    reads=(
        "rope_theta",
        "rope_scaling",
        "use_sliding_window",
        "sliding_window",
        "max_window_layers",
        "layer_types",
    ),
    layer_plan=qwen2_layers,
    biases={**dict.fromkeys(LLAMA_BIASES, False), **dict.fromkeys("qkv", True)},
)
