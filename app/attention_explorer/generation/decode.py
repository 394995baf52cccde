"""The pieces one decoding step is made of, shared by the Stepper (stepper.py), ``generate``
(loop.py), the step-session replay and the benchmark: the weights converted once and held for
the whole generation (:func:`held`, :func:`release`), one token's input (:func:`embed_at`),
every layer on new tokens over the cache (:func:`forward_new`), the cache as a generation
returns it (:func:`layer_caches`), and the token names (:class:`Vocabulary`).
"""

from __future__ import annotations

from dataclasses import fields, replace

import numpy as np

from attention_explorer.pretrained.checkpoint.stored import KEEP_CONVERTED_BYTES
from attention_explorer.pretrained.checkpoint.weights import ModelWeights, in_dtype
from attention_explorer.pretrained.forward import (
    attention_input,
    embed,
    output_logits,
    rest_of_layer,
)
from attention_explorer.pretrained.open_model import LoadedModel
from attention_explorer.pretrained.output import RunOutputs

from .errors import GenerationError
from .result import LayerCache
from .step import attend_new, host

DTYPES = ("float32", "float64")
MOST_STEPS = 4096


class Vocabulary(RunOutputs):
    """The model's token lookups (:class:`RunOutputs`' ``token_text``)."""

    def __init__(self, model: LoadedModel):
        self.model, self.ids, self.logits = model, (), None


class DenseTable:
    """A ``[rows, d]`` table held converted in memory, read as the model run reads a stored
    one (``shape``, ``rows``, ``blocks``): the output head's table, converted once for every
    step instead of once a step."""

    def __init__(self, array):
        self.array = array  # [rows, d]
        self.shape = tuple(array.shape)

    def __len__(self) -> int:
        return self.shape[0]

    def rows(self, ids, dtype):
        """Rows ``ids`` ``[len(ids), d]``."""
        return self.array[list(ids)]

    def blocks(self, dtype, size: int = 0):
        """The whole table as one block."""
        yield 0, self.array


def _nbytes(value) -> int:
    """Bytes of an array, a tensor, or a tuple of them (a norm's pair); 0 for None."""
    if value is None:
        return 0
    if isinstance(value, tuple):
        return sum(_nbytes(v) for v in value)
    if hasattr(value, "nbytes"):
        return int(value.nbytes)
    return int(value.numel() * value.element_size())  # a torch tensor


def _check_memory(w: ModelWeights, dtype: str) -> int:
    """The bytes of every layer and the output table held converted for the whole generation
    (estimated from layer 0); a GenerationError when they would not fit in the memory
    available now."""
    from attention_explorer.engine.budget import available_memory

    lw = w.layers[0]
    skip = ("W_Q", "W_K", "W_V") if lw.W_QKV is not None else ()  # views of W_QKV
    layer = sum(_nbytes(getattr(lw, f.name)) for f in fields(lw) if f.name not in skip)
    table = 0 if w.head is None else int(np.prod(w.head.decoder.shape)) * np.dtype(dtype).itemsize
    need, available = w.n_layers * layer + table, available_memory()
    if available is not None and need > available:
        raise GenerationError(
            "memory",
            f"generating with {w.name} holds its layers and output table converted "
            f"({need / 2**30:.1f} GiB in {dtype}) and {available / 2**30:.1f} GiB is available",
        )
    return need


