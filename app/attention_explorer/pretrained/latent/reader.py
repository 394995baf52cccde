"""A latent-attention layer's tensors, read by role through the family's record (the
checkpoint reader's :class:`~attention_explorer.pretrained.checkpoint.role_reader.RoleReader`
is handed in; nothing here imports the checkpoint package).

Roles (DeepSeek-V3's names): ``q_a`` (``q_a_proj``, d -> q_lora), ``q_a_norm``
(``q_a_layernorm``, [q_lora]), ``q_b`` (``q_b_proj``, q_lora -> heads·(nope + rope)), or ``q``
(``q_proj``, d -> heads·(nope + rope)) when ``q_lora_rank`` is null; ``kv_a``
(``kv_a_proj_with_mqa``, d -> kv_lora + rope), ``kv_a_norm`` (``kv_a_layernorm``, [kv_lora]),
``kv_b`` (``kv_b_proj``, kv_lora -> heads·(nope + v)). Biases follow the record (``q_a``,
``kv_a`` and ``o`` carry one under ``attention_bias``); a tensor of the other query path is
refused by name (transformers would drop it).
"""

from __future__ import annotations

#: The LayerWeights fields a latent layer fills (None where a path is not used).
LATENT_FIELDS = (
    "W_q_a",
    "b_q_a",
    "q_a_norm",
    "W_q_b",
    "W_kv_a",
    "b_kv_a",
    "kv_a_norm",
    "W_kv_b",
)


def read_latent(r, i: int, d: int, heads: int, plan) -> dict:
    """Layer ``i``'s latent-attention weights (math orientation, ``y = x W + b``) as
    LayerWeights fields: W_Q/b_Q (q_proj, only without a q_lora rank), W_K/W_V/biases None,
    and :data:`LATENT_FIELDS`."""
    qk = heads * plan.qk_dim
    parts = dict.fromkeys(("W_Q", "b_Q", "W_K", "b_K", "W_V", "b_V", *LATENT_FIELDS))
    if plan.q_lora is None:
        for role in ("q_a", "q_b"):
            r.absent(role, i, "config.json sets q_lora_rank null (q is one projection, q_proj)")
        parts["W_Q"], parts["b_Q"] = r.linear("q", i, d, qk)  # [d, h*(nope+rope)]
    else:
        r.absent("q", i, f"config.json sets q_lora_rank {plan.q_lora} (q_a_proj, then q_b_proj)")
        parts["W_q_a"], parts["b_q_a"] = r.linear("q_a", i, d, plan.q_lora)  # [d, q_lora]
        parts["q_a_norm"] = r.norm("q_a_norm", i, plan.q_lora)[0]  # [q_lora]
        parts["W_q_b"], _ = r.linear("q_b", i, plan.q_lora, qk)  # [q_lora, h*(nope+rope)]
    parts["W_kv_a"], parts["b_kv_a"] = r.linear("kv_a", i, d, plan.cache_width())
    parts["kv_a_norm"] = r.norm("kv_a_norm", i, plan.kv_lora)[0]  # [kv_lora]
    parts["W_kv_b"], _ = r.linear("kv_b", i, plan.kv_lora, heads * (plan.nope + plan.v_dim))
    return parts
