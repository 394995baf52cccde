"""One chunk of heads through its query rows, a block at a time: on one thread or on every core.

Row blocks (:mod:`.row_blocks`) are many small steps: a ``[c, 32, 64] @ [c, 64, 1024]``
product, a softmax over a 1 MiB block. Several BLAS (or torch) threads per step only wait for
each other, which on busy cores turned a 0.1 s pass into 0.5 to 1.5 s. So every block runs
on one BLAS thread, and the cores are used by handing the blocks to several Python threads
instead (numpy and torch release the GIL inside each step): each thread takes a contiguous
range of blocks with its own scratch arrays, and writes its rows where they belong (the
sinks' rows never overlap).

- A full trace (exports, ``ae.compute``, the command line) has the machine to itself: its
  blocks go to as many threads as there are usable cores. A small one (a chunk of at most
  :data:`ONE_BLOCK_ELEMENTS` score cells, n <= 1024 with 8 heads) runs as one block instead
  (:func:`full_trace_rows`).
- A previewed pass (the window's worker, while the GUI thread paints) stays on one thread:
  there, two threads measured slower (72 vs 61 ms a pass at n = 4096 on 2 busy cores).
- A chunk in one block runs its steps as whole arrays, with every BLAS thread.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

import numpy as np

from attention_explorer.engine.blas_threads import one_blas_thread
from attention_explorer.engine.row_blocks import (
    CHUNK_ELEMENTS,
    RowBuffers,
    full_block_elements,
    row_block,
)

#: A full trace's chunk of heads with at most this many score cells (32 MiB a float32 stage)
#: runs as one block: whole arrays on the calling thread, every BLAS (and torch) thread
#: helping, as a hand-written pass runs. Below this, the block threads cost more than the
#: second core gives back: limiting BLAS (threadpoolctl scans the loaded libraries, about
#: 1 ms), starting threads, per-block steps and, on torch, copying each block's stages into
#: the kept arrays (on a quiet 2-core machine n = 256 took 12.0 ms on numpy against 8.98 for
#: the hand-written reference, and 10.3 against 3.42 on torch's cpu; n = 1024 82.6 against
#: 67.8 and 81.8 against 57.7).
ONE_BLOCK_ELEMENTS = 8 * 1024 * 1024


def full_trace_rows(lib, heads: int, n: int, m: int, threads: int, kept: bool = True) -> int:
    """Query rows per block of a full trace's chunk of ``heads`` heads: all ``n`` for a chunk
    of at most :data:`ONE_BLOCK_ELEMENTS` cells, and on torch's cpu (:func:`whole_chunks`)
    for a chunk whose heads are all ``kept`` or of at most :data:`~.row_blocks.CHUNK_ELEMENTS`
    cells; else blocks that give each of ``threads`` threads at least one
    (:func:`~.row_blocks.full_block_elements`)."""
    cells = heads * n * m
    if cells <= ONE_BLOCK_ELEMENTS:
        return n
    if whole_chunks(lib) and (kept or cells <= CHUNK_ELEMENTS):
        return n
    return row_block(heads, n, m, full_block_elements(cells, threads))


def whole_chunks(lib) -> bool:
    """True for torch on the cpu: a full trace's chunks run whole there, every torch thread
    helping (torch's own ops use every core, as a hand-written pass does). In blocks, each
    block's stages would be made, then copied into the kept arrays: at n = 4096 that is
    2 GiB copied a pass (1.20 against the reference on a quiet 2-core machine). Whole, the
    stages are the kept arrays themselves. A chunk of heads that are not kept (computed for
    the output only) stays within the memory bound of a chunk: its stages are temporaries."""
    return lib.backend.name == "torch" and lib.backend.device == "cpu"


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system tells it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on Linux
        return max(1, os.cpu_count() or 1)


class BlockRunner:
    """Runs the row blocks of one pass; keeps each thread's scratch arrays between chunks.

    ``attend(r, buffers)`` computes the block of rows ``r`` (a dict of ``[c, rows, ·]``
    arrays, ``head_outputs`` among them), ``sink.buffers(r, scratch)`` says where its steps
    write and ``sink.add(r, values)`` takes the block.
    """

    def __init__(self, lib, m: int, threads: int = 1):
        self.lib, self.m, self.threads = lib, m, max(1, threads)
        self._scratch: list[RowBuffers | None] = [None] * self.threads

    def _scratch_for(self, worker: int, heads: int, block: int, n: int) -> RowBuffers | None:
        if block >= n or self.lib.backend.name != "numpy":
            return None
        if self._scratch[worker] is None:
            self._scratch[worker] = RowBuffers(self.lib.dtype, heads, block, self.m)
        return self._scratch[worker]

    def run(self, attend: Callable, sink, heads: int, n: int, block: int) -> list:
        """Every block of ``n`` rows, ``block`` at a time; the head outputs ``[c, rows, d_v]``
        of the blocks in row order (empty when not computed)."""
        starts = list(range(0, n, block))
        if len(starts) == 1:  # whole arrays: every BLAS thread helps
            return self._blocks(attend, sink, heads, n, block, starts, 0)
        workers = min(self.threads, len(starts))
        with one_blas_thread():
            if workers == 1:
                return self._blocks(attend, sink, heads, n, block, starts, 0)
            ranges = [list(part) for part in np.array_split(np.asarray(starts), workers)]
            errors = np.geterr()  # numpy's error state is per thread: the same in each
            results: list = [None] * workers  # each thread's head outputs, or its exception
            threads = [
                threading.Thread(
                    target=self._on_thread,
                    args=(results, i, errors, attend, sink, heads, n, block, ranges[i], i),
                    name=f"row-blocks-{i}",
                )
                for i in range(1, workers)
            ]
            for thread in threads:
                thread.start()
            try:
                results[0] = self._blocks(attend, sink, heads, n, block, ranges[0], 0)
            finally:
                for thread in threads:
                    thread.join()
            outs = []
            for result in results:
                if isinstance(result, BaseException):
                    raise result  # what a thread raised (an overflow)
                outs += result
            return outs

    def _on_thread(self, results: list, slot: int, errors: dict, *args) -> None:
        try:
            with np.errstate(**errors):
                results[slot] = self._blocks(*args)
        except BaseException as exc:  # handed to the calling thread
            results[slot] = exc

    def _blocks(self, attend, sink, heads: int, n: int, block: int, starts, worker: int) -> list:
        scratch = self._scratch_for(worker, heads, block, n)
        outs = []
        for r0 in starts:
            r = slice(int(r0), min(n, int(r0) + block))
            values = attend(r, sink.buffers(r, scratch))
            sink.add(r, values)
            if values["head_outputs"] is not None:
                outs.append(values["head_outputs"])  # [c, rows, d_v]
            del values
        return outs
