"""BERT-style encoders (BERT, MiniLM): post-LayerNorm, exact (erf) GELU, learned absolute
positions plus token types, ``nn.Linear`` weights stored ``[out, in]``.

``is_decoder=True`` makes the self-attention causal, as in transformers' ``BertModel``.
A BertForMaskedLM checkpoint carries the prediction head (``cls.predictions``): dense,
activation, LayerNorm, then the word table (tied) or ``decoder.weight``, plus the decoder's
bias: ``cls.predictions.decoder.bias`` when stored (what transformers' decoder adds, tied or
not), else the tied ``cls.predictions.bias``. Untied (``tie_word_embeddings: false``), the
decoder's own weight and bias must be in the file.
"""

from __future__ import annotations

from attention_explorer.pretrained.architecture import STANDARD_SIZES, Architecture

_L = "encoder.layer.{i}."

ARCHITECTURE = Architecture(
    family="bert",
    label="BERT-style encoders (bert: BERT, MiniLM)",
    model_types=("bert",),
    norm_placement="post",
    eps_key="layer_norm_eps",
    eps_default=1e-12,
    causal=False,
    causal_key="is_decoder",
    sizes={**STANDARD_SIZES, "max_positions": ("max_position_embeddings", 512)},
    tensors={
        "word": "embeddings.word_embeddings.weight",
        "position": "embeddings.position_embeddings.weight",
        "token_type": "embeddings.token_type_embeddings.weight",
        "embed_norm": "embeddings.LayerNorm",
        "q": _L + "attention.self.query",
        "k": _L + "attention.self.key",
        "v": _L + "attention.self.value",
        "o": _L + "attention.output.dense",
        "attn_norm": _L + "attention.output.LayerNorm",
        "ffn_norm": _L + "output.LayerNorm",
        "ffn_in": _L + "intermediate.dense",
        "ffn_out": _L + "output.dense",
        "mlm_dense": "cls.predictions.transform.dense",
        "mlm_norm": "cls.predictions.transform.LayerNorm",
        "mlm_decoder": "cls.predictions.decoder.weight",
        "mlm_bias": "cls.predictions.bias",
        "mlm_decoder_bias": "cls.predictions.decoder.bias",
    },
    prefixes=("", "bert.", "model."),
    accepted={
        "position_embedding_type": ("absolute",),
        # cross-attention layers only run on an encoder's states, which the explorer never has
        "add_cross_attention": (False, True),
    },
    reads=("type_vocab_size",),
    head="mlm",
)
