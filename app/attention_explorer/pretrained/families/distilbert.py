"""DistilBERT (``DistilBertModel``, ``DistilBertForMaskedLM``): BERT's post-LayerNorm encoder
with its own names and sizes, as transformers saves them:

- sizes ``dim``, ``n_heads``, ``n_layers``, ``hidden_dim``; the activation ``activation``;
  every LayerNorm's epsilon is fixed at 1e-12 (no config key sets it);
- learned positions and no token types (``distilbert.embeddings.…``), then
  ``embeddings.LayerNorm``;
- per layer ``attention.q_lin``/``k_lin``/``v_lin``/``out_lin``, ``sa_layer_norm``,
  ``ffn.lin1``/``lin2`` and ``output_layer_norm``;
- the masked-LM head ``vocab_transform`` (dense), the activation, ``vocab_layer_norm`` and
  ``vocab_projector`` (tied to the word table unless ``tie_word_embeddings`` is false) with
  its bias.

``sinusoidal_pos_embds`` (a fixed sinusoidal table in place of the learned one) is refused by
name.
"""

from __future__ import annotations

from attention_explorer.pretrained.architecture import Architecture

_L = "transformer.layer.{i}."

ARCHITECTURE = Architecture(
    family="distilbert",
    label="DistilBERT encoders (distilbert)",
    model_types=("distilbert",),
    norm_placement="post",
    eps_key="(none: DistilBERT's LayerNorms use 1e-12)",  # no config key sets it
    eps_default=1e-12,
    activation_key="activation",
    activation_default="gelu",
    causal=False,
    sizes={
        "layers": ("n_layers", 6),
        "heads": ("n_heads", 12),
        "d_model": ("dim", 768),
        "d_ff": ("hidden_dim", 3072),
        "vocab": ("vocab_size", 30522),
        "max_positions": ("max_position_embeddings", 512),
    },
    tensors={
        "word": "embeddings.word_embeddings.weight",
        "position": "embeddings.position_embeddings.weight",
        "embed_norm": "embeddings.LayerNorm",
        "q": _L + "attention.q_lin",
        "k": _L + "attention.k_lin",
        "v": _L + "attention.v_lin",
        "o": _L + "attention.out_lin",
        "attn_norm": _L + "sa_layer_norm",
        "ffn_norm": _L + "output_layer_norm",
        "ffn_in": _L + "ffn.lin1",
        "ffn_out": _L + "ffn.lin2",
        "mlm_dense": "vocab_transform",
        "mlm_norm": "vocab_layer_norm",
        "mlm_decoder": "vocab_projector.weight",
        "mlm_decoder_bias": "vocab_projector.bias",
    },
    prefixes=("distilbert.", ""),
    accepted={"sinusoidal_pos_embds": (False,), "tie_word_embeddings": (True, False)},
    head="mlm",
)
