"""Sinks: where each (chunk of heads, block of query rows) of attention goes.

:func:`~attention_explorer.engine.compute.compute` walks the heads a chunk at a time and each
chunk's query rows a block at a time (:mod:`.row_blocks`); it hands every block's square
stages (``[c, rows, m]``: scores, scaled, masked, weights) to a sink, and each chunk's other
per-head stages (Q, K, V, head outputs) at the chunk's end. Two sinks:

- :class:`FullSink` keeps the selected heads' square stages at full resolution ``[s, n, m]``.
  A chunk in one block keeps the arrays themselves; a chunk in several blocks fills arrays
  made once (from the caller's :class:`~.cache.EngineCache` pool when given), and on numpy the
  steps write straight into them (:class:`DirectBuffers`), so no block is copied.
- :class:`PreviewSink` shrinks each block to display resolution as it comes
  (:class:`~.preview.SquarePreviews`) and keeps, instead of the square stages, what
  recomputing any row takes (:class:`~.recompute.RowSource`).

Only the selected heads are kept; a chunk may also hold heads that only the concatenated
output needs (their blocks are passed by).
"""

from __future__ import annotations

import numpy as np

from attention_explorer.engine.backend import ArrayLib
from attention_explorer.engine.cache import EngineCache, empty_array
from attention_explorer.engine.preview import SquarePreviews, aligned_block
from attention_explorer.engine.recompute import RecomputedStage, RowSource
from attention_explorer.engine.row_blocks import RowBuffers


class HeadParts:
    """Per-head stages of the selected heads, gathered chunk by chunk and joined at the end."""

    def __init__(self, names) -> None:
        self.names = tuple(names)  #: the stages :meth:`add` takes from each chunk
        self.parts: dict[str, list] = {name: [] for name in names}

    def add(self, values: dict, pick) -> None:
        """Append ``values[name][pick]`` for each of :attr:`names` (``pick``: the selected
        heads)."""
        for name in self.names:
            value = values[name]
            self.parts[name].append(value if isinstance(pick, slice) else value[pick])

    def append(self, name: str, value) -> None:
        """Append one chunk's selected heads of stage ``name`` ``[s', rows, cols]``."""
        self.parts.setdefault(name, []).append(value)

    def join(self, lib: ArrayLib, kept: dict) -> None:
        """Join each stage's chunks along the heads into ``kept`` (as numpy arrays)."""
        for name in list(self.parts):
            chunks = self.parts.pop(name)  # dropped once joined: no stage is held twice for long
            if len(chunks) == 1 or not isinstance(chunks[0], np.ndarray):
                joined = chunks[0] if len(chunks) == 1 else lib.xp.concat(chunks, axis=0)
            else:
                joined = np.concatenate(chunks, axis=0)  # [s, rows, cols]
            kept[name] = lib.to_numpy(joined)
            del chunks


class _Sink:
    """What both sinks share: which heads of the current chunk are kept."""

    def __init__(self, lib: ArrayLib, selected, square, others, n: int, m: int) -> None:
        self.lib, self.selected, self.n, self.m = lib, tuple(selected), n, m
        self.square = list(square)  #: the kept square stages, in pipeline order
        self.heads = HeadParts(others)  #: the other kept per-head stages
        self.rows: list[int] = []  #: positions of the selected heads in the current chunk
        self.pick: slice | list[int] = slice(None)  #: those positions, as an index
        self.done = 0  #: selected heads finished in earlier chunks

    def start_chunk(self, chunk_heads, rows: int) -> int:
        """Begin a chunk of ``chunk_heads``; returns its query rows per block."""
        self.rows = [i for i, head in enumerate(chunk_heads) if head in self.selected]
        self.pick = slice(None) if len(self.rows) == len(chunk_heads) else self.rows
        return rows

    def buffers(self, r: slice, scratch: RowBuffers | None):
        """Where the steps of the block of rows ``r`` write: a thread's reused ``scratch``
        arrays (numpy, several blocks), or None (each step makes its arrays)."""
        return scratch

    def end_chunk(self, values: dict) -> None:
        """The chunk's Q, K, V and head outputs (``values``), kept for the selected heads."""
        if self.rows:
            self.heads.add(values, self.pick)
        self.done += len(self.rows)


class DirectBuffers:
    """Buffers whose kept stages are rows ``r`` of the full arrays (numpy): the steps write
    the block where it stays; stages not kept go to the reused scratch arrays."""

    def __init__(self, full: dict[str, np.ndarray], r: slice, scratch: RowBuffers) -> None:
        self.full, self.r, self.scratch = full, r, scratch

    def take(self, name: str, heads: int, rows: int) -> np.ndarray:
        """Rows ``r`` of the kept stage ``name`` ``[heads, rows, m]``, else scratch."""
        target = self.full.get(name)
        if target is None:
            return self.scratch.take(name, heads, rows)
        return target[:heads, self.r.start : self.r.start + rows]