def held(loaded: LoadedModel, dtype: str, backend, keep: int | None = None) -> ModelWeights:
    """The weights in ``dtype`` on ``backend`` with every layer and the output head's table
    converted once and held for the whole generation (a step would else convert them again).
    They stay with the model for the next generation when they fit in ``keep`` bytes (the
    model run's ``KEEP_CONVERTED_BYTES`` when None); else :func:`release` drops them when the
    generation ends."""
    if dtype not in loaded.cast:
        loaded.cast[dtype] = in_dtype(loaded.weights, dtype)
    key = ("generation", backend.name, dtype, backend.device)
    if key in loaded.cast:
        return loaded.cast[key]
    w = loaded.cast[dtype]
    if backend.name == "torch":
        from attention_explorer.pretrained.torch_weights import on_torch

        w = on_torch(w, backend.device)
    need = _check_memory(w, dtype)
    layers = tuple(w.layers[i] for i in range(w.n_layers))
    head = w.head
    if head is not None:
        blocks = [rows for _, rows in head.decoder.blocks(np.dtype(dtype))]  # [block, d] each
        if isinstance(blocks[0], np.ndarray):
            table = np.concatenate(blocks) if len(blocks) > 1 else blocks[0]
        else:
            import torch

            table = torch.cat(blocks)
        head = replace(head, decoder=DenseTable(table))
    loaded.cast[key] = replace(w, layers=layers, head=head)
    if need > (KEEP_CONVERTED_BYTES if keep is None else keep):
        loaded.cast[("release",) + key] = True
    return loaded.cast[key]


def release(loaded: LoadedModel) -> None:
    """Drop the held weights of ``loaded`` that are too large to keep (see :func:`held`)."""
    for mark in [k for k in loaded.cast if isinstance(k, tuple) and k[:1] == ("release",)]:
        loaded.cast.pop(mark, None)
        loaded.cast.pop(mark[1:], None)


def embed_at(w: ModelWeights, token: int, position: int, dtype) -> object:
    """The input of layer 0 for ``token`` at ``position``: ``[1, d]``."""
    if w.position is not None:  # learned positions: the table's row ``position``
        w = replace(w, position=w.position[position : position + 1])
    return embed(w, [token], [0], dtype)


def forward_new(w: ModelWeights, h, caches, policy) -> tuple[list, object]:
    """Every layer on new tokens' inputs ``h [t, d]`` (the prompt, or one token from
    :func:`embed_at`), appending to ``caches``: each layer's last row of weights ``[h, m]`` and
    the logits of the last new token ``[1, vocab]``. One decode step is ``forward_new(w,
    embed_at(w, token, position, dtype), caches, policy)``."""
    rows = []
    for layer in range(w.n_layers):
        x = attention_input(w, layer, h)  # [t, d]
        p, a = attend_new(w, layer, x, caches[layer], policy)  # [h, t, m], [t, d]
        rows.append(p[:, -1])  # [h, m]
        h = rest_of_layer(w, layer, h, a)  # [t, d]
    return rows, output_logits(w, h[-1:])  # [1, vocab]


def check_steps(steps) -> int:
    """``steps`` as an int in 1..MOST_STEPS, else a GenerationError."""
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)):
        raise GenerationError("steps", f"steps must be a whole number, not {steps!r}")
    if not 1 <= steps <= MOST_STEPS:
        raise GenerationError("steps", f"steps must be 1 to {MOST_STEPS}, not {steps}")
    return int(steps)


def layer_caches(w: ModelWeights, caches, policy, fed: int) -> tuple[LayerCache, ...]:
    """Each layer's :class:`LayerCache` after ``fed`` positions went through the model: of
    them, what the next query (position ``fed``) may still read, as numpy copies (later steps
    do not change them)."""
    held_cache = []
    for layer, cache in enumerate(caches):
        # what the next query (position ``fed``) may still read: what a cache must keep
        nxt = policy.visible(np.array([fed]), fed + 1, w.window_of(layer))[0]
        keep = np.flatnonzero(nxt[:fed])  # [m]
        keys, values = host(cache.keys[:, :fed]), host(cache.values[:, :fed])
        group = w.heads // w.kv_heads
        latent = {}  # a latent-attention layer's cache: its latent and rotary key (C)
        if cache.latent is not None:
            latent = {
                "latent": host(cache.latent[:fed])[keep],
                "rope_key": host(cache.rope_key[:fed])[keep],
            }
        held_cache.append(LayerCache(keep, keys[:, keep], values[:, keep], group, **latent))
    return tuple(held_cache)
