"""Mistral: the Llama layout (pre-RMSNorm, RoPE, grouped-query attention, SwiGLU, final norm
and LM head, ``MistralForCausalLM`` tensor names) with ``sliding_window`` as a mask: query i
sees key j when ``j <= i`` and ``i - j < sliding_window``, in every layer, as transformers
applies it. ``sliding_window: null`` is plain causal attention. No layer has a bias
(transformers' Mistral reads no ``attention_bias``): a checkpoint with one is refused by name.
"""

from __future__ import annotations

from dataclasses import replace

from attention_explorer.pretrained.families.llama import (
    ARCHITECTURE as LLAMA,
    LLAMA_ACCEPTED,
    LLAMA_BIASES,
)

ARCHITECTURE = replace(
    LLAMA,
    family="mistral",
    label="Mistral decoders (mistral)",
    model_types=("mistral",),
    accepted=LLAMA_ACCEPTED,
    reads=("rope_theta", "rope_scaling", "sliding_window"),
    window_key="sliding_window",
    biases=dict.fromkeys(LLAMA_BIASES, False),
)
