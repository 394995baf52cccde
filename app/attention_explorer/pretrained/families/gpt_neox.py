"""GPT-NeoX and Pythia (``GPTNeoXForCausalLM``): pre-LayerNorm, causal, partial rotary
positions, a plain GELU feed-forward, the final LayerNorm and an untied output head
(``embed_out``), tensor names as transformers saves them (``gpt_neox.layers.N.…``).

- **Partial rotary**: RoPE turns only the first ``rotary_pct`` (default 0.25; transformers 5
  writes it as ``rope_parameters.partial_rotary_factor``) of each head's dimensions, with
  base ``rotary_emb_base`` (or the rope dict's ``rope_theta``); the rest pass unchanged.
- **Fused q, k, v per head**: ``attention.query_key_value`` ``[3 d, d]`` whose outputs are
  laid out ``[heads, 3, d_k]`` (each head's q, k and v side by side, as transformers' view
  and chunk read them), unlike GPT-2's ``c_attn``; split here into the usual W_Q, W_K, W_V.
- **Parallel residual** (``use_parallel_residual``, default true):
  ``h + attn(ln_1(h)) + mlp(ln_2(h))``; false: ``h1 = h + attn(ln_1(h))``,
  ``h1 + mlp(ln_2(h1))``.
- ``attention_bias`` (default true) puts a bias on query_key_value and dense; the
  feed-forward always has one. A checkpoint whose tensors disagree is refused by name.
  ``head_dim`` is not read by GPT-NeoX's attention (``hidden_size / heads``), so a config
  that sets one is refused by name.
"""

from __future__ import annotations

from attention_explorer.pretrained.architecture import STANDARD_SIZES, Architecture

_L = "layers.{i}."

ARCHITECTURE = Architecture(
    family="gpt_neox",
    label="GPT-NeoX/Pythia decoders (gpt_neox)",
    model_types=("gpt_neox",),
    eps_key="layer_norm_eps",
    eps_default=1e-5,
    activation_default="gelu",
    positions="rotary",
    sizes={**STANDARD_SIZES, "max_positions": ("max_position_embeddings", 2048)},
    tensors={
        "word": "embed_in.weight",
        "final_norm": "final_layer_norm",
        "qkv": _L + "attention.query_key_value",
        "o": _L + "attention.dense",
        "attn_norm": _L + "input_layernorm",
        "ffn_norm": _L + "post_attention_layernorm",
        "ffn_in": _L + "mlp.dense_h_to_4h",
        "ffn_out": _L + "mlp.dense_4h_to_h",
        "lm_head": "embed_out.weight",
    },
    prefixes=("gpt_neox.", ""),
    accepted={
        "tie_word_embeddings": (False, True),
        "use_parallel_residual": (True, False),
        "attention_bias": (True, False),
        "head_dim": (None,),
    },
    reads=(
        "rope_theta",
        "rope_scaling",
        "rope_parameters",
        "rotary_pct",
        "rotary_emb_base",
        "partial_rotary_factor",
    ),
    head="lm",
    biases={"qkv": "attention_bias", "o": "attention_bias"},
    partial_rotary=("rotary_pct", 0.25),
    parallel_residual=("use_parallel_residual", True),
    qkv_layout="heads",
)
