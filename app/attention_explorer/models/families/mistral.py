"""Mistral: the Llama layout (pre-RMSNorm, RoPE, grouped-query attention, SwiGLU, final norm
and LM head, ``MistralForCausalLM`` tensor names) with ``sliding_window`` as a mask: query i
sees key j when ``j <= i`` and ``i - j < sliding_window``, in every layer, as transformers
applies it. ``sliding_window: null`` is plain causal attention.
"""

from __future__ import annotations

from attention_explorer.models.architecture import Architecture
from attention_explorer.models.families.llama import LLAMA_ACCEPTED, LLAMA_SIZES, LLAMA_TENSORS

ARCHITECTURE = Architecture(
    family="mistral",
    label="Mistral decoders (mistral)",
    model_types=("mistral",),
    norm="rmsnorm",
    norm_placement="pre",
    eps_key="rms_norm_eps",
    eps_default=1e-6,
    mlp="gated",
    activation_key="hidden_act",
    activation_default="silu",
    positions="rotary",
    causal=True,
    sizes=LLAMA_SIZES,
    tensors=LLAMA_TENSORS,
    linear_layout="out_in",
    prefixes=("model.", ""),
    accepted=LLAMA_ACCEPTED,
    reads=("rope_theta", "rope_scaling", "sliding_window"),
    head="lm",
    window_key="sliding_window",
)
