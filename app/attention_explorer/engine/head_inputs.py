"""Q, K and V per head, the input of every attention step: typed (direct mode) or projected
from X (projection mode, with positions added first).

``plan`` says which query heads run (``run_heads``), whether V is needed (``need_v``) and
which stages are kept (``keep``); grouped-query attention maps each query head to its
key/value head. With RoPE on, :func:`rotated_heads` then turns each head's q and k by
position (both modes; nothing is added to X).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from attention_explorer.engine.backend import ArrayLib
from attention_explorer.engine.config import AttentionConfig, inverse_frequencies
from attention_explorer.kernels import tables


def kv_heads(config: AttentionConfig, heads: Sequence[int]) -> list[int]:
    """The key/value head serving each query head (grouped-query attention)."""
    return [config.kv_head_of(q) for q in heads]


def head_columns(W: np.ndarray, b: np.ndarray | None, heads: Sequence[int], width: int):
    """The columns of ``W [d_model, h*width]`` (and of ``b``) that belong to ``heads``.

    Consecutive heads give a view; others a gathered copy. Keeping only the needed columns
    before multiplying keeps long sequences cheap when few heads are asked for.
    """
    first = heads[0]
    if list(heads) == list(range(first, first + len(heads))):
        cols = slice(first * width, (first + len(heads)) * width)
    else:
        cols = (np.asarray(heads)[:, None] * width + np.arange(width)).reshape(-1)  # [s*width]
    return W[:, cols], (None if b is None else b[cols])


def typed_heads(lib: ArrayLib, config, inputs, plan):
    """Direct mode: the typed Q ``[s, n, d_k]``, K ``[s, m, d_k]``, V ``[s, m, d_v]``."""
    kv = kv_heads(config, plan.run_heads)
    Q = lib.asarray(inputs.Q[list(plan.run_heads)])  # [s, n, d_k]
    K = lib.asarray(inputs.K[kv])  # [s, m, d_k]
    V = lib.asarray(inputs.V[kv]) if plan.need_v else None  # [s, m, d_v]
    return Q, K, V


def projected_heads(lib: ArrayLib, config, inputs, n: int, m: int, plan, kept: dict):
    """Projection mode: add positions, then project and split Q, K, V per head.

    Keeps X (as typed), positions P, X_pos = X + P and X_kv in ``kept`` when asked for.
    """
    P = tables.added_table(
        config.positional,
        max(n, m),
        config.d_model,
        config.positional_seed,
        config.position_offset,
    )  # [max(n, m), d_model] or None
    X_pos = inputs.X if P is None else inputs.X + P[:n]  # [n, d_model]
    Xq = lib.asarray(X_pos)  # [n, d_model]
    Xk = Xq  # [m, d_model]
    if config.attention == "cross":
        X_kv = inputs.X_kv if P is None else inputs.X_kv + P[:m]  # [m, d_model]
        Xk = lib.asarray(X_kv)
        if "X_kv" in plan.keep:
            kept["X_kv"] = lib.to_numpy(Xk)
    if "X" in plan.keep:  # [n, d_model], as typed
        kept["X"] = lib.to_numpy(Xq if P is None else lib.asarray(inputs.X))
    if P is not None and "positions" in plan.keep:
        kept["positions"] = lib.to_numpy(lib.asarray(P[:n]))  # [n, d_model]
    if P is not None and "X_pos" in plan.keep:
        kept["X_pos"] = lib.to_numpy(Xq)  # [n, d_model], what the projections read
    kv = kv_heads(config, plan.run_heads)
    dk, dv = config.head_dim, config.value_dim

    def heads_of(W, b, which, width, source):
        W_part, b_part = head_columns(W, b, which, width)
        b_lib = None if b_part is None else lib.asarray(b_part)
        flat = lib.ops.linear(source, lib.asarray(W_part), b_lib)  # [rows, s*width]
        return lib.ops.split_heads(flat, len(which))  # [s, rows, width]

    Q = heads_of(inputs.W_Q, inputs.b_Q, list(plan.run_heads), dk, Xq)  # [s, n, d_k]
    K = heads_of(inputs.W_K, inputs.b_K, kv, dk, Xk)  # [s, m, d_k]
    V = heads_of(inputs.W_V, inputs.b_V, kv, dv, Xk) if plan.need_v else None  # [s, m, d_v]
    return Q, K, V


def rope_frequencies(config, seq_len: int | None = None):
    """The ``[r/2]`` inverse frequencies of the ``r = config.rotary_dims`` turned dimensions
    (all of d_k unless a rotary fraction turns only the first ones), for a text of
    ``seq_len`` positions (dynamic and longrope depend on it)."""
    return inverse_frequencies(
        config.rotary_dims, config.rope_theta, config.rope_scaling_record(), seq_len
    )


def rotated_heads(lib: ArrayLib, config, Q, K):
    """RoPE: ``Q [s, n, d_k]`` and ``K [s, m, d_k]`` turned by their positions (queries and
    keys each count from ``config.position_offset``), as arrays of ``lib``. With a rotary
    fraction only the first ``r = config.rotary_dims`` dimensions turn (rotate-half on that
    part, as GPT-NeoX and Phi do); the others pass through. yarn and longrope multiply cos
    and sin by their attention factor, as transformers does."""
    n, m = int(Q.shape[1]), int(K.shape[1])
    inv_freq = rope_frequencies(config, config.rope_length(n, m))  # [r/2]
    where = tables.positions(max(n, m), config.position_offset)  # [max(n, m)]
    cos, sin = lib.ops.rotation_tables(where, inv_freq, like=Q)  # [max(n, m), r] each
    factor = tables.attention_factor(config.rope_scaling_record())
    if factor != 1.0:
        cos, sin = cos * factor, sin * factor
    rotate = lib.ops.rotate
    r = config.rotary_dims
    if r == config.head_dim:
        return rotate(Q, cos[:n], sin[:n]), rotate(K, cos[:m], sin[:m])

    def part(x, rows):  # [s, rows, d_k]: the first r turned, the rest as they were
        turned = rotate(x[..., :r], cos[:rows], sin[:rows])  # [s, rows, r]
        return lib.xp.concat([turned, x[..., r:]], axis=-1)  # [s, rows, d_k]

    return part(Q, n), part(K, m)
