"""Gemma 3 text (``Gemma3ForCausalLM``, model_type ``gemma3_text``): Gemma 2's layout (RMSNorms
of ``1 + w``, embeddings times ``sqrt(hidden_size)``, sandwich norms, ``query_pre_attn_scalar``,
local and global layers) with what transformers' ``modeling_gemma3`` changes:

- QK-norm: each head's q and k RMS-normed with ``1 + w`` (``self_attn.q_norm``/``k_norm``,
  ``[head_dim]``) after the projections and before RoPE;
- two RoPEs: sliding layers rotate with ``rope_local_base_freq`` (10 000 when absent) and no
  scaling, global layers with ``rope_theta`` (1 000 000) and ``rope_scaling``; transformers
  5 writes both as ``rope_parameters`` keyed by layer type;
- ``layer_types`` (when absent, every ``sliding_window_pattern``-th layer, 6 by default, is
  global and the rest slide); ``sliding_window`` 4096 when absent;
- no score soft-cap (transformers' Gemma 3 attention does not apply
  ``attn_logit_softcapping``: a value there is refused by name rather than ignored);
  ``final_logit_softcapping`` caps the logits when set (null by default).

A bidirectional Gemma 3 and a ``rope_parameters`` not keyed by layer type are refused by name.
"""

from __future__ import annotations

from collections.abc import Mapping

from attention_explorer.pretrained.architecture import Architecture
from attention_explorer.pretrained.families import llama
from attention_explorer.pretrained.families.gemma import GEMMA_ACCEPTED, GEMMA_COMMON
from attention_explorer.pretrained.families.gemma2 import SANDWICH_TENSORS, query_pre_attn_scale
from attention_explorer.pretrained.layer_plan import (
    LAYER_TYPES,
    LayerKind,
    layer_types,
    positive,
    sliding_windows,
)
from attention_explorer.pretrained.model_errors import ModelError

_ATTN = "layers.{i}.self_attn."

#: Gemma3TextConfig's defaults: the two RoPE bases (global, local).
GLOBAL_THETA, LOCAL_THETA = 1_000_000.0, 10_000.0


def rope_by_type(config: Mapping) -> dict[str, dict]:
    """The RoPE dict of each layer type, as ``Gemma3TextConfig.convert_rope_params_to_dict``
    builds it: ``rope_parameters`` keyed by layer type, or the legacy ``rope_theta``,
    ``rope_scaling`` (global layers) and ``rope_local_base_freq`` (sliding layers)."""
    given = config.get("rope_parameters")
    if given is not None and (not isinstance(given, Mapping) or set(given) - set(LAYER_TYPES)):
        raise ModelError(
            "config",
            "config.json sets rope_parameters without one entry per layer type "
            "(full_attention, sliding_attention), which Gemma 3 support here does not read",
        )
    given = given or {}
    full = dict(given.get("full_attention") or {"rope_type": "default"})
    if isinstance(config.get("rope_scaling"), Mapping):
        full.update(config["rope_scaling"])
    full.setdefault("rope_theta", config.get("rope_theta", GLOBAL_THETA))
    local = dict(given.get("sliding_attention") or {"rope_type": "default"})
    local.setdefault("rope_theta", config.get("rope_local_base_freq", LOCAL_THETA))
    return {"full_attention": full, "sliding_attention": local}


def gemma3_layers(config: Mapping) -> tuple[LayerKind, ...]:
    """Each layer's window (``sliding_window`` on the sliding layers) and the RoPE keys it
    reads (its layer type's)."""
    pattern = int(positive(config, "sliding_window_pattern", integer=True, default=6))
    kinds = layer_types(
        config,
        int(config["num_hidden_layers"]),
        lambda i: "sliding_attention" if (i + 1) % pattern else "full_attention",
        "Gemma 3",
    )
    window = positive(config, "sliding_window", integer=True, default=4096)
    windows = sliding_windows(kinds, window, "sliding_window is null")
    ropes = rope_by_type(config)
    return tuple(
        LayerKind(
            window=w,
            rope={"rope_parameters": ropes[kind], "rope_scaling": None, "rope_theta": None},
        )
        for kind, w in zip(kinds, windows)
    )


ARCHITECTURE = Architecture(
    family="gemma3",
    label="Gemma 3 text decoders (gemma3_text)",
    model_types=("gemma3_text",),
    sizes={
        **llama.LLAMA_SIZES,
        "head_dim": ("head_dim", 256),
        "max_positions": ("max_position_embeddings", 131_072),
    },
    tensors={**SANDWICH_TENSORS, "q_norm": _ATTN + "q_norm", "k_norm": _ATTN + "k_norm"},
    accepted={**GEMMA_ACCEPTED, "attn_logit_softcapping": (None,)},
    reads=(
        "rope_theta",
        "rope_scaling",
        "rope_parameters",
        "rope_local_base_freq",
        "query_pre_attn_scalar",
        "sliding_window",
        "sliding_window_pattern",
        "layer_types",
    ),
    activation_key="hidden_activation",
    scale_rule=query_pre_attn_scale,
    logit_cap_key="final_logit_softcapping",
    layer_plan=gemma3_layers,
    qk_norm=True,
    **GEMMA_COMMON,
)
