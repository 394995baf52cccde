"""OLMo 2 (``Olmo2ForCausalLM``): the Llama layout (RoPE, grouped-query attention, SwiGLU,
final norm and LM head, the same tensor names) with the norms moved, as transformers'
``modeling_olmo2`` computes it:

- no norm before a sublayer: each sublayer's output is RMS-normed before the residual,
  ``h + norm(attention(h))`` (``post_attention_layernorm``) and ``h + norm(FFN(h))``
  (``post_feedforward_layernorm``);
- QK-norm over the whole projection: ``q_norm`` (``[heads * head_dim]``) and ``k_norm``
  (``[kv_heads * head_dim]``) RMS-normalise all of a token's q (and k) together, after the
  projections, before they are split into heads and rotated.

``attention_bias`` puts a bias on q, k, v and o; the feed-forward has none;
``tie_word_embeddings`` defaults to false. Tensors that disagree (a missing norm, a QK-norm of
one head's width, a bias the config rules out) are refused naming the tensor.
"""

from __future__ import annotations

from attention_explorer.pretrained.architecture import Architecture
from attention_explorer.pretrained.families import llama

_L = "layers.{i}."

ARCHITECTURE = Architecture(
    family="olmo2",
    label="OLMo 2 decoders (olmo2)",
    model_types=("olmo2",),
    norm="rmsnorm",
    norm_placement="output",
    eps_key="rms_norm_eps",
    eps_default=1e-5,
    mlp="gated",
    activation_default="silu",
    positions="rotary",
    sizes=llama.LLAMA_SIZES,
    tensors={
        **{r: t for r, t in llama.LLAMA_TENSORS.items() if r not in ("attn_norm", "ffn_norm")},
        "attn_out_norm": _L + "post_attention_layernorm",
        "ffn_out_norm": _L + "post_feedforward_layernorm",
        "q_norm": _L + "self_attn.q_norm",
        "k_norm": _L + "self_attn.k_norm",
    },
    prefixes=("model.", ""),
    accepted={"tie_word_embeddings": (False, True), "attention_bias": (False, True)},
    reads=("rope_theta", "rope_scaling", "rope_parameters"),
    head="lm",
    biases={
        **dict.fromkeys(("q", "k", "v", "o"), "attention_bias"),
        **dict.fromkeys(("ffn_gate", "ffn_in", "ffn_out"), False),
    },
    qk_norm=True,
    qk_norm_over="all",
)
