"""Row normalizers that turn masked scores into attention weights, for any array namespace."""

from __future__ import annotations

from types import MappingProxyType

import numpy as np


def softmax(xp, masked, allowed):
    """Stable softmax over the last axis; a row with no allowed key gives zeros.

    ``masked [.., n, m]`` holds -inf at hidden keys. Subtracting the row max (0 for a fully
    masked row) keeps exp() from overflowing.
    """
    if hasattr(masked, "softmax"):  # torch: the same formula, fused into one pass
        weights = masked.softmax(dim=-1)  # [.., n, m], NaN in a row with no allowed key
        if allowed is not None:  # some row has no allowed key
            weights = xp.where(xp.isnan(weights), xp.zeros_like(weights), weights)
        return weights
    row_max = xp.max(masked, axis=-1, keepdims=True)  # [.., n, 1]
    row_max = xp.where(xp.isfinite(row_max), row_max, xp.zeros_like(row_max))
    exps = masked - row_max  # [.., n, m]
    if isinstance(exps, np.ndarray):
        np.exp(exps, out=exps)  # in place: one [n, m] buffer fewer
    else:
        exps = xp.exp(exps)  # [.., n, m], 0 at hidden keys
    total = xp.sum(exps, axis=-1, keepdims=True)  # [.., n, 1]
    total = xp.where(total > 0, total, xp.ones_like(total))
    exps /= total
    return exps


def sparsemax(xp, masked, allowed):
    """Sparsemax (Martins & Astudillo, 2016): the Euclidean projection onto the simplex.

    Gives exact zeros for low scores. With z sorted descending, k* is the largest k with
    1 + k z_k > sum_{j<=k} z_j, tau = (sum_{j<=k*} z_j - 1) / k*, and p = max(z - tau, 0).

    Sparsemax ignores a constant added to a row, so the row max is subtracted first: with
    scores near 1e60 the "1" above would otherwise be lost to rounding.
    """
    row_max = xp.max(masked, axis=-1, keepdims=True)  # [.., n, 1]
    row_max = xp.where(xp.isfinite(row_max), row_max, xp.zeros_like(row_max))
    masked = masked - row_max  # [.., n, m], <= 0, the largest exactly 0
    z_sorted = xp.sort(masked, axis=-1, descending=True)  # [.., n, m]
    cumsum = xp.cumulative_sum(z_sorted, axis=-1)  # [.., n, m]
    m = masked.shape[-1]
    k = xp.arange(1, m + 1, dtype=masked.dtype, device=getattr(masked, "device", None))
    support = (1 + k * z_sorted) > cumsum  # [.., n, m], a prefix of each row
    k_star = xp.sum(xp.astype(support, masked.dtype), axis=-1, keepdims=True)  # [.., n, 1]
    support_sum = xp.sum(
        xp.where(support, z_sorted, xp.zeros_like(z_sorted)), axis=-1, keepdims=True
    )
    tau = (support_sum - 1) / xp.where(k_star > 0, k_star, xp.ones_like(k_star))  # [.., n, 1]
    shifted = masked - tau
    return xp.where(shifted > 0, shifted, xp.zeros_like(shifted))


def sigmoid(xp, masked, allowed):
    """Independent sigmoid per score, 1 / (1 + exp(-x)); hidden keys (-inf) give exactly 0."""
    if hasattr(masked, "sigmoid"):  # torch's fused (and overflow-free) version of the same
        return masked.sigmoid()
    return 1 / (1 + xp.exp(-masked))


NORMALIZER_FUNCTIONS = MappingProxyType(
    {"softmax": softmax, "sparsemax": sparsemax, "sigmoid": sigmoid}
)


def normalize(xp, kind: str, masked, allowed):
    """Apply normalizer ``kind`` to ``masked`` scores ``[.., n, m]``; hidden keys get weight 0.

    ``allowed`` is the ``[n, m]`` mask, or None when every query may see at least one key.
    """
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return NORMALIZER_FUNCTIONS[kind](xp, masked, allowed)
