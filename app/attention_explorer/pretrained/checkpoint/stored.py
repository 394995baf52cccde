"""Weights left in the memory-mapped checkpoint until a run needs them.

A 0.5B model stored in bfloat16 is 0.9 GiB; the same weights in float32 are 1.8 GiB and in
float64 3.7 GiB. Converting everything at load time made a 0.5B model's overview take 5x the
checkpoint's size in RAM. Here instead:

- :class:`StoredLayers` converts one layer to the run's dtype when the run reaches it and keeps
  the last two (or every layer, when they all fit in :data:`KEEP_CONVERTED_BYTES`: small models
  then convert once). After converting, the layer's file pages are handed back.
- :class:`StoredTable` is a ``[rows, d]`` table (the word embeddings, an untied output head):
  a lookup converts only the rows asked for, and the output head reads it in blocks of rows,
  so the 151,936 x 896 table of a Qwen2.5-0.5B is never whole in float32. A tied head is the
  same table object as the word embeddings.

:func:`memory_need` estimates what running a checkpoint needs, from its headers alone, so a
model too big for this machine is refused before anything is read (:func:`check_memory`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from attention_explorer.engine.budget import available_memory  # noqa: F401 - read as stored.available_memory
from attention_explorer.pretrained.checkpoint.tensor_file import TensorFile
from attention_explorer.pretrained.model_errors import ModelError

#: Converted layers are all kept when together they fit in this many bytes (else 2 are kept).
KEEP_CONVERTED_BYTES = 512 * 2**20
#: Layers kept converted when not all are (the one running and the one before).
RECENT_LAYERS = 2
#: Rows of a table the output head converts at a time (8192 x 896 float32: 28 MiB).
BLOCK_ROWS = 8192
#: Memory for everything but the weights: Python, numpy, the tokenizer, activations.
WORKING_BYTES = 256 * 2**20


class StoredTable:
    """A ``[rows, d]`` table left in the checkpoint; rows are converted when read."""

    def __init__(self, tensors: TensorFile, key: str):
        self.tensors, self.key = tensors, key
        self.shape: tuple[int, ...] = tuple(tensors.info(key)[1])  # [rows, d]

    def __len__(self) -> int:
        return self.shape[0]

    def rows(self, ids, dtype) -> np.ndarray:
        """Rows ``ids`` as a new ``[len(ids), d]`` array of ``dtype``."""
        return self.tensors.take(self.key, np.asarray(ids, dtype=np.int64), dtype)  # [n, d]

    def blocks(self, dtype, size: int = BLOCK_ROWS) -> Iterator[tuple[int, np.ndarray]]:
        """``(first row, rows [<= size, d])`` over the whole table, converted a block at a
        time; each block's pages are handed back once the whole table is read."""
        for lo in range(0, self.shape[0], size):
            yield lo, self.tensors.rows(self.key, lo, min(lo + size, self.shape[0]), dtype)
        self.tensors.release(self.key)

    def full(self, dtype) -> np.ndarray:
        """The whole table as one ``[rows, d]`` array of ``dtype`` (a copy: large)."""
        return self.tensors.rows(self.key, 0, self.shape[0], dtype)


class StoredLayers(Sequence):
    """The layers of a model, each built (read and converted) by ``build(i)`` on first use.

    ``keys[i]`` are layer i's tensor names, whose pages are handed back after it is built.
    ``keep``: keep every built layer; else only the :data:`RECENT_LAYERS` latest.
    Safe to use from several threads (the model panel runs in a worker thread).
    """

    def __init__(self, build: Callable, count: int, keys, tensors: TensorFile, keep: bool):
        self._build, self._count, self._keys, self._tensors = build, count, keys, tensors
        self.keep = keep
        self._cache: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(self._count))]
        if not -self._count <= i < self._count:
            raise IndexError(f"layer {i} of {self._count}")
        i %= self._count
        with self._lock:
            if i in self._cache:
                self._cache.move_to_end(i)
                return self._cache[i]
            layer = self._build(i)
            for key in self._keys[i]:
                self._tensors.release(key)
            self._cache[i] = layer
            while not self.keep and len(self._cache) > RECENT_LAYERS:
                self._cache.popitem(last=False)
            return layer


def gib(count: int) -> str:
    """Bytes as a short GiB figure: ``1.4 GiB``."""
    return f"{count / 2**30:.1f} GiB"


def memory_need(stored: int, converted: Sequence[int], keep: bool) -> int:
    """Bytes a run needs: the mapped checkpoint (``stored`` bytes, resident while it is read),
    the converted layers (``converted``: each layer's bytes in the run's dtype; all of them
    when ``keep``, else the two largest) and :data:`WORKING_BYTES`."""
    layers = sorted(converted, reverse=True)
    return stored + sum(layers if keep else layers[:RECENT_LAYERS]) + WORKING_BYTES


def check_memory(name: str, need: int, available: int | None) -> None:
    """A ModelError naming the need and what is available when the model will not fit."""
    if available is not None and need > available:
        raise ModelError(
            "memory",
            f"{name} needs about {gib(need)} of memory to run and this machine has "
            f"{gib(available)} available: close other programs or choose a smaller model",
        )
