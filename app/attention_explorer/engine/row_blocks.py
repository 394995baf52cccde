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

from attention_explorer.engine.engine_errors import require_finite
from attention_explorer.engine.variants.sink_logit import sink_softmax
from attention_explorer.engine.variants.softcap import soft_cap

#: Per chunk of heads, at most this many score elements are alive at once (~64 MiB float32);
#: the size budget (:mod:`.budget`) counts two float64 temporaries of a chunk.
CHUNK_ELEMENTS = 16 * 1024 * 1024
#: Above this many score elements per chunk of heads, the chunk goes through its query rows a
#: block at a time, each block's [c, rows, m] arrays about 1 MiB (float32): they stay in cache.
ROW_BLOCK_ELEMENTS = 256 * 1024


#: A full trace (no previews) goes in blocks of up to this many elements (16 MiB float32 a
#: stage), one block per thread at least: torch pays a fixed cost per step, and each block
#: is a hand-off between threads, so blocks are as large as the chunk's memory bound allows
#: (n = 2048 on numpy: 1.6 s a pass with these against 2.1 s with cache-sized blocks, on a
#: busy 2-core machine).
FULL_BLOCK_ELEMENTS = CHUNK_ELEMENTS // 4


def full_block_elements(cells: int, threads: int) -> int:
    """Elements per block of a full trace with ``cells`` score cells per chunk: at most
    :data:`FULL_BLOCK_ELEMENTS`, and small enough that each of ``threads`` threads
    gets a block (at least :data:`ROW_BLOCK_ELEMENTS`)."""
    share = -(-cells // max(1, threads))  # ceil
    return max(ROW_BLOCK_ELEMENTS, min(FULL_BLOCK_ELEMENTS, share))


def row_block(heads: int, n: int, m: int, elements: int | None = None) -> int:
    """Query rows per block: all ``n`` while ``heads * n * m`` stays under ``elements``
    (default :data:`ROW_BLOCK_ELEMENTS`), else as many as keep one block's [heads, rows, m]
    arrays that small (at least one row)."""
    elements = ROW_BLOCK_ELEMENTS if elements is None else elements
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
    sinks=None,
) -> dict:
    """One block of query rows of one chunk of heads: ``q [c, r, d_k]``, ``allowed [r, m]``.

    ``keep`` names the square stages kept. Returns the block's ``scores``, ``scaled``,
    ``capped`` (with a soft cap; else None), ``masked``, ``weights`` (``[c, r, m]``;
    ``scores`` None when not kept, the others may be views of ``buffers``) and
    ``head_outputs`` (``[c, r, d_v]``, None when not needed). With ``buffers`` (numpy) each
    step writes into its reused scratch array (``out=``). ``sinks [c]``: the chunk's sink
    logits (attention sinks on): the softmax takes each in its row's denominator and the
    block's ``sink_weight`` ``[c, r, 1]`` is returned too (else None).
    """
    ops = lib.ops
    c, r = q.shape[0], q.shape[1]

    def buffer(name):
        return None if buffers is None else buffers.take(name, c, r)

    if "scores" in keep:
        scores = ops.score(q, k, out=buffer("scores"))  # [c, r, m]
        scaled = ops.scale(scores, factor, out=buffer("scaled"))  # [c, r, m]
    else:  # scores not kept: fold the factor into q, saving a pass over [c, r, m]
        scores, scaled = None, ops.scaled_score(q, k, factor, out=buffer("scaled"))
    if check_each:
        require_finite(ops, "the scaled scores", scaled)
    capped, before_mask, kept_name = None, scaled, "scaled"
    if config.softcap is not None:  # cap · tanh(scaled / cap), in place when scaled is not kept
        target = buffer("capped") if "scaled" in keep else scaled
        capped = before_mask = soft_cap(lib, scaled, config.softcap, out=target)  # [c, r, m]
        kept_name = "capped"
    if kept_name not in keep:  # block keys in place: no new [c, r, m] array
        masked = ops.mask_scores(before_mask, blocked=~allowed)  # [c, r, m]
        capped = None  # (it was masked in place: not the capped scores any more)
    else:  # (finite here, else check_each raised: what out= asks for)
        masked = ops.mask_scores(before_mask, allowed, out=buffer("masked"))  # [c, r, m]
    sink_weight = None
    if sinks is not None:  # the sink logit joins each row's softmax (gpt-oss)
        weights, sink_weight = sink_softmax(masked, sinks, out=buffer("weights"))  # [c, r, m|1]
    else:
        weights = ops.normalize(
            config.normalizer, masked, empty_rows=any_fully_masked, out=buffer("weights")
        )  # [c, r, m]
    if check_each:
        require_finite(ops, "the weights", weights)
    head_out = None
    if need_head_outputs:  # (checked for overflow by the caller, once per chunk of heads)
        head_out = ops.combine(weights, v)  # [c, r, d_v]
    return {
        "scores": scores,
        "scaled": scaled,
        "capped": capped,
        "masked": masked,
        "weights": weights,
        "head_outputs": head_out,
        "sink_weight": sink_weight,
    }
