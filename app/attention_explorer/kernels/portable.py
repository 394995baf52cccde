"""Primitives written once against the array API standard (array_api_compat's namespace of the
array), re-exported by both :mod:`.numpy_ops` and :mod:`.torch_ops`: where neither library has
a faster form of its own, one text serves both."""

from __future__ import annotations

from array_api_compat import array_namespace


def sparsemax(masked, empty_rows: bool = False, out=None):
    """Sparsemax (Martins & Astudillo, 2016) of each row of ``masked [.., n, m]``: the
    Euclidean projection onto the simplex, with exact zeros for low scores and for blocked
    keys (-inf). A row with no allowed key gives zeros (``empty_rows`` and ``out`` are
    accepted for the normalizers' common signature; a new array is returned).

    With z sorted descending, k* is the largest k with 1 + k z_k > sum_{j<=k} z_j,
    tau = (sum_{j<=k*} z_j - 1) / k*, and p = max(z - tau, 0). Sparsemax ignores a constant
    added to a row, so the row max is subtracted first: with scores near 1e60 the "1" above
    would otherwise be lost to rounding.
    """
    xp = array_namespace(masked)
    row_max = xp.max(masked, axis=-1, keepdims=True)  # [.., n, 1]
    row_max = xp.where(xp.isfinite(row_max), row_max, xp.zeros_like(row_max))
    masked = masked - row_max  # [.., n, m], <= 0, the largest exactly 0
    z_sorted = xp.sort(masked, axis=-1, descending=True)  # [.., n, m]
    cumsum = xp.cumulative_sum(z_sorted, axis=-1)  # [.., n, m]
    m = masked.shape[-1]
    k = xp.arange(1, m + 1, dtype=masked.dtype, device=getattr(masked, "device", None))  # [m]
    support = (1 + k * z_sorted) > cumsum  # [.., n, m], a prefix of each row
    k_star = xp.sum(xp.astype(support, masked.dtype), axis=-1, keepdims=True)  # [.., n, 1]
    support_sum = xp.sum(
        xp.where(support, z_sorted, xp.zeros_like(z_sorted)), axis=-1, keepdims=True
    )  # [.., n, 1]
    tau = (support_sum - 1) / xp.where(k_star > 0, k_star, xp.ones_like(k_star))  # [.., n, 1]
    shifted = masked - tau  # [.., n, m]
    return xp.where(shifted > 0, shifted, xp.zeros_like(shifted))
