"""The named steps of attention, each one formula, written once for any array namespace.

    project      X W (+ b)                              [rows, s*width]
    split_heads  one block of columns per head          [s, rows, width]
    score        Q K^T                                  [c, n, m]
    scale        scores * scale / temperature           [c, n, m]
    mask         scaled where allowed, else -inf        [c, n, m]
    normalise    softmax | sparsemax | sigmoid per row  [c, n, m]
    combine      weights V                              [c, n, d_v]
    concat       [head_0 | head_1 | ...]                [n, h*d_v]
    output       concat W_O (+ b_O)                     [n, d_out]

``xp`` is an array-API namespace (array_api_compat's numpy or torch); ``lib`` an
:class:`~attention_explorer.engine.backend.ArrayLib`. :func:`attention_explorer.engine.compute`
strings them together.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from attention_explorer.engine.backend import ArrayLib
from attention_explorer.engine.engine_errors import ComputeOverflow
from attention_explorer.engine.normalizers import normalize


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


def project(lib: ArrayLib, source, W: np.ndarray, b: np.ndarray | None):
    """``source [rows, d_model]`` times ``W [d_model, cols]``, plus ``b [cols]``."""
    out = lib.xp.matmul(source, lib.asarray(W))  # [rows, cols]
    if b is not None:
        out = out + lib.asarray(b)  # [rows, cols]
    return out


def split_heads(xp, flat, heads: int, width: int):
    """``[rows, heads*width]`` as one matrix per head, ``[heads, rows, width]``."""
    rows = flat.shape[0]
    return xp.permute_dims(xp.reshape(flat, (rows, heads, width)), (1, 0, 2))  # [s, rows, w]


def score(xp, q, k):
    """Raw scores ``q k^T``: ``q [c, n, d_k]``, ``k [c, m, d_k]`` give ``[c, n, m]``."""
    return xp.matmul(q, xp.permute_dims(k, (0, 2, 1)))  # [c, n, m]


def scale(scores, factor: float):
    """Scores times ``factor`` (= scale / temperature), ``[c, n, m]``."""
    return scores * factor  # [c, n, m]


def scaled_score(xp, q, k, factor: float):
    """``score`` and ``scale`` in one pass, the factor folded into the smaller ``q``."""
    return score(xp, q * factor, k)  # [c, n, m]


def mask(xp, scaled, allowed, hidden=None):
    """``scaled [c, n, m]`` where ``allowed [n, m]``, else -inf.

    With ``hidden`` (``[n, m]``, True where a key is hidden; given when ``scaled`` is not
    kept) the -inf is written into ``scaled`` in place, so no new ``[c, n, m]`` array is made.
    """
    if hidden is None:
        return xp.where(allowed, scaled, -xp.inf)  # [c, n, m]
    if hasattr(scaled, "masked_fill_"):  # torch
        return scaled.masked_fill_(hidden, -np.inf)  # [c, n, m]
    np.copyto(scaled, -np.inf, where=hidden)  # [c, n, m], hidden broadcast over heads
    return scaled


def normalise(xp, kind: str, masked, allowed):
    """Weights per query row, ``[c, n, m]``; ``allowed`` only when some row is fully masked."""
    return normalize(xp, kind, masked, allowed)  # [c, n, m]


def combine(xp, weights, v):
    """Each head's output, the weighted sum of values: ``[c, n, m] @ [c, m, d_v]``."""
    return xp.matmul(weights, v)  # [c, n, d_v]


def concat(xp, head_outputs: list):
    """Head outputs ``[c_i, n, d_v]`` (in head order) side by side: ``[n, h*d_v]``."""
    heads_all = xp.concat(head_outputs, axis=0) if len(head_outputs) > 1 else head_outputs[0]
    n = heads_all.shape[1]
    return xp.reshape(xp.permute_dims(heads_all, (1, 0, 2)), (n, -1))  # [n, h*d_v]


def output(lib: ArrayLib, concatenated, W_O: np.ndarray, b_O: np.ndarray | None):
    """The output projection ``concat W_O (+ b_O)``: ``[n, d_out]``."""
    return project(lib, concatenated, W_O, b_O)  # [n, d_out]


def all_finite(xp, *arrays) -> bool:
    """True when every value of every array is finite.

    torch tensors are tested by their smallest and largest value instead (``aminmax``, one
    pass with no temporary: torch's ``isfinite`` + ``all`` took a quarter of a pass at
    n = 256, and a float64 sum converts every value). They are finite exactly when every
    value is: a NaN makes both NaN, +inf the largest, -inf the smallest.
    """
    return all(_finite(xp, a) for a in arrays)


def _finite(xp, array) -> bool:
    if hasattr(array, "detach"):  # torch
        if array.numel() == 0:
            return True
        low, high = (float(v) for v in array.detach().aminmax())
        return math.isfinite(low) and math.isfinite(high)
    return bool(xp.all(xp.isfinite(array)))


def require_finite(xp, where: str, *arrays) -> None:
    """Raise :class:`ComputeOverflow` naming ``where`` unless every value is finite."""
    if not all_finite(xp, *arrays):
        raise ComputeOverflow(where)


def scores_cannot_overflow(lib: ArrayLib, Q, K, factor: float, n: int, m: int) -> bool:
    """True when no score, scaled score or normaliser sum can overflow the dtype.

    |q . k| <= d_k max|q| max|k|, and the normalisers add at most max(n, m) such values; while
    that stays below a quarter of the dtype's largest number, the [n, m] finiteness check
    (a full extra pass over every score) is not needed.
    """
    xp = lib.xp
    limit = float(xp.finfo(lib.dtype).max) / (4 * max(n, m, 1))
    bound = Q.shape[-1] * float(xp.max(xp.abs(Q))) * float(xp.max(xp.abs(K))) * max(1.0, factor)
    return bound <= limit  # False for inf and nan too
