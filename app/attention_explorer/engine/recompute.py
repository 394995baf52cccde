"""Full-resolution rows of a previewed stage, recomputed when something reads them.

A pass that made previews (:mod:`.preview`) keeps no [n, m] stage. What it keeps instead is
all that any query row needs: each kept head's Q and K, the mask, the scale factor and the
normaliser (a :class:`RowSource`, a few MiB at n = 4096). A :class:`RecomputedStage` stands
where the stage would be: indexing it by rows (a hovered cell, the walkthrough's row, a
zoomed region) runs exactly those rows through the same row-block code as the pass, with the
same backend and dtype, and returns numpy arrays; anything else (``np.asarray``, arithmetic,
reductions) computes the whole stage a block of rows at a time. So every reader keeps working
unchanged, and the ones on the interactive path pay for the rows they read.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

from attention_explorer.engine.row_blocks import RowBuffers, attend_rows, row_block
from attention_explorer.engine.trace import SQUARE_STAGES

#: Requests of at most this many rows are remembered (all square stages of them) ...
REMEMBERED_ROWS = 16
#: ... this many at a time (at n = 4096: 16 x 4096 x 4 stages x 4 bytes = 1 MiB each).
REMEMBERED_BLOCKS = 8


class RowSource:
    """What recomputing any query rows of the kept heads' square stages takes.

    ``q [s, n, d_k]`` and ``k [s, m, d_k]`` of the kept heads (arrays of ``lib``),
    ``allowed [n, m]`` the mask (``lib`` booleans), ``factor`` scale / temperature,
    ``sinks [s]`` the kept heads' sink logits (attention sinks; else None).
    """

    def __init__(
        self, lib, config, q, k, allowed, factor: float, any_fully_masked: bool, sinks=None
    ):
        self.lib, self.config, self.sinks = lib, config, sinks
        self.q, self.k, self.allowed = q, k, allowed
        self.factor, self.any_fully_masked = factor, any_fully_masked
        self.heads, self.n = int(q.shape[0]), int(q.shape[1])
        self.m = int(k.shape[1])
        self.dtype = np.dtype(lib.dtype_name)
        self._recent: OrderedDict[tuple[int, int, int], dict[str, np.ndarray]] = OrderedDict()
        self._lock = threading.Lock()

    def rows(self, name: str, head: int, r0: int, r1: int) -> np.ndarray:
        """Rows ``r0:r1`` of stage ``name`` of kept head number ``head``: ``[r1 - r0, m]``.

        A few rows (up to :data:`REMEMBERED_ROWS`) are remembered with every square stage
        made with them: the walkthrough and a hover read the same row of several stages.
        Remembered rows are read-only; other results are fresh arrays.
        """
        small = 0 < r1 - r0 <= REMEMBERED_ROWS
        if small:
            with self._lock:
                known = self._recent.get((head, r0, r1))
                if known is not None:
                    self._recent.move_to_end((head, r0, r1))
                    return known[name]
        made = self._compute(head, r0, r1)
        if small:
            for block in made.values():
                block.setflags(write=False)
            with self._lock:
                self._recent[(head, r0, r1)] = made
                while len(self._recent) > REMEMBERED_BLOCKS:
                    self._recent.popitem(last=False)
        return made[name]

    def _compute(self, head: int, r0: int, r1: int) -> dict[str, np.ndarray]:
        """Rows ``r0:r1`` of every square stage of kept head number ``head``."""
        out = {name: np.empty((max(0, r1 - r0), self.m), self.dtype) for name in SQUARE_STAGES}
        step = row_block(1, self.n, self.m)
        # numpy: the pass's own scratch-array code, so the rows come out as the pass made them
        numpy = self.lib.backend.name == "numpy"
        buffers = RowBuffers(self.dtype, 1, min(step, max(1, r1 - r0)), self.m) if numpy else None
        sink_of_head = {} if self.sinks is None else {"sinks": self.sinks[head : head + 1]}  # [1]
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            for start in range(r0, r1, step):
                stop = min(r1, start + step)
                values = attend_rows(
                    self.lib,
                    self.config,
                    self.q[head : head + 1, start:stop],  # [1, rows, d_k]
                    self.k[head : head + 1],  # [1, m, d_k]
                    None,
                    self.allowed[start:stop],  # [rows, m]
                    self.factor,
                    False,
                    self.any_fully_masked,
                    SQUARE_STAGES,
                    False,
                    buffers,
                    **sink_of_head,
                )
                for name in SQUARE_STAGES:  # [rows, m] each (a stage this config lacks: 0)
                    value = values[name]
                    part = 0.0 if value is None else self.lib.to_numpy(value)[0]
                    out[name][start - r0 : stop - r0] = part
        return out


def _plain(value):
    """``value`` with every RecomputedStage inside (lists, tuples) made a numpy array."""
    if isinstance(value, RecomputedStage):
        return np.asarray(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    return value


class RecomputedStage(NDArrayOperatorsMixin):
    """A square stage ``[s, n, m]`` (or one head's ``[n, m]``) whose rows are computed when read.

    Integer and contiguous-slice row indexing recompute just those rows; everything else
    behaves as the numpy array of the whole stage would (made on demand, not kept).
    """

    def __init__(self, source: RowSource, name: str, head: int | None = None):
        self._source, self._name, self._head = source, name, head

    # -- array-like basics ---------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        """``(n, m)`` for one head, ``(s, n, m)`` for all kept heads."""
        s = self._source
        return (s.n, s.m) if self._head is not None else (s.heads, s.n, s.m)

    @property
    def ndim(self) -> int:
        """2 for one head, 3 for all kept heads."""
        return len(self.shape)

    @property
    def dtype(self) -> np.dtype:
        """The dtype of the pass (float32, or float64 after an overflow)."""
        return self._source.dtype

    @property
    def size(self) -> int:
        """Number of cells."""
        return int(np.prod(self.shape))

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        return f"RecomputedStage({self._name!r}, shape={self.shape}, dtype={self.dtype})"

    # -- reading -------------------------------------------------------------------------------
    def _all_rows(self, head: int) -> np.ndarray:
        return self._source.rows(self._name, head, 0, self._source.n)  # [n, m]

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        if self._head is not None:
            full = self._all_rows(self._head)  # [n, m]
        else:
            full = np.stack([self._all_rows(h) for h in range(self._source.heads)])  # [s, n, m]
        return full if dtype is None else full.astype(dtype, copy=False)

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        if self._head is None:  # [s, n, m]: an integer first picks a head
            if key and isinstance(key[0], (int, np.integer)):
                head = range(self._source.heads)[int(key[0])]  # IndexError when outside
                one = RecomputedStage(self._source, self._name, head)
                return one[key[1:]] if len(key) > 1 else one
            return np.asarray(self)[key]
        if not key:
            return np.asarray(self)
        first, rest = key[0], key[1:]
        n = self._source.n
        if isinstance(first, (int, np.integer)):
            row = range(n)[int(first)]  # IndexError when outside, like numpy
            values = self._source.rows(self._name, self._head, row, row + 1)[0]  # [m]
            return values[rest] if rest else values
        if isinstance(first, slice):
            start, stop, step = first.indices(n)
            if step == 1:
                block = self._source.rows(self._name, self._head, start, max(start, stop))
                return block[(slice(None), *rest)] if rest else block  # [rows, ...]
        return np.asarray(self)[key]

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if "out" in kwargs:
            kwargs["out"] = _plain(kwargs["out"])
        return getattr(ufunc, method)(*_plain(inputs), **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return func(*_plain(args), **{k: _plain(v) for k, v in kwargs.items()})

    def __getattr__(self, attr: str):
        if attr.startswith("_"):
            raise AttributeError(attr)
        return getattr(np.asarray(self), attr)  # .min(), .astype(), .T …: the whole stage
