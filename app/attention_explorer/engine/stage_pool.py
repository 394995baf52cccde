"""Memory for large stages, reused once no array of an older trace still uses it.

Every pass at n = 4096 makes four new 64 MiB stages (scores, scaled, masked, weights). numpy
takes each from the system and gives it back when the old trace dies; on a virtual machine the
first touch of such fresh memory is slow and uneven (the p95 outliers of the benchmark). A
:class:`StagePool` keeps the blocks instead and hands one out again when nothing refers to it
any more: every numpy view of a block holds a reference to the block (numpy points a view's
``base`` at the array that owns the memory), so a block whose only reference is the pool's
own is provably unused (CPython's reference count says so). Traces stay immutable: a block is
reused only after every array of the trace that had it is gone.

A pool belongs to one owner (an :class:`~attention_explorer.engine.cache.EngineCache`); there
is no process-wide pool.
"""

from __future__ import annotations

import math
import sys
import threading

import numpy as np

#: Arrays smaller than this come straight from numpy.
MIN_POOLED_BYTES = 4 * 1024 * 1024
#: A pool holds at most this many bytes of blocks (free or in use).
POOL_LIMIT_BYTES = 768 * 1024 * 1024


class StagePool:
    """Reusable 1-D ``uint8`` blocks that own their memory, handed out as typed arrays."""

    def __init__(self, limit_bytes: int = POOL_LIMIT_BYTES):
        self.limit_bytes = limit_bytes
        self._lock = threading.Lock()
        self._blocks: list[np.ndarray] = []  # [nbytes] uint8 each

    def _unused(self, index: int) -> bool:
        # References: the pool's list, and getrefcount's own argument. Any view adds one.
        return sys.getrefcount(self._blocks[index]) <= 2

    def empty(self, shape: tuple[int, ...], dtype) -> np.ndarray:
        """An uninitialised array like ``np.empty(shape, dtype)``, on a reused block when one
        of the same size is unused (the caller writes every element before anyone reads it)."""
        dtype = np.dtype(dtype)
        nbytes = math.prod(shape) * dtype.itemsize
        if nbytes < MIN_POOLED_BYTES:
            return np.empty(shape, dtype)
        with self._lock:
            blocks = self._blocks
            for index in range(len(blocks)):
                if blocks[index].nbytes == nbytes and self._unused(index):
                    return blocks[index].view(dtype).reshape(shape)
            # A new size (the sequence was resized): unused blocks of other sizes go back now.
            for index in reversed(range(len(blocks))):
                if blocks[index].nbytes != nbytes and self._unused(index):
                    del blocks[index]
            if sum(b.nbytes for b in blocks) + nbytes > self.limit_bytes:
                return np.empty(shape, dtype)  # every block is in use: not pooled
            block = np.empty(nbytes, np.uint8)  # [nbytes]
            blocks.append(block)
            return block.view(dtype).reshape(shape)

    def nbytes(self) -> int:
        """Bytes the pool holds now (blocks in use and unused)."""
        with self._lock:
            return sum(b.nbytes for b in self._blocks)

    def clear(self) -> None:
        """Forget every unused block (blocks in use stay with their arrays)."""
        with self._lock:
            for index in reversed(range(len(self._blocks))):
                if self._unused(index):
                    del self._blocks[index]
