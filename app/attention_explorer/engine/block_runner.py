"""One chunk of heads through its query rows, a block at a time: on one thread or on every core.

Row blocks (:mod:`.row_blocks`) are many small steps: a ``[c, 32, 64] @ [c, 64, 1024]``
product, a softmax over a 1 MiB block. Several BLAS (or torch) threads per step only wait for
each other, which on busy cores turned a 0.1 s pass into 0.5 to 1.5 s. So every block runs
on one BLAS thread, and the cores are used by handing the blocks to several Python threads
instead (numpy and torch release the GIL inside each step): each thread takes a contiguous
range of blocks with its own scratch arrays, and writes its rows where they belong (the
sinks' rows never overlap).

- A full trace (exports, ``ae.compute``, the command line) has the machine to itself: its
  blocks go to as many threads as there are usable cores.
- A previewed pass (the window's worker, while the GUI thread paints) stays on one thread:
  there, two threads measured slower (72 vs 61 ms a pass at n = 4096 on 2 busy cores).
- A chunk in one block runs its steps as whole arrays, with every BLAS thread.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from attention_explorer.engine.blas_threads import one_blas_thread
from attention_explorer.engine.row_blocks import RowBuffers


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
            with ThreadPoolExecutor(workers - 1, thread_name_prefix="row-blocks") as pool:
                later = [
                    pool.submit(self._on_thread, errors, attend, sink, heads, n, block, part, i)
                    for i, part in enumerate(ranges[1:], start=1)
                ]
                outs = self._blocks(attend, sink, heads, n, block, ranges[0], 0)
                for future in later:
                    outs += future.result()  # raises what the thread raised (an overflow)
            return outs

    def _on_thread(self, errors: dict, *args) -> list:
        with np.errstate(**errors):
            return self._blocks(*args)

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
