"""Phi-3 and Phi-3.5 (``Phi3ForCausalLM``): the Llama layout (pre-RMSNorm, RoPE,
grouped-query attention, SwiGLU, final norm, untied LM head) with fused projections, as
transformers saves and splits them: ``self_attn.qkv_proj`` (all q, then k, then v) and
``mlp.gate_up_proj`` (``chunk(2)``: the gate first, then the up projection); no biases.

RoPE: ``default`` or ``longrope`` (``su`` and ``yarn`` are read as ``longrope``, as
``Phi3Config`` does; any other type is refused by name), with the pretraining context from
``original_max_position_embeddings`` (top level, default 4096, as in ``Phi3Config``), and
``partial_rotary_factor`` when given. ``sliding_window`` (when set) hides keys that many
positions back, as for Mistral.
"""

from __future__ import annotations

from attention_explorer.pretrained.architecture import Architecture
from attention_explorer.pretrained.families.llama import LLAMA_SIZES, LLAMA_TENSORS

_L = "layers.{i}."

_TENSORS = {
    role: name
    for role, name in LLAMA_TENSORS.items()
    if role not in ("q", "k", "v", "ffn_gate", "ffn_in")
}

ARCHITECTURE = Architecture(
    family="phi3",
    label="Phi-3 decoders (phi3)",
    model_types=("phi3",),
    norm="rmsnorm",
    eps_key="rms_norm_eps",
    eps_default=1e-5,
    mlp="gated",
    activation_default="silu",
    positions="rotary",
    sizes={**LLAMA_SIZES, "max_positions": ("max_position_embeddings", 4096)},
    tensors={
        **_TENSORS,
        "qkv": _L + "self_attn.qkv_proj",
        "ffn_gate_up": _L + "mlp.gate_up_proj",
    },
    prefixes=("model.", ""),
    accepted={"tie_word_embeddings": (False, True)},
    reads=(
        "rope_theta",
        "rope_scaling",
        "rope_parameters",
        "partial_rotary_factor",
        "original_max_position_embeddings",
    ),
    head="lm",
    window_key="sliding_window",
    biases=dict.fromkeys(("qkv", "o", "ffn_gate_up", "ffn_out"), False),
    partial_rotary=("partial_rotary_factor", 1.0),
    rope_kinds={"default": "default", "longrope": "longrope", "su": "longrope", "yarn": "longrope"},
    original_context=4096,
)
