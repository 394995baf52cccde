"""Memory for large stages, reused once no array of an older trace still uses it.

Every pass at n = 4096 makes four new 64 MiB stages (scores, scaled, masked, weights). numpy
takes each from the system and gives it back when the old trace dies; on a virtual machine the
first touch of such fresh memory is slow and uneven (the p95 outliers of the benchmark). The
pool keeps the blocks instead and hands one out again when nothing refers to it any more:
every numpy view of a block holds a reference to it, so a block whose only reference is the
pool's own is provably unused. Traces stay immutable: a block is reused only after every
array of the trace that had it is gone.
"""

from __future__ import annotations

import math
import sys
import threading

import numpy as np

#: Arrays smaller than this come straight from numpy.
MIN_POOLED_BYTES = 4 * 1024 * 1024
#: The pool holds at most this many bytes of blocks (free or in use).
POOL_LIMIT_BYTES = 768 * 1024 * 1024

_lock = threading.Lock()
_blocks: list[np.ndarray] = []  # 1-D uint8 arrays that own their memory


def _unused(index: int) -> bool:
    # References: the pool's list, and getrefcount's own argument. Any view adds one.
    return sys.getrefcount(_blocks[index]) <= 2


def pooled_empty(shape: tuple[int, ...], dtype) -> np.ndarray:
    """An uninitialised array like ``np.empty(shape, dtype)``, on a reused block when one of
    the same size is unused (the caller writes every element before anyone reads it)."""
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes < MIN_POOLED_BYTES:
        return np.empty(shape, dtype)
    with _lock:
        for index in range(len(_blocks)):
            if _blocks[index].nbytes == nbytes and _unused(index):
                return _blocks[index].view(dtype).reshape(shape)
        # A new size (the sequence was resized): unused blocks of other sizes go back now.
        for index in reversed(range(len(_blocks))):
            if _blocks[index].nbytes != nbytes and _unused(index):
                del _blocks[index]
        total = sum(b.nbytes for b in _blocks) + nbytes
        if total > POOL_LIMIT_BYTES:
            return np.empty(shape, dtype)  # every block is in use: not pooled
        block = np.empty(nbytes, np.uint8)
        _blocks.append(block)
        return block.view(dtype).reshape(shape)


def pool_bytes() -> int:
    """Bytes the pool holds now (blocks in use and unused)."""
    with _lock:
        return sum(b.nbytes for b in _blocks)


def clear_pool() -> None:
    """Forget every unused block (blocks in use stay with their arrays)."""
    with _lock:
        for index in reversed(range(len(_blocks))):
            if _unused(index):
                del _blocks[index]
