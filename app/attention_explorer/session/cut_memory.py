"""What a size change cut off, kept so that growing the size again brings it back.

Going from 4 tokens to 2 and back to 4 gives the two cut rows (and names) back, not new
random ones; d_model 8 -> 4 -> 8 gives the cut columns back. :mod:`.resize` asks this memory
in :func:`~attention_explorer.session.resize.fit`: each cut array is remembered by its
content (shape and bytes), with the larger array it was cut from, so any later ``fit`` of the
same numbers to a larger shape finds it, through any chain of cuts (8 -> 4 -> 2 -> 8). An
edit changes the content: an edited matrix grows with new values, as before.

The memory lives as long as the program (the learner's session), holds at most
:data:`CAPACITY` cuts (oldest forgotten first) and is never saved. Undo is unaffected: it
restores whole states from the history.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict

import numpy as np

#: Cuts remembered at most (each holds the larger array it was cut from).
CAPACITY = 256


def _key(array: np.ndarray) -> tuple:
    """The identity of an array's content: shape, dtype and a digest of its bytes."""
    data = np.ascontiguousarray(array)
    digest = hashlib.blake2b(data.tobytes(), digest_size=16).digest()
    return (data.shape, data.dtype.str, digest)


def _overlap(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[slice, ...]:
    """The slices of the region two shapes share from their origin."""
    return tuple(slice(0, min(x, y)) for x, y in zip(a, b))


class CutMemory:
    """Arrays and token names cut by size changes, looked up by what was kept."""

    def __init__(self, capacity: int = CAPACITY):
        self.capacity = capacity
        self._arrays: OrderedDict[tuple, np.ndarray] = OrderedDict()
        self._names: OrderedDict[tuple[str, ...], tuple[str, ...]] = OrderedDict()

    def clear(self) -> None:
        """Forget every cut."""
        self._arrays.clear()
        self._names.clear()

    def _keep(self, store: OrderedDict, key, value) -> None:
        store[key] = value
        store.move_to_end(key)
        while len(store) > self.capacity:
            store.popitem(last=False)

    def whole(self, array: np.ndarray) -> np.ndarray:
        """The largest known array ``array`` is the start of: what it was cut from (with
        ``array``'s own numbers where they overlap), or ``array`` itself."""
        full = self._arrays.get(_key(array))
        if full is None or full.ndim != array.ndim:
            return array
        shape = tuple(max(x, y) for x, y in zip(full.shape, array.shape))
        out = np.zeros(shape, dtype=np.result_type(full, array))  # shape
        out[_overlap(shape, full.shape)] = full
        out[_overlap(shape, array.shape)] = array
        return out

    def remember(self, kept: np.ndarray, source: np.ndarray) -> None:
        """``kept`` was cut from ``source`` (itself maybe cut earlier): remember the whole."""
        whole = self.whole(source)
        if any(w > k for w, k in zip(whole.shape, kept.shape)):
            self._keep(self._arrays, _key(kept), whole)

    def regrow(self, array: np.ndarray, out: np.ndarray) -> None:
        """Write into ``out`` (a larger fit of ``array``) the remembered numbers ``array`` was
        cut from, where ``out`` reaches past ``array``; ``array``'s own numbers are left to
        the caller."""
        whole = self.whole(array)
        if whole is not array and whole.ndim == out.ndim:
            region = _overlap(out.shape, whole.shape)
            out[region] = whole[region]

    def remember_names(self, kept: tuple[str, ...], source: tuple[str, ...]) -> None:
        """Token names ``kept`` were cut from ``source``: remember the longer list."""
        whole = self.names(source)
        if len(whole) > len(kept):
            self._keep(self._names, tuple(kept), tuple(whole))

    def names(self, kept: tuple[str, ...]) -> tuple[str, ...]:
        """The longest known list of names starting with ``kept`` (``kept`` when none)."""
        whole = self._names.get(tuple(kept))
        return tuple(kept) + whole[len(kept) :] if whole is not None else tuple(kept)


#: The program's memory of cuts (one learner, one session at a time).
MEMORY = CutMemory()
