"""gpt-oss (``GptOssForCausalLM``, transformers 5.24's ``modeling_gpt_oss``): the Llama
layout (pre-RMSNorm, RoPE, grouped-query attention, final norm and LM head, the same tensor
names) with what gpt-oss adds:

- attention sinks: each layer's ``self_attn.sinks`` holds one learned logit per query head;
  every softmax row runs over the row's scores and that logit, and the logit's share is
  dropped, so each row's weights sum to 1 − the sink's weight (``Architecture.attention_sinks``;
  the engine's ``sink_weight`` stage shows the share);
- biases on q, k, v and o (``attention_bias``, true when absent);
- alternating sliding and full layers: ``layer_types`` (when absent, even layers
  ``sliding_attention``, odd ones ``full_attention``, as ``GptOssConfig`` fills it); a sliding
  layer's query i sees key j when ``0 <= i - j < sliding_window`` (128 when absent);
- YaRN RoPE: ``rope_parameters`` (or ``rope_scaling``) as written, their ``truncate`` key
  read (false in gpt-oss: the blend's bounds are not rounded) and YaRN's attention factor
  ``0.1 ln(factor) + 1`` on cos and sin; a config.json without any rope dict gets
  ``GptOssConfig``'s (yarn, factor 32, beta_fast 32, beta_slow 1, truncate false, original
  context 4096) and without any ``rope_theta`` its 150000;
- a mixture of experts in every layer (``pretrained/experts/``'s ``GPT_OSS`` plan: a biased
  router, softmax over the top-k logits, clamped SwiGLU experts with biases).

Quantized checkpoints (the Hub's MXFP4 ``quantization_config``) are refused by name, as are
sinks missing from the file, a ``layer_types`` entry other than the two and a sliding layer
without a window.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from attention_explorer.pretrained.architecture import SINK_TENSOR
from attention_explorer.pretrained.experts.plans import GPT_OSS
from attention_explorer.pretrained.families import llama
from attention_explorer.pretrained.families.gemma2 import alternating
from attention_explorer.pretrained.layer_plan import (
    LayerKind,
    layer_types,
    positive,
    sliding_windows,
)

#: ``GptOssConfig``'s RoPE when config.json names none (transformers 5.24).
GPT_OSS_ROPE = {
    "rope_type": "yarn",
    "factor": 32.0,
    "beta_fast": 32.0,
    "beta_slow": 1.0,
    "truncate": False,
    "original_max_position_embeddings": 4096,
    "rope_theta": 150000.0,
}


def _rope_defaults(config: Mapping) -> dict | None:
    """The rope keys ``GptOssConfig`` fills in when config.json leaves them out: its yarn
    dict without any rope dict, its base without any ``rope_theta``; None when all given."""
    dicts = [config.get(key) for key in ("rope_scaling", "rope_parameters")]
    dicts = [d for d in dicts if isinstance(d, Mapping)]
    if not dicts:
        return {"rope_parameters": dict(GPT_OSS_ROPE)}
    if config.get("rope_theta") is None and all(d.get("rope_theta") is None for d in dicts):
        return {"rope_theta": GPT_OSS_ROPE["rope_theta"]}
    return None


def gpt_oss_layers(config: Mapping) -> tuple[LayerKind, ...]:
    """Each layer's window (``sliding_window`` on the ``sliding_attention`` layers) and the
    rope keys the config class fills in."""
    kinds = layer_types(config, int(config["num_hidden_layers"]), alternating, "gpt-oss")
    window = positive(config, "sliding_window", integer=True, default=128)
    windows = sliding_windows(kinds, window, "sliding_window is null")
    rope = _rope_defaults(config)
    return tuple(LayerKind(window=w, rope=rope) for w in windows)


_ATTENTION_ONLY = {
    role: name
    for role, name in llama.LLAMA_TENSORS.items()
    if role not in ("ffn_gate", "ffn_in", "ffn_out")  # the experts' own names instead
}

ARCHITECTURE = replace(
    llama.ARCHITECTURE,
    family="gpt_oss",
    label="gpt-oss decoders (gpt_oss)",
    model_types=("gpt_oss",),
    eps_default=1e-5,
    sizes={
        **llama.LLAMA_SIZES,
        "head_dim": ("head_dim", 64),
        "max_positions": ("max_position_embeddings", 131072),
    },
    tensors={**_ATTENTION_ONLY, "sinks": SINK_TENSOR},
    accepted={**llama.LLAMA_ACCEPTED, "attention_bias": (True, False)},
    reads=("rope_theta", "rope_scaling", "rope_parameters", "sliding_window", "layer_types"),
    layer_plan=gpt_oss_layers,
    biases=dict.fromkeys("qkvo", "attention_bias"),
    attention_sinks=True,
    experts=GPT_OSS,
)