class FullSink(_Sink):
    """Keeps the selected heads' square stages at full resolution."""

    def __init__(self, lib, selected, square, others, n, m, cache: EngineCache | None = None):
        super().__init__(lib, selected, square, others, n, m)
        self.cache = cache
        self.full: dict[str, object] = {}  # the current chunk's kept [s', n, m] stages
        self.single = True

    def start_chunk(self, chunk_heads, rows: int) -> int:
        """Begin a chunk; with several blocks, its kept square stages are made here."""
        rows = super().start_chunk(chunk_heads, rows)
        self.single = rows >= self.n
        self.full = {}
        if not self.single and self.rows:
            shape, dtype = (len(self.rows), self.n, self.m), np.dtype(self.lib.dtype_name)
            self.full = {name: empty_array(self.cache, shape, dtype) for name in self.square}
        return rows

    def buffers(self, r: slice, scratch: RowBuffers | None):
        """Numpy, every head of the chunk kept: the kept stages' own rows (no copy)."""
        if scratch is None or not self.full or not isinstance(self.pick, slice):
            return scratch
        return DirectBuffers(self.full, r, scratch)

    def add(self, r: slice, values: dict) -> None:
        """Block of rows ``r``: ``values[name] [c, rows, m]`` (arrays of the pass's lib)."""
        if self.single:  # one block: keep the arrays themselves, no copy
            self.full = {name: values[name] for name in self.square}
            return
        if not self.rows:
            return
        for name in self.square:
            target = self.full[name][:, r]  # [s', rows, m]
            part = values[name]
            if isinstance(part, np.ndarray) and np.may_share_memory(part, target):
                continue  # written in place (DirectBuffers)
            part = self.lib.to_numpy(part)  # [c, rows, m]
            target[...] = part if isinstance(self.pick, slice) else part[self.pick]

    def end_chunk(self, values: dict) -> None:
        """Keep the chunk's per-head stages and its square stages."""
        if self.rows:
            picked = self.single and not isinstance(self.pick, slice)  # else [s', n, m]
            for name in self.square:
                whole = self.full[name]  # [c, n, m] (one block) or [s', n, m]
                self.heads.append(name, whole[self.pick] if picked else whole)
        self.full = {}
        super().end_chunk(values)

    def finish(self, kept: dict, previews: dict) -> None:
        """Every kept per-head stage into ``kept``."""
        self.heads.join(self.lib, kept)


class PreviewSink(_Sink):
    """Shrinks the square stages block by block; keeps what recomputing their rows takes."""

    def __init__(self, lib, config, selected, square, others, allowed_np, allowed, rules, cache):
        n, m = allowed_np.shape
        super().__init__(lib, selected, square, others, n, m)
        self.config, self.allowed_np, self.allowed = config, allowed_np, allowed
        self.factor, self.any_fully_masked, limit = rules
        self.previewer = SquarePreviews(
            self.square, len(self.selected), n, m, limit, self.factor, allowed_np, cache
        )
        self.previewer.capped = config.softcap is not None
        self.q: list = []  # the selected heads' q [c', n, d_k], chunk by chunk
        self.k: list = []  # ... and k [c', m, d_k]
        self.sink_logits: list = []  # ... and their sink logits [c'] (attention sinks)

    def start_chunk(self, chunk_heads, rows: int) -> int:
        """Blocks start where display blocks start, so previews are exact shrinks."""
        rows = super().start_chunk(chunk_heads, rows)
        return min(self.n, aligned_block(rows, self.previewer.block[0]))

    def add(self, r: slice, values: dict) -> None:
        """Shrink the selected heads' rows ``r`` of every kept square stage."""
        if not self.rows:  # a chunk without a selected head gives only head outputs
            return
        parts = {
            name: self.lib.to_numpy(values[name])[self.pick]  # [c', rows, m]
            for name in self.square
            if values[name] is not None
        }
        self.previewer.add(r.start, parts, self.allowed_np[r], first_head=self.done)

    def end_chunk(self, values: dict) -> None:
        """Keep the chunk's per-head stages, and its selected heads' q and k."""
        if self.rows:  # rows read the q and k the scores read (rotated, normed or as made)
            self.q.append(values["scores_q"][self.pick])  # [c', n, d_k]
            self.k.append(values["scores_k"][self.pick])  # [c', m, d_k]
            if values.get("sink_logits") is not None:
                self.sink_logits.append(values["sink_logits"][self.pick])  # [c']
        super().end_chunk(values)

    def finish(self, kept: dict, previews: dict) -> None:
        """The previews into ``previews``, recomputing stand-ins and the rest into ``kept``."""
        xp = self.lib.xp
        source = RowSource(
            self.lib,
            self.config,
            self.q[0] if len(self.q) == 1 else xp.concat(self.q, axis=0),  # [s, n, d_k]
            self.k[0] if len(self.k) == 1 else xp.concat(self.k, axis=0),  # [s, m, d_k]
            self.allowed,
            self.factor,
            self.any_fully_masked,
            xp.concat(self.sink_logits, axis=0) if self.sink_logits else None,  # [s]
        )
        for name, preview in self.previewer.results().items():
            previews[name] = preview
            kept[name] = RecomputedStage(source, name)
        self.heads.join(self.lib, kept)
