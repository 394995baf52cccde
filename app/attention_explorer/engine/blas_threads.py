"""BLAS (and torch) held to a number of threads for a stretch of work (threadpoolctl, when
installed).

Row blocks and model layers multiply small matrices (``[64, 8] @ [8, 4096]``, ``[n, 384] @
[384, 1536]``) many times in a row. With several BLAS threads each product wakes the others
and waits for them; on two busy cores that made a pass at n = 4096 take 0.5 to 1.5 s instead
of 50 ms. Without threadpoolctl nothing changes. torch's own intra-op threads behave the
same (a row-block pass at n = 4096 on torch's cpu: 1120 ms with them, 90 ms with one), so
when torch is loaded they are limited as well, and restored afterwards.

Work that runs alone (a script's model run, a full trace) keeps every thread: ``limit=None``.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator


def _blas_limit(count: int):
    """A context holding the loaded BLAS (numpy's) to ``count`` threads, or None without
    threadpoolctl (which keeps its own view of the loaded libraries: nothing is kept here)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return None
    return threadpool_limits(limits=count, user_api="blas")


@contextlib.contextmanager
def blas_threads(limit: int | None) -> Iterator[None]:
    """A context in which BLAS (with threadpoolctl) and torch, when loaded, use at most
    ``limit`` threads; ``None`` changes nothing (every core)."""
    if limit is None:
        yield
        return
    with contextlib.ExitStack() as stack:
        held = _blas_limit(limit)
        if held is not None:
            stack.enter_context(held)
        torch = sys.modules.get("torch")
        before = torch.get_num_threads() if torch is not None else 1
        if before > limit:
            torch.set_num_threads(limit)
            stack.callback(torch.set_num_threads, before)
        yield


def one_blas_thread() -> contextlib.AbstractContextManager[None]:
    """A context in which BLAS (with threadpoolctl) and torch, when loaded, use one thread."""
    return blas_threads(1)
