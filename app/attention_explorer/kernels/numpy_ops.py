"""numpy's primitives: every array operation the engine's stages and the model's forward pass
run, each written once for numpy. :mod:`.torch_ops` has the same names for torch
(``tests/kernels/test_primitives_parity.py`` holds the two equal, name by name).

Shapes: n queries, m keys, c heads of a chunk, d widths. A mask is ``allowed`` (True where a
query may see a key) or ``blocked`` (True where it may not). The fast paths are options:
``out=`` writes into a caller's buffer (the engine's row buffers, the run's weights),
``shift=False`` skips the softmax's row-max pass when :func:`scores_bounded` holds,
:func:`linear_split` is one product for Q, K and V, :func:`logits` a blocked product.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from types import MappingProxyType

import numpy as np

from attention_explorer.kernels import tables
from attention_explorer.kernels.names import PRIMITIVES
from attention_explorer.kernels.numpy_activations import (  # re-exported: see __all__
    ACTIVATIONS as ACTIVATIONS,
    gelu as gelu,
    gelu_fast as gelu_fast,
    gelu_tanh as gelu_tanh,
    quick_gelu as quick_gelu,
    relu as relu,
    silu as silu,
)
from attention_explorer.kernels.portable import sparsemax

LIBRARY = "numpy"

#: Score cells per softmax chunk in :func:`attention`: a chunk of heads' ``[c, n, n]`` stays
#: in the CPU's cache, and short texts take all heads in one call instead of one per head.
SOFTMAX_CELLS = 32768
#: When every score lies within ±SCORE_BOUND, ``exp`` neither overflows nor underflows (float32
#: holds e^±87), so the softmax need not subtract each row's maximum first: two passes fewer.
SCORE_BOUND = 60.0


def split_heads(x, count: int, contiguous: bool = False):
    """``x [n, count*d]`` as one matrix per head ``[count, n, d]``: a view, or with
    ``contiguous`` a copy (numpy hands stacked products of contiguous matrices to BLAS and
    loops slowly over strided ones)."""
    heads = np.swapaxes(x.reshape(x.shape[0], count, -1), 0, 1)  # [count, n, d]
    return np.ascontiguousarray(heads) if contiguous else heads


def merge_heads(x):
    """Head outputs ``x [c, n, d]`` side by side, in head order: ``[n, c*d]``."""
    return np.swapaxes(x, 0, 1).reshape(x.shape[1], -1)  # [n, c*d]


def linear(x, W, b=None):
    """``x [n, in] W [in, out] + b [out]``, the bias added in place (no second temporary)."""
    y = x @ W  # [n, out]
    if b is not None:
        y += b
    return y


def linear_split(x, W, b, sizes: Sequence[int]) -> list:
    """One product ``x W + b`` cut into column blocks of ``sizes`` (fused Q, K, V)."""
    cuts = np.cumsum(sizes)[:-1]
    return np.split(linear(x, W, b), cuts, axis=1)  # [n, size] each


def repeat_kv(x, group: int):
    """Key or value heads ``x [kv, n, d]`` repeated so each of ``kv * group`` query heads has
    its own (grouped-query attention shares one key/value head among ``group``)."""
    return x if group == 1 else np.repeat(x, group, axis=0)  # [kv*group, n, d]


def rotate_half(x):
    """``[..., d_k]`` -> ``[-x[d_k/2:], x[:d_k/2]]``: each pair (a, b) becomes (-b, a)."""
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)  # [..., d_k]


def rotation_tables(where, inv_freq, like=None):
    """RoPE's ``cos, sin [n, d_k]`` of positions ``where [n]`` (:func:`.tables.cos_sin`, in
    float64), in ``like``'s dtype when given."""
    cos, sin = tables.cos_sin(where, inv_freq)  # [n, d_k] each
    if like is None:
        return cos, sin
    return cos.astype(like.dtype, copy=False), sin.astype(like.dtype, copy=False)


def rotate(x, cos, sin):
    """RoPE: ``x [.., n, d_k]`` turned pair by pair, ``x cos + rotate_half(x) sin``."""
    return x * cos + rotate_half(x) * sin  # [.., n, d_k]


def causal_mask(n: int, m: int, device=None):
    """``allowed [n, m]``: query i sees keys 0..i (top-left aligned, as torch's is_causal)."""
    return np.tri(n, m, dtype=bool)  # [n, m], np.tril's cost without the ones


def window_mask(n: int, m: int, window: int, device=None):
    """``allowed [n, m]``: query i sees the keys fewer than ``window`` positions back (and
    every later one: combine with :func:`causal_mask`)."""
    i = np.arange(n)[:, None]  # [n, 1]
    j = np.arange(m)[None, :]  # [1, m]
    return i - j < window  # [n, m]


