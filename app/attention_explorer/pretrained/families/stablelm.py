"""StableLM (``StableLmForCausalLM``: StableLM-3B-4E1T, StableLM 2): pre-LayerNorm, causal,
partial rotary positions (``partial_rotary_factor``, default 0.25), grouped-query attention,
a SwiGLU feed-forward (``down(silu(gate(x)) * up(x))``, no biases), the final LayerNorm and
an untied LM head, tensor names as transformers saves them (``model.layers.N.…``).

- ``use_qkv_bias`` puts a bias on q, k and v (never on o_proj);
- ``use_parallel_residual``: ``h + attn(ln(h)) + mlp(ln(h))`` with the one
  ``input_layernorm`` (the file then has no ``post_attention_layernorm``); false (the
  default): the usual sequential pre-norm layer;
- ``qk_layernorm`` (a LayerNorm with its own weights per head on q and k) is refused by name:
  it is not implemented here. ``head_dim`` is not read by StableLM's attention
  (``hidden_size / heads``): a config that sets one is refused by name.
"""

from __future__ import annotations

from attention_explorer.pretrained.architecture import Architecture
from attention_explorer.pretrained.families.llama import LLAMA_SIZES, LLAMA_TENSORS

ARCHITECTURE = Architecture(
    family="stablelm",
    label="StableLM decoders (stablelm)",
    model_types=("stablelm",),
    eps_key="layer_norm_eps",
    eps_default=1e-5,
    mlp="gated",
    activation_default="silu",
    positions="rotary",
    sizes={
        **{role: key for role, key in LLAMA_SIZES.items() if role != "head_dim"},
        "max_positions": ("max_position_embeddings", 4096),
    },
    tensors=LLAMA_TENSORS,
    prefixes=("model.", ""),
    accepted={
        "tie_word_embeddings": (False, True),
        "use_qkv_bias": (False, True),
        "use_parallel_residual": (False, True),
        "qk_layernorm": (False,),
        "head_dim": (None,),
    },
    reads=("rope_theta", "rope_scaling", "rope_parameters", "partial_rotary_factor"),
    head="lm",
    biases={
        **dict.fromkeys("qkv", "use_qkv_bias"),
        **dict.fromkeys(("o", "ffn_gate", "ffn_in", "ffn_out"), False),
    },
    partial_rotary=("partial_rotary_factor", 0.25),
    parallel_residual=("use_parallel_residual", False),
    parallel_norm="shared",
)
