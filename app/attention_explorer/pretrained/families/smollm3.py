"""SmolLM3 (``SmolLM3ForCausalLM``): the Llama layout (pre-RMSNorm, RoPE, grouped-query
attention, SwiGLU, final norm and LM head, the same tensor names, ``attention_bias`` and
``mlp_bias``) with layers that use no positions, as transformers' ``modeling_smollm3`` runs
them:

- NoPE layers: ``no_rope_layers`` lists, for each layer, 1 where RoPE rotates its q and k and
  0 where it does not (when absent, every ``no_rope_layer_interval``-th layer, 4 by default,
  is a NoPE layer); a NoPE layer's scores see no position at all but the causal mask;
- sliding windows: with ``use_sliding_window: true`` and a ``sliding_window``, the NoPE layers
  are ``sliding_attention`` (a ``layer_types`` list in config.json says which instead) and see
  the last ``sliding_window`` keys.

``tie_word_embeddings`` defaults to true. A ``layer_types`` that makes a layer slide while
``use_sliding_window`` is false (transformers' eager and flash attention would then disagree)
or without a window, a ``no_rope_layers`` of another length or with other values, and any
other layer type are refused by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from attention_explorer.pretrained.families import llama
from attention_explorer.pretrained.layer_plan import (
    LayerKind,
    layer_types,
    positive,
    sliding_windows,
)
from attention_explorer.pretrained.model_errors import ModelError


def rope_layers(config: Mapping, n_layers: int) -> tuple[bool, ...]:
    """Whether RoPE rotates each layer's q and k: ``no_rope_layers`` (1 yes, 0 no), or every
    ``no_rope_layer_interval``-th layer without, as ``SmolLM3Config`` fills it."""
    given = config.get("no_rope_layers")
    if given is None:
        interval = int(positive(config, "no_rope_layer_interval", integer=True, default=4))
        return tuple((i + 1) % interval != 0 for i in range(n_layers))
    if (
        not isinstance(given, list)
        or len(given) != n_layers
        or any(isinstance(v, bool) or v not in (0, 1) for v in given)
    ):
        raise ModelError(
            "config",
            f"config.json's no_rope_layers must list 1 (RoPE) or 0 (no RoPE) for each of its "
            f"{n_layers} layers",
        )
    return tuple(bool(v) for v in given)


def smollm3_layers(config: Mapping) -> tuple[LayerKind, ...]:
    """Each layer's RoPE (none in a NoPE layer) and window."""
    n = int(config["num_hidden_layers"])
    rotary = rope_layers(config, n)
    use = config.get("use_sliding_window", False)
    if not isinstance(use, bool):
        raise ModelError(
            "config", f"config.json sets use_sliding_window to {use!r}; expected true or false"
        )
    window = positive(config, "sliding_window", integer=True)
    slides = use and window is not None
    kinds = layer_types(
        config,
        n,
        lambda i: "sliding_attention" if slides and not rotary[i] else "full_attention",
        "SmolLM3",
    )
    why = "sliding_window is null" if use else "use_sliding_window is false"
    windows = sliding_windows(kinds, window if use else None, why)
    return tuple(LayerKind(window=w, rotary=r) for w, r in zip(windows, rotary))


ARCHITECTURE = replace(
    llama.ARCHITECTURE,
    family="smollm3",
    label="SmolLM3 decoders (smollm3)",
    model_types=("smollm3",),
    sizes={**llama.LLAMA_SIZES, "max_positions": ("max_position_embeddings", 32768)},
    accepted={
        "tie_word_embeddings": (True, False),
        "attention_bias": (False, True),
        "mlp_bias": (False, True),
    },
    reads=(
        "rope_theta",
        "rope_scaling",
        "rope_parameters",
        "no_rope_layers",
        "no_rope_layer_interval",
        "use_sliding_window",
        "sliding_window",
        "layer_types",
    ),
    layer_plan=smollm3_layers,
)
