"""Gemma (``GemmaForCausalLM``): the Llama layout (pre-RMSNorm, RoPE, grouped-query attention,
a gated feed-forward, final norm and LM head, the same tensor names) with Gemma's own
arithmetic, as transformers' ``modeling_gemma`` computes it:

- every RMSNorm multiplies by ``1 + w`` (the weights are stored as offsets from 1);
- the embeddings are multiplied by ``sqrt(hidden_size)``, cast to the hidden dtype;
- ``head_dim`` comes from the config (256 by default) and may differ from hidden / heads;
- the feed-forward is ``down(gelu_tanh(gate(x)) * up(x))``: ``hidden_act`` ``gelu`` is read as
  the tanh approximation, as transformers' ``GemmaConfig`` rewrites it;
- the output head is tied to the word table unless ``tie_word_embeddings`` is false.

``attention_bias`` puts a bias on q, k, v and o; the feed-forward has none. A bidirectional
Gemma (``use_bidirectional_attention: true``) is refused by name.
"""

from __future__ import annotations

from attention_explorer.pretrained.architecture import Architecture
from attention_explorer.pretrained.families import llama


def embedding_scale(config) -> float:
    """``hidden_size ** 0.5``, as transformers computes Gemma's normaliser."""
    return float(config["hidden_size"]) ** 0.5


#: What every Gemma generation shares: the norms' 1 + w, the embedding scale, the tanh GELU.
GEMMA_COMMON = dict(
    norm="rmsnorm",
    eps_key="rms_norm_eps",
    eps_default=1e-6,
    mlp="gated",
    activation_default="gelu_pytorch_tanh",
    positions="rotary",
    prefixes=("model.", ""),
    head="lm",
    norm_offset=1.0,
    embed_scale=embedding_scale,
    biases={
        **dict.fromkeys(("q", "k", "v", "o"), "attention_bias"),
        **dict.fromkeys(("ffn_gate", "ffn_in", "ffn_out"), False),
    },
)

#: Keys whose values other than these change the numbers and are not implemented.
GEMMA_ACCEPTED = {
    "tie_word_embeddings": (True, False),
    "attention_bias": (False, True),
    "use_bidirectional_attention": (None, False),
}

ARCHITECTURE = Architecture(
    family="gemma",
    label="Gemma decoders (gemma)",
    model_types=("gemma",),
    sizes={
        **llama.LLAMA_SIZES,
        "head_dim": ("head_dim", 256),
        "max_positions": ("max_position_embeddings", 8192),
    },
    tensors=llama.LLAMA_TENSORS,
    accepted=GEMMA_ACCEPTED,
    reads=("rope_theta", "rope_scaling", "rope_parameters"),
    activation_key="hidden_act",
    activation_aliases={"gelu": "gelu_pytorch_tanh"},
    **GEMMA_COMMON,
)
