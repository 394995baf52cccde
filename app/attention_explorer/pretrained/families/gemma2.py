"""Gemma 2 (``Gemma2ForCausalLM``): Gemma (RMSNorms of ``1 + w``, embeddings times
``sqrt(hidden_size)``, the config's ``head_dim``, a gated tanh-GELU feed-forward,
``hidden_activation``) with what transformers' ``modeling_gemma2`` adds:

- the score scale ``query_pre_attn_scalar ** -0.5`` (256 when absent), not ``1/sqrt(d_k)``;
- ``attn_logit_softcapping`` (50 when absent, null: off): the scaled scores become
  ``cap * tanh(scores / cap)`` before the mask; ``final_logit_softcapping`` (30 when absent)
  does the same to the logits;
- sandwich norms: ``input_layernorm`` before the attention and ``post_attention_layernorm`` on
  its output before the residual, ``pre_feedforward_layernorm`` and
  ``post_feedforward_layernorm`` around the feed-forward;
- local and global layers: ``layer_types`` (when absent, even layers ``sliding_attention``,
  odd ones ``full_attention``, as ``Gemma2Config`` fills it); a sliding layer's query i sees
  key j when ``0 <= i - j < sliding_window`` (4096 when absent).

A bidirectional Gemma 2 (``use_bidirectional_attention: true``) is refused by name; so is a
``layer_types`` entry other than the two, a sliding layer without a window, and any window,
scalar or cap that is not a positive number.
"""

from __future__ import annotations

from collections.abc import Mapping

from attention_explorer.pretrained.architecture import Architecture
from attention_explorer.pretrained.families import llama
from attention_explorer.pretrained.families.gemma import GEMMA_ACCEPTED, GEMMA_COMMON
from attention_explorer.pretrained.layer_plan import (
    LayerKind,
    layer_types,
    positive,
    sliding_windows,
)

_L = "layers.{i}."

#: Gemma 2 and 3's four norms a layer: around the attention and around the feed-forward.
SANDWICH_TENSORS = {
    **llama.LLAMA_TENSORS,
    "attn_norm": _L + "input_layernorm",
    "attn_out_norm": _L + "post_attention_layernorm",
    "ffn_norm": _L + "pre_feedforward_layernorm",
    "ffn_out_norm": _L + "post_feedforward_layernorm",
}

#: Gemma2Config's values for keys config.json leaves out.
GEMMA2_DEFAULTS = {
    "query_pre_attn_scalar": 256,
    "sliding_window": 4096,
    "attn_logit_softcapping": 50.0,
    "final_logit_softcapping": 30.0,
}


def query_pre_attn_scale(config: Mapping, layer: int, d_k: int) -> float:
    """``query_pre_attn_scalar ** -0.5`` (256 when absent), as Gemma 2 and 3 scale scores."""
    return positive(config, "query_pre_attn_scalar", default=256) ** -0.5


def alternating(i: int) -> str:
    """Gemma 2's layer type when config.json lists none: even layers slide, odd ones are
    global."""
    return "sliding_attention" if (i + 1) % 2 else "full_attention"


def gemma2_layers(config: Mapping) -> tuple[LayerKind, ...]:
    """Each layer's window: ``sliding_window`` on the ``sliding_attention`` layers."""
    kinds = layer_types(config, int(config["num_hidden_layers"]), alternating, "Gemma 2")
    window = positive(config, "sliding_window", integer=True, default=4096)
    windows = sliding_windows(kinds, window, "sliding_window is null")
    return tuple(LayerKind(window=w) for w in windows)


ARCHITECTURE = Architecture(
    family="gemma2",
    label="Gemma 2 decoders (gemma2)",
    model_types=("gemma2",),
    sizes={
        **llama.LLAMA_SIZES,
        "head_dim": ("head_dim", 256),
        "max_positions": ("max_position_embeddings", 8192),
    },
    tensors=SANDWICH_TENSORS,
    accepted=GEMMA_ACCEPTED,
    reads=(
        "rope_theta",
        "rope_scaling",
        "rope_parameters",
        "query_pre_attn_scalar",
        "sliding_window",
        "layer_types",
    ),
    activation_key="hidden_activation",
    scale_rule=query_pre_attn_scale,
    score_cap_key="attn_logit_softcapping",
    logit_cap_key="final_logit_softcapping",
    config_defaults=GEMMA2_DEFAULTS,
    layer_plan=gemma2_layers,
    **GEMMA_COMMON,
)
