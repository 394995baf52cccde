"""QK-norm: an RMSNorm with its own weights on each head's q and k, after the projections
(or as typed) and before RoPE (Qwen3, OLMo 2, Gemma 3).

    q̂ = q / sqrt(mean(q²) + eps) × w          ("rms": Qwen3, OLMo 2)
    q̂ = q / sqrt(mean(q²) + eps) × (1 + w)    ("rms_one_plus": Gemma 3)

The mean runs over each head's d_k (``qk_norm_width`` "head": one weight vector ``[d_k]``
shared by every head) or over every head's width together ("all", OLMo 2: the weights are
``[heads*d_k]`` for q and ``[kv_heads*d_k]`` for k, and a pass computes every head so that the
mean sees them all). The norm is the kernels' ``rms_norm`` on numpy and on torch.
"""

from __future__ import annotations

import numpy as np

from attention_explorer.engine.backend import ArrayLib


def norm_gamma(config, weights: np.ndarray) -> np.ndarray:
    """The factor the normalised values are multiplied by: ``w``, or ``1 + w`` (Gemma 3's
    ``rms_one_plus``), float64."""
    w = np.asarray(weights, dtype=np.float64)
    return 1.0 + w if config.qk_norm == "rms_one_plus" else w


def normed_heads(lib: ArrayLib, config, inputs, Q, K, run_heads):
    """``Q [s, n, d_k]`` and ``K [s, m, d_k]`` (query heads ``run_heads``; K already one per
    query head) QK-normed, as arrays of ``lib``. Under width "all" ``run_heads`` must be
    every head (the plan asks for that)."""
    eps = float(config.qk_norm_eps)
    q_gamma = norm_gamma(config, inputs.q_norm)  # [d_k] or [h*d_k]
    k_gamma = norm_gamma(config, inputs.k_norm)  # [d_k] or [kv*d_k]
    if config.qk_norm_width == "head":
        like = lambda g: lib.asarray(g)  # noqa: E731  # [d_k], broadcast over heads and rows
        return (
            lib.ops.rms_norm(Q, like(q_gamma), None, eps),  # [s, n, d_k]
            lib.ops.rms_norm(K, like(k_gamma), None, eps),  # [s, m, d_k]
        )
    return _over_all_heads(lib, Q, q_gamma, eps, 1), _over_all_heads(
        lib, K, k_gamma, eps, config.kv_group
    )


def _over_all_heads(lib: ArrayLib, x, gamma: np.ndarray, eps: float, group: int):
    """``x [h, n, d_k]`` (every query head; key heads repeated ``group`` times each) normed
    over the width of the distinct heads together: merge them to ``[n, heads*d_k]``, one
    RMSNorm with ``gamma [heads*d_k]``, split again and repeat for the query heads."""
    distinct = x[::group] if group > 1 else x  # [kv or h, n, d_k]
    count = int(distinct.shape[0])
    flat = lib.ops.merge_heads(distinct)  # [n, count*d_k]
    normed = lib.ops.rms_norm(flat, lib.asarray(gamma), None, eps)  # [n, count*d_k]
    heads = lib.ops.split_heads(normed, count)  # [count, n, d_k]
    return lib.ops.repeat_kv(heads, group)  # [h, n, d_k]
