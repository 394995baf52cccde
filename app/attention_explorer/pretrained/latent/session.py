"""A latent-attention layer opened in the explorer: the engine's projection mode computes
``X W_Q`` per head and cannot express latent attention (q through a rank and a norm, k and v
up-projected from one normed latent, one rotary key shared by the heads), so the layer opens
in direct mode, the way the app opens any layer the engine cannot express: Q
``[heads, n, nope + rope]``, K ``[heads, n, nope + rope]`` and V ``[heads, n, v_dim]`` exactly
as the model run makes them, the model's ``o_proj`` as W_O and its score factor (``custom``
under YaRN's mscale). Computing the session reproduces the layer's weights and output; the
latent stages themselves are :func:`~.view.latent_view`'s.
"""

from __future__ import annotations

import numpy as np

from attention_explorer.engine import AttentionConfig, AttentionInputs
from attention_explorer.kernels import numpy_ops
from attention_explorer.pretrained.latent.attention import latent_stages
from attention_explorer.pretrained.layer_parts import mask_settings


def latent_parts(w, layer: int, x, scale: tuple[str, float]):
    """The engine's (config, inputs) for latent-attention layer ``layer`` of ``w`` (a
    ``layer_view``) on ``x [n, d]``: direct mode with the model run's Q, K and V per head,
    W_O and b_O; ``scale`` is (scale, scale_factor)."""
    x = np.asarray(x, dtype=np.float64)  # [n, d]
    stages = latent_stages(numpy_ops, w, layer, x)
    plan, lw = w.latent, w.layers[layer]
    config = AttentionConfig(
        mode="direct",
        heads=w.heads,
        d_model=w.d_model,
        d_k=plan.qk_dim,
        d_v=plan.v_dim,
        scale=scale[0],
        scale_factor=scale[1],
        **mask_settings(w, x.shape[0]),
    )
    inputs = AttentionInputs(
        Q=stages.query(),  # [h, n, nope+rope]
        K=stages.key(),  # [h, n, nope+rope]
        V=np.ascontiguousarray(stages.v),  # [h, n, v_dim]
        W_O=lw.W_O,
        b_O=lw.b_O,
    )
    return config, inputs


def latent_note(w) -> str:
    """The sentence a latent-attention layer's session adds to its description (why it is in
    direct mode, what Q, K and V are), "" for other layers."""
    plan = w.latent
    if plan is None:
        return ""
    q = (
        f"q_b(RMSNorm(q_a(X))) through a rank of {plan.q_lora}"
        if plan.q_lora is not None
        else "q_proj(X)"
    )
    return (
        f" Multi-head latent attention (direct mode: the projection mode cannot express it): "
        f"Q = {q}; each token's latent c_kv ({plan.kv_lora} numbers, RMS-normed) and one rotary "
        f"key k_pe ({plan.rope} numbers, shared by every head) are all the cache keeps; K = "
        f"[k_nope ; k_pe] and V are kv_b(c_kv) per head ({plan.nope} + {plan.rope} and "
        f"{plan.v_dim} numbers); RoPE turns only the last {plan.rope} of q and k."
    )
