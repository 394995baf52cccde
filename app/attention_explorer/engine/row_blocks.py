"""Attention for a block of query rows: what long sequences run, one block after another.

Every step after the projections works row by row (a query's scores, its mask row, its
softmax, its weighted sum of values), so a chunk of heads can go through its queries a block of
rows at a time and give the same numbers, while each block's ``[c, rows, m]`` arrays stay in
the processor's cache. On numpy the steps write into :class:`RowBuffers`, a few scratch arrays
reused by every block: allocating and freeing them per block costs more than the arithmetic
on a worker thread (glibc hands the freed blocks back and they page-fault in again).
"""

from __future__ import annotations

import numpy as np

from attention_explorer.engine import steps

#: Per chunk of heads, at most this many score elements are alive at once (~64 MiB float32);
#: the size budget (:mod:`.budget`) counts two float64 temporaries of a chunk.
CHUNK_ELEMENTS = 16 * 1024 * 1024
#: Above this many score elements per chunk of heads, the chunk goes through its query rows a
#: block at a time, each block's [c, rows, m] arrays about 1 MiB (float32): they stay in cache.
ROW_BLOCK_ELEMENTS = 256 * 1024


#: A full trace on torch goes in blocks of this many elements (16 MiB float32 a stage): torch
#: pays a fixed cost per step and, with several blocks, a copy of each block into the kept
#: stages, so its blocks are as large as the chunk's memory bound allows.
TORCH_BLOCK_ELEMENTS = CHUNK_ELEMENTS // 4


def row_block(heads: int, n: int, m: int, elements: int = ROW_BLOCK_ELEMENTS) -> int:
    """Query rows per block: all ``n`` while ``heads * n * m`` stays under ``elements``, else
    as many as keep one block's [heads, rows, m] arrays that small (at least one row)."""
    if heads * n * m <= elements:
        return n
    return max(1, elements // max(1, heads * m))


class RowBuffers:
    """Scratch ``[c, rows, m]`` numpy arrays, one per stage name, reused block after block."""

    def __init__(self, dtype, heads: int, rows: int, m: int):
        self.dtype, self.shape = dtype, (heads, rows, m)
        self._arrays: dict[str, np.ndarray] = {}

    def take(self, name: str, heads: int, rows: int) -> np.ndarray:
        """The scratch array of ``name`` cut to ``[heads, rows, m]`` (contents undefined)."""
        array = self._arrays.get(name)
        if array is None or array.shape[0] < heads or array.shape[1] < rows:
            c, r, m = self.shape
            self.shape = (max(c, heads), max(r, rows), m)
            array = self._arrays[name] = np.empty(self.shape, dtype=self.dtype)  # [c, R, m]
        return array[:heads, :rows]


def attend_rows(
    lib,
    config,
    q,
    k,
    v,
    allowed,
    factor,
    check_each,
    any_fully_masked,
    keep,
    need_head_outputs,
    buffers: RowBuffers | None = None,
) -> dict:
    """One block of query rows of one chunk of heads: ``q [c, r, d_k]``, ``allowed [r, m]``.

    ``keep`` names the square stages kept. Returns the block's ``scores``, ``scaled``,
    ``masked``, ``weights`` (``[c, r, m]``; ``scores`` None when not kept, the others may be
    views of ``buffers``) and ``head_outputs`` (``[c, r, d_v]``, None when not needed).
    """
    xp = lib.xp
    c, r = q.shape[0], q.shape[1]
    if buffers is None:  # any backend: each step makes its arrays
        if "scores" in keep:
            scores = steps.score(xp, q, k)  # [c, r, m]
            scaled = steps.scale(scores, factor)  # [c, r, m]
        else:  # scores not kept: fold the factor into q, saving a pass over [c, r, m]
            scores, scaled = None, steps.scaled_score(xp, q, k, factor)
    else:  # numpy: the same formulas, written into the reused scratch arrays
        k_t = np.swapaxes(k, 1, 2)  # [c, d_k, m]
        if "scores" in keep:
            scores = np.matmul(q, k_t, out=buffers.take("scores", c, r))  # [c, r, m]
            scaled = np.multiply(scores, factor, out=buffers.take("scaled", c, r))
        else:
            scores = None
            scaled = np.matmul(q * factor, k_t, out=buffers.take("scaled", c, r))
    if check_each:
        steps.require_finite(xp, "the scaled scores", scaled)
    if "scaled" not in keep:  # hide keys in place: no new [c, r, m] array
        masked = steps.mask(xp, scaled, allowed, ~allowed)  # [c, r, m]
    elif buffers is None:
        masked = steps.mask(xp, scaled, allowed)  # [c, r, m]
    else:  # scaled is finite here (else check_each raised): adding 0 keeps it, -inf hides
        zero, hidden = scaled.dtype.type(0), scaled.dtype.type(-np.inf)
        hide = np.where(allowed, zero, hidden)  # [r, m]
        masked = np.add(scaled, hide, out=buffers.take("masked", c, r))  # [c, r, m]
    mask_rows = allowed if any_fully_masked else None
    if buffers is not None and config.normalizer == "softmax":
        weights = _softmax_into(masked, buffers.take("weights", c, r))  # [c, r, m]
    else:
        weights = steps.normalise(xp, config.normalizer, masked, mask_rows)  # [c, r, m]
    if check_each:
        steps.require_finite(xp, "the weights", weights)
    head_out = None
    if need_head_outputs:  # (checked for overflow by the caller, once per chunk of heads)
        head_out = steps.combine(xp, weights, v)  # [c, r, d_v]
    return {
        "scores": scores,
        "scaled": scaled,
        "masked": masked,
        "weights": weights,
        "head_outputs": head_out,
    }


def _softmax_into(masked: np.ndarray, out: np.ndarray) -> np.ndarray:
    """The engine's softmax (:func:`~attention_explorer.engine.normalizers.softmax`) of
    ``masked [c, r, m]`` written into ``out``; a row with no allowed key gives zeros."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        row_max = np.max(masked, axis=-1, keepdims=True)  # [c, r, 1]
        row_max[~np.isfinite(row_max)] = 0.0
        np.subtract(masked, row_max, out=out)
        np.exp(out, out=out)  # 0 at hidden keys
        total = np.sum(out, axis=-1, keepdims=True)  # [c, r, 1]
        total[total <= 0] = 1.0
        out /= total
    return out
