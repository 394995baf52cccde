"""RoBERTa (``RobertaModel``, ``RobertaForMaskedLM``): BERT's encoder layout (post-LayerNorm,
exact GELU, learned absolute positions plus token types, ``nn.Linear`` weights) under the
prefix ``roberta.``, with two differences transformers makes:

- **positions** are counted from ``padding_idx + 1`` (``pad_token_id``, default 1) over the
  tokens that are not padding, and a pad token takes position ``padding_idx``
  (``create_position_ids_from_input_ids``), so a text of n tokens reads rows
  ``pad + 1 .. pad + n`` of the table (and at most ``max_position_embeddings - pad - 1``
  tokens fit);
- **the masked-LM head** is ``lm_head``: ``dense``, the exact GELU (whatever ``hidden_act``
  says), ``layer_norm``, then ``decoder`` (tied to the word table unless
  ``tie_word_embeddings`` is false) plus its bias ``lm_head.decoder.bias`` (tied to
  ``lm_head.bias``, which is read when the decoder's is not stored).
"""

from __future__ import annotations

from dataclasses import replace

from attention_explorer.pretrained.families import bert

ARCHITECTURE = replace(
    bert.ARCHITECTURE,
    family="roberta",
    label="RoBERTa encoders (roberta)",
    model_types=("roberta",),
    tensors={
        **{
            role: name
            for role, name in bert.ARCHITECTURE.tensors.items()
            if not role.startswith("mlm_")
        },
        "mlm_dense": "lm_head.dense",
        "mlm_norm": "lm_head.layer_norm",
        "mlm_decoder": "lm_head.decoder.weight",
        "mlm_bias": "lm_head.bias",
        "mlm_decoder_bias": "lm_head.decoder.bias",
    },
    prefixes=("roberta.", ""),
    reads=("type_vocab_size", "pad_token_id"),
    position_padding=("pad_token_id", 1),
    head_activation="gelu",
)
