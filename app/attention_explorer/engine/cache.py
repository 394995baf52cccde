"""EngineCache: everything one caller's passes reuse, in one object the caller owns.

:func:`~attention_explorer.engine.compute.compute` is pure without a cache: every array it
returns is new. A caller that computes again and again (the window's LiveTrace) passes an
``EngineCache`` and its passes then reuse

- the last mask made (by kind, n, m and padded keys): edits that leave the mask alone get the
  same read-only array (a 4096 x 4096 mask is 16 MiB of fresh memory, 3 to 35 ms to make);
- the previews of that read-only mask (its max and mean pictures), kept while it is asked for;
- the memory of large stages (:class:`~.stage_pool.StagePool`), reused once no array of an
  older trace refers to it.

Nothing is shared between two caches, so two passes that may overlap (a stale pass on the
window's worker thread and a new inline one) each get their own. One cache's methods may be
called from several threads (a lock guards each), but a cache is meant for one pass at a time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable

import numpy as np

from attention_explorer.engine.stage_pool import StagePool

#: Previews of the read-only arrays asked for (the shared mask) kept at once.
REMEMBERED_PREVIEWS = 4


class EngineCache:
    """The reusable state of one caller's passes: last mask, its previews, a stage pool."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._mask: tuple[Hashable, np.ndarray] | None = None  # (key, [n, m] read-only)
        self._previews: dict[tuple[int, str, int], tuple[np.ndarray, object]] = {}
        self.pool = StagePool()  #: memory of large stages

    def mask(self, key: Hashable, make: Callable[[], np.ndarray]) -> np.ndarray:
        """The mask remembered under ``key``, else ``make()`` (read-only) remembered now."""
        with self._lock:
            if self._mask is not None and self._mask[0] == key:
                return self._mask[1]
        made = make()
        with self._lock:
            self._mask = (key, made)
        return made

    def preview(self, values: np.ndarray, how: str, limit: int, make: Callable[[], object]):
        """The preview of the read-only array ``values`` by rule ``how`` at ``limit``: the
        remembered one when the same array was asked for before, else ``make()``. Previews of
        older arrays are let go (an older mask is not kept alive: 256 MiB at 16384 tokens)."""
        key = (id(values), how, limit)
        with self._lock:
            known = self._previews.get(key)
            if known is not None and known[0] is values:
                return known[1]
        made = make()
        if values.flags.writeable:  # may change after this: never remembered
            return made
        with self._lock:
            for other in [k for k, (array, _) in self._previews.items() if array is not values]:
                del self._previews[other]
            while len(self._previews) >= REMEMBERED_PREVIEWS:
                self._previews.pop(next(iter(self._previews)))
            self._previews[key] = (values, made)
        return made

    def empty(self, shape: tuple[int, ...], dtype) -> np.ndarray:
        """An uninitialised array for a large stage, from the pool (see :class:`StagePool`)."""
        return self.pool.empty(shape, dtype)


def empty_array(cache: EngineCache | None, shape: tuple[int, ...], dtype) -> np.ndarray:
    """``cache.empty(shape, dtype)``, or a fresh ``np.empty`` without a cache."""
    return np.empty(shape, dtype) if cache is None else cache.empty(shape, dtype)
