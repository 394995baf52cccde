"""Phi-1, Phi-1.5 and Phi-2 (``PhiForCausalLM``): one LayerNorm per layer shared by a
parallel attention and feed-forward (``h + attn(ln(h)) + mlp(ln(h))``), partial rotary
positions (``partial_rotary_factor``, default 0.5: the first half of each head's dimensions
turn), separate q/k/v projections and a ``dense`` output projection (all with biases), a
plain ``gelu_new`` feed-forward (``fc1``, ``fc2``), ``final_layernorm`` and an LM head with a
bias (``lm_head.bias``), tensor names as transformers saves them (``model.layers.N.…``).

``qk_layernorm`` (a LayerNorm on each head's q and k) is refused by name: it is not
implemented here.
"""

from __future__ import annotations

from attention_explorer.pretrained.architecture import STANDARD_SIZES, Architecture

_L = "layers.{i}."

ARCHITECTURE = Architecture(
    family="phi",
    label="Phi-1/1.5/2 decoders (phi)",
    model_types=("phi",),
    eps_key="layer_norm_eps",
    eps_default=1e-5,
    activation_default="gelu_new",
    positions="rotary",
    sizes={
        **STANDARD_SIZES,
        "kv_heads": ("num_key_value_heads", None),
        "head_dim": ("head_dim", None),
        "max_positions": ("max_position_embeddings", 2048),
    },
    tensors={
        "word": "embed_tokens.weight",
        "final_norm": "final_layernorm",
        "q": _L + "self_attn.q_proj",
        "k": _L + "self_attn.k_proj",
        "v": _L + "self_attn.v_proj",
        "o": _L + "self_attn.dense",
        "attn_norm": _L + "input_layernorm",
        "ffn_in": _L + "mlp.fc1",
        "ffn_out": _L + "mlp.fc2",
        "lm_head": "lm_head.weight",
    },
    prefixes=("model.", ""),
    accepted={"tie_word_embeddings": (False, True), "qk_layernorm": (False,)},
    reads=("rope_theta", "rope_scaling", "rope_parameters", "partial_rotary_factor"),
    head="lm",
    partial_rotary=("partial_rotary_factor", 0.5),
    parallel_residual=True,
    parallel_norm="shared",
    head_bias=True,
)