def padding_mask(n: int, m: int, padded: Iterable[int], device=None):
    """``allowed [n, m]``: every query sees every key but the ``padded`` ones."""
    allowed = np.ones((n, m), dtype=bool)  # [n, m]
    allowed[:, list(padded)] = False
    return allowed


def blocked_keys(n: int, causal: bool, window: int | None, device=None):
    """``blocked [n, n]``, True where query i may NOT see key j (causal and/or a sliding
    window, as transformers applies it), or None when every key is visible."""
    if not causal and window is None:
        return None
    allowed = causal_mask(n, n) if causal else np.ones((n, n), dtype=bool)  # [n, n]
    if window is not None:
        allowed &= window_mask(n, n, window)
    return ~allowed  # [n, n]


def score(q, k, out=None):
    """Raw scores ``q k^T``: ``q [c, n, d]``, ``k [c, m, d]`` give ``[c, n, m]``."""
    return np.matmul(q, np.swapaxes(k, -1, -2), out=out)  # [c, n, m]


def scale(scores, factor: float, out=None):
    """Scores times ``factor`` (= scale / temperature), ``[c, n, m]``."""
    return np.multiply(scores, factor, out=out)  # [c, n, m]


def scaled_score(q, k, factor: float, out=None):
    """:func:`score` and :func:`scale` in one product, the factor folded into the smaller q."""
    return score(q * factor, k, out=out)  # [c, n, m]


def mask_scores(scaled, allowed=None, blocked=None, out=None):
    """``scaled [c, n, m]`` where a key is allowed, else -inf.

    With ``blocked [n, m]`` the -inf is written into ``scaled`` in place (no new array);
    else with ``out`` (``scaled`` must then be finite) it is one add of 0 or -inf into
    ``out``; else a new array from ``allowed [n, m]``.
    """
    if blocked is not None:
        np.copyto(scaled, -np.inf, where=blocked)  # [c, n, m], blocked broadcast over heads
        return scaled
    if out is not None:  # finite + 0 keeps it, + -inf blocks it: one pass
        hide = np.where(allowed, scaled.dtype.type(0), scaled.dtype.type(-np.inf))  # [n, m]
        return np.add(scaled, hide, out=out)  # [c, n, m]
    return np.where(allowed, scaled, -np.inf)  # [c, n, m]


def _row_sums(x):
    """The sum of each row of ``x [.., m]`` as a matrix-vector product (3x faster than a
    sum along rows, and 3x faster again than a stacked product, which loops per head)."""
    ones = np.ones(x.shape[-1], x.dtype)  # [m]
    if x.flags.c_contiguous:
        return (x.reshape(-1, x.shape[-1]) @ ones).reshape(x.shape[:-1])  # [..]
    return np.matmul(x, ones)  # [..], a strided buffer: stacked


def softmax(masked, empty_rows: bool = False, out=None, shift: bool = True):
    """Softmax of each row of ``masked [.., n, m]`` (-inf at blocked keys); a row with no
    allowed key gives zeros (always on numpy; ``empty_rows`` says one may occur).

    ``out``: the result buffer (``out=masked`` works in place). ``shift``: subtract each
    row's maximum first, so exp() cannot overflow; pass False only when
    :func:`scores_bounded` holds (two passes fewer).
    """
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if shift:
            row_max = np.max(masked, axis=-1, keepdims=True)  # [.., n, 1]
            row_max[~np.isfinite(row_max)] = 0.0  # a row with no allowed key
            out = np.subtract(masked, row_max, out=out)  # [.., n, m]
        elif out is None:
            out = masked.copy()
        elif out is not masked:
            np.copyto(out, masked)
        np.exp(out, out=out)  # 0 at blocked keys
        sums = _row_sums(out)  # [.., n]
        sums[sums <= 0] = 1.0
        np.divide(1.0, sums, out=sums)
        out *= sums[..., None]
    return out


def sigmoid(masked, empty_rows: bool = False, out=None):
    """Independent sigmoid per score, ``1 / (1 + exp(-x))``; blocked keys (-inf) give 0."""
    with np.errstate(over="ignore"):
        return 1 / (1 + np.exp(-masked))


#: The engine's normalizers (softmax and its alternatives), by config name.
NORMALIZERS = MappingProxyType({"softmax": softmax, "sparsemax": sparsemax, "sigmoid": sigmoid})


