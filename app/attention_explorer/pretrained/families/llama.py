"""Llama 2 and 3 (3.1, 3.2 with ``rope_scaling`` type ``llama3``): pre-RMSNorm, causal,
rotary positions (RoPE on q and k per head), grouped-query attention
(``num_key_value_heads``), ``head_dim`` when given, a SwiGLU feed-forward
(``down(silu(gate(x)) * up(x))``), the final norm and the LM head (``lm_head.weight``, or the
word table when ``tie_word_embeddings``). Tensor names as transformers' ``LlamaForCausalLM``
saves them (``model.layers.N.self_attn.q_proj.weight``…).

``attention_bias`` (q, k, v and o) and ``mlp_bias`` (gate, up and down) say which layers carry
a bias, as transformers builds them; a checkpoint whose bias tensors disagree (biases under
``attention_bias: false``, as in Qwen2 weights labelled llama, or a bias missing under
``true``) is refused naming the tensor and the key. Rope scaling types other than ``linear``
and ``llama3`` are refused by name.
"""

from __future__ import annotations

from attention_explorer.pretrained.architecture import STANDARD_SIZES, Architecture

_L = "layers.{i}."

#: The tensor names shared by the Llama-like families (Qwen2, Mistral).
LLAMA_TENSORS = {
    "word": "embed_tokens.weight",
    "final_norm": "norm",
    "q": _L + "self_attn.q_proj",
    "k": _L + "self_attn.k_proj",
    "v": _L + "self_attn.v_proj",
    "o": _L + "self_attn.o_proj",
    "attn_norm": _L + "input_layernorm",
    "ffn_norm": _L + "post_attention_layernorm",
    "ffn_gate": _L + "mlp.gate_proj",
    "ffn_in": _L + "mlp.up_proj",
    "ffn_out": _L + "mlp.down_proj",
    "lm_head": "lm_head.weight",
}

#: The sizes the Llama-like families read from config.json.
LLAMA_SIZES = {
    **STANDARD_SIZES,
    "kv_heads": ("num_key_value_heads", None),
    "head_dim": ("head_dim", None),
    "max_positions": ("max_position_embeddings", 2048),
}

#: Keys every Llama-like family checks. ``pretraining_tp`` and ``attention_dropout`` are not
#: here: the first only splits a product into slices (the same sum; transformers 5 ignores
#: it), the second acts in training only.
LLAMA_ACCEPTED = {
    "tie_word_embeddings": (False, True),
}

#: Llama's biases: ``attention_bias`` on q, k, v and o, ``mlp_bias`` on the feed-forward.
LLAMA_BIASES = {
    **dict.fromkeys(("q", "k", "v", "o"), "attention_bias"),
    **dict.fromkeys(("ffn_gate", "ffn_in", "ffn_out"), "mlp_bias"),
}

ARCHITECTURE = Architecture(
    family="llama",
    label="Llama 2/3 decoders (llama)",
    model_types=("llama",),
    norm="rmsnorm",
    eps_key="rms_norm_eps",
    eps_default=1e-6,
    mlp="gated",
    activation_default="silu",
    positions="rotary",
    sizes=LLAMA_SIZES,
    tensors=LLAMA_TENSORS,
    prefixes=("model.", ""),
    accepted={**LLAMA_ACCEPTED, "attention_bias": (False, True), "mlp_bias": (False, True)},
    reads=("rope_theta", "rope_scaling"),
    head="lm",
    biases=LLAMA_BIASES,
)
