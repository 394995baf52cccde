"""A model's weights as torch tensors, for the model run on torch
(:mod:`~attention_explorer.pretrained.torch_host`).

:func:`on_torch` gives the same
:class:`~attention_explorer.pretrained.checkpoint.weights.ModelWeights` with every array a tensor
on a device and ``library="torch"``, so ``forward.py`` runs it unchanged. On the cpu a tensor
shares the numpy array's memory (no copy); on a GPU each
weight is copied there once. Layers follow the numpy layers' policy: when every converted
layer is kept (small models), their tensors are kept too; otherwise a layer's tensors are
made when a run reaches it. The word table and an untied output head stay in the checkpoint:
the rows a run reads are converted and moved then.

Imported only when a run asks for torch.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import fields, replace

import numpy as np
import torch

from attention_explorer.pretrained.checkpoint.weights import LayerWeights, ModelWeights
from attention_explorer.pretrained.torch_host import NUMPY_DTYPES


def tensor(array, device: str):
    """``array`` as a tensor on ``device`` (None stays None). On the cpu it shares numpy's
    memory, also a read-only array's (a weight left in the memory-mapped checkpoint: the run
    never writes into a weight, so copying every layer of a large model each run is spared)."""
    if array is None:
        return None
    array = np.asarray(array)
    if any(step < 0 for step in array.strides):
        array = np.ascontiguousarray(array)  # torch takes no negative strides
    with warnings.catch_warnings():  # torch warns that a read-only array could be written
        warnings.simplefilter("ignore", UserWarning)
        return torch.from_numpy(array).to(device)


def _norm(pair, device: str):
    return None if pair is None else (tensor(pair[0], device), tensor(pair[1], device))


def _numpy_dtype(dtype):
    return NUMPY_DTYPES.get(dtype, dtype)  # a torch dtype, or already numpy's


class TorchTable:
    """A :class:`~attention_explorer.pretrained.checkpoint.stored.StoredTable` whose rows come
    back as tensors on ``device`` (dtype given as numpy's or torch's)."""

    def __init__(self, table, device: str):
        self.table, self.device, self.shape = table, device, table.shape

    def __len__(self) -> int:
        return len(self.table)

    def rows(self, ids, dtype) -> torch.Tensor:
        """Rows ``ids`` as a ``[len(ids), d]`` tensor."""
        return tensor(self.table.rows(ids, _numpy_dtype(dtype)), self.device)

    def blocks(self, dtype, size: int | None = None):
        """``(first row, rows [block, d])`` over the whole table, as tensors."""
        extra = {} if size is None else {"size": size}
        for lo, rows in self.table.blocks(_numpy_dtype(dtype), **extra):
            yield lo, tensor(rows, self.device)


def _layer(lw: LayerWeights, device: str) -> LayerWeights:
    """One layer with every array a tensor on ``device``; W_Q, W_K and W_V stay views of a
    fused W_QKV (so they are not copied twice to a GPU)."""
    changes = {}
    for f in fields(lw):
        value = getattr(lw, f.name)
        if f.name.startswith("ln_"):
            changes[f.name] = _norm(value, device)
        elif f.name not in ("W_Q", "W_K", "W_V") or lw.W_QKV is None:
            changes[f.name] = tensor(value, device)
    if lw.W_QKV is not None:
        fused = changes["W_QKV"]
        d_q, d_kv = lw.W_Q.shape[1], lw.W_K.shape[1]
        changes["W_Q"], changes["W_K"], changes["W_V"] = fused.split([d_q, d_kv, d_kv], dim=1)
    return replace(lw, **changes)


class TorchLayers(Sequence):
    """The layers of ``layers`` (numpy) as tensors on ``device``: kept when the numpy layers
    are all kept, else made when asked for."""

    def __init__(self, layers, device: str):
        self.layers, self.device = layers, device
        self.keep = getattr(layers, "keep", True)
        self._kept: dict[int, LayerWeights] = {}

    def __len__(self) -> int:
        return len(self.layers)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        i = range(len(self))[i]  # an IndexError out of range, like a list
        if i in self._kept:
            return self._kept[i]
        layer = _layer(self.layers[i], self.device)
        if self.keep:
            self._kept[i] = layer
        return layer


def on_torch(w: ModelWeights, device: str = "cpu") -> ModelWeights:
    """``w`` with every weight a tensor on ``device`` and ``library="torch"``."""
    word = TorchTable(w.word, device)
    head = w.head
    if head is not None:
        decoder = word if head.decoder is w.word else TorchTable(head.decoder, device)
        head = replace(
            head,
            decoder=decoder,
            bias=tensor(head.bias, device),
            norm=_norm(head.norm, device),
            W_dense=tensor(head.W_dense, device),
            b_dense=tensor(head.b_dense, device),
        )
    return replace(
        w,
        word=word,
        position=tensor(w.position, device),
        token_type=tensor(w.token_type, device),
        ln_embed=_norm(w.ln_embed, device),
        layers=TorchLayers(w.layers, device),
        head=head,
        library="torch",
    )
