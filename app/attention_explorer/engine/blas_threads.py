"""One BLAS thread for many small products (threadpoolctl, when installed).

Row blocks and model layers multiply small matrices (``[64, 8] @ [8, 4096]``, ``[n, 384] @
[384, 1536]``) many times in a row. With several BLAS threads each product wakes the others
and waits for them; on two busy cores that made a pass at n = 4096 take 0.5 to 1.5 s instead
of 50 ms. Without threadpoolctl nothing changes.
"""

from __future__ import annotations

import contextlib
from functools import lru_cache


@lru_cache(maxsize=1)
def _controller():
    """threadpoolctl's controller of the loaded BLAS (numpy's), or None without threadpoolctl."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    return ThreadpoolController()


def one_blas_thread():
    """A context in which BLAS uses one thread (a no-op without threadpoolctl)."""
    controller = _controller()
    if controller is None:
        return contextlib.nullcontext()
    return controller.limit(limits=1, user_api="blas")