def normalize(kind: str, masked, empty_rows: bool = False, out=None):
    """Normalizer ``kind`` of :data:`NORMALIZERS` applied to ``masked [.., n, m]``; blocked keys
    get weight 0. ``out`` is used by the softmax (the others make a new array)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return NORMALIZERS[kind](masked, empty_rows=empty_rows, out=out)  # [.., n, m]


def scores_bounded(q, k, bound: float = SCORE_BOUND) -> bool:
    """True when every score ``q_i · k_j`` of ``q [c, n, d]`` and ``k [c, m, d]`` is known to
    lie within ±bound: ``|q_i · k_j| <= |q_i| |k_j|`` (Cauchy-Schwarz), per head. False for a
    NaN or an infinity."""
    q_top = np.einsum("cnd,cnd->cn", q, q).max(axis=1)  # [c]: the largest |q_i|² per head
    k_top = np.einsum("cnd,cnd->cn", k, k).max(axis=1)  # [c]
    return bool((q_top * k_top).max() <= bound * bound)


def combine(weights, v, out=None):
    """Each head's output, the weighted sum of values: ``[c, n, m] @ [c, m, d_v]``."""
    return np.matmul(weights, v, out=out)  # [c, n, d_v]


def attention(q, k, v, factor: float, blocked=None, out=None):
    """The attention core of query heads ``q [c, n, d_k]`` (scaled by ``factor`` in place),
    each with its own key and value head ``k [c, m, d_k]``, ``v [c, m, d_v]``: the weights
    ``[c, n, m]`` (in ``out`` when given) and their sums of values ``[c, n, d_v]``. The
    softmax goes a cache-sized chunk of heads at a time, without the max pass when
    :func:`scores_bounded` holds."""
    q *= q.dtype.type(factor)
    shift = not scores_bounded(q, k)
    k_t = np.ascontiguousarray(np.swapaxes(k, 1, 2))  # [c, d_k, m]: BLAS is 25% faster so
    s = np.matmul(q, k_t, out=out)  # [c, n, m]
    step = max(1, SOFTMAX_CELLS // (s.shape[1] * s.shape[2]))  # heads per chunk
    for lo in range(0, s.shape[0], step):
        chunk = s[lo : lo + step]  # [step, n, m]
        if blocked is not None:
            mask_scores(chunk, blocked=blocked)
        softmax(chunk, out=chunk, shift=shift)
    return s, combine(s, v)  # [c, n, m], [c, n, d_v]


def knock_out(concat, knocked: Iterable[int], heads: int):
    """Zero the ``knocked`` heads' columns of ``concat [n, heads*d_v]`` in place: those heads
    contribute nothing to ``concat · W_O``. Returns ``concat``."""
    d_v = concat.shape[1] // heads
    for head in knocked:
        concat[:, head * d_v : (head + 1) * d_v] = 0.0
    return concat


def _scale_rows(centred, mean_square, gamma, beta, eps: float):
    """``centred / sqrt(mean_square + eps) * gamma + beta`` in place of ``centred [n, d]``
    (``mean_square [n]`` is overwritten): one pass a step, no temporaries."""
    mean_square += eps
    np.sqrt(mean_square, out=mean_square)
    np.divide(1.0, mean_square, out=mean_square)  # [n]: 1 / sqrt(mean_square + eps)
    centred *= mean_square[..., None]
    centred *= gamma
    if beta is not None:
        centred += beta
    return centred


def _row_means(x):
    """The mean of each row of ``x [n, d]`` as a matrix-vector product ``[n]`` (3-4x faster
    than ``mean(axis=-1)`` at 256 x 384, which runs numpy's general reduction machinery)."""
    return x @ np.full(x.shape[-1], 1.0 / x.shape[-1], x.dtype)  # [n]


def layer_norm(x, gamma, beta, eps: float):
    """LayerNorm over the last axis of ``x [n, d]``: ``(x - mean) / sqrt(var + eps) * gamma
    + beta`` (a new array)."""
    centred = x - _row_means(x)[..., None]  # [n, d]
    return _scale_rows(centred, _row_means(np.square(centred)), gamma, beta, eps)


def rms_norm(x, gamma, beta, eps: float):
    """RMSNorm over the last axis of ``x [n, d]``: ``x / sqrt(mean(x²) + eps) * gamma``
    (+ beta if any; a new array)."""
    return _scale_rows(x.copy(), _row_means(np.square(x)), gamma, beta, eps)


#: The norms by the architecture record's name.
NORMS = MappingProxyType({"layernorm": layer_norm, "rmsnorm": rms_norm})


def logits(x, decoder):
    """``x [n, d]`` times the ``[vocab, d]`` table ``decoder`` read a block at a time
    (``decoder.blocks(dtype)`` gives (first row, rows [block, d])): ``[n, vocab]``."""
    result = np.empty((x.shape[0], decoder.shape[0]), dtype=x.dtype)  # [n, vocab]
    for lo, rows in decoder.blocks(x.dtype):  # [block, d]
        np.matmul(x, rows.T, out=result[:, lo : lo + rows.shape[0]])
    return result


def all_finite(*arrays) -> bool:
    """True when every value of every array is finite."""
    return all(bool(np.isfinite(a).all()) for a in arrays)


__all__ = list(PRIMITIVES)
