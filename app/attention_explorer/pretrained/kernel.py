"""The model run's attention block: all heads at once, in float32 or float64.

An unedited layer on numpy runs :func:`attend`: the same arithmetic as the engine's
``compute()`` in projection mode (softmax, the record's scale and causal mask), batched over
heads with no stage bookkeeping, which is what makes a whole-model run as fast as
transformers. An edited layer (a session, whose settings may be anything the engine offers)
and any other backend run :func:`attend_engine`, through ``compute()`` itself. A knocked-out
head contributes nothing to ``concat · W_O``: its columns of ``concat`` are zeroed in the
first, its rows of ``W_O`` in the second (the same thing).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

import numpy as np

from attention_explorer.engine import AttentionConfig, AttentionInputs, Backend, compute
from attention_explorer.pretrained.rotary import hidden_keys, rotate
from attention_explorer.pretrained.weights import LayerWeights, ModelWeights


def _plus(x: np.ndarray, b) -> np.ndarray:
    return x if b is None else x + b


def _cast(value, dtype):
    if isinstance(value, np.ndarray):
        return np.ascontiguousarray(value, dtype=dtype)
    if isinstance(value, tuple):
        return tuple(_cast(v, dtype) for v in value)
    return value


def _cast_fields(record, dtype, skip=()):
    changes = {
        name: _cast(getattr(record, name), dtype)
        for name in record.__dataclass_fields__
        if name not in skip
    }
    return replace(record, **changes)


def cast_weights(w: ModelWeights, dtype) -> ModelWeights:
    """``w`` with every weight (not the word table) converted to ``dtype``, contiguous."""
    head = None if w.head is None else _cast_fields(w.head, dtype, skip=("kind",))
    return replace(
        w,
        layers=tuple(_cast_fields(lw, dtype) for lw in w.layers),
        position=_cast(w.position, dtype),
        token_type=_cast(w.token_type, dtype),
        ln_embed=_cast(w.ln_embed, dtype),
        head=head,
    )


def _heads(x: np.ndarray, count: int) -> np.ndarray:
    """``[n, count*d_head]`` as contiguous ``[count, n, d_head]``: numpy hands stacked
    products of contiguous matrices to BLAS, and loops slowly over strided ones."""
    n = x.shape[0]
    return np.ascontiguousarray(x.reshape(n, count, -1).transpose(1, 0, 2))


def _softmax_rows(scores: np.ndarray, hidden: np.ndarray | None) -> None:
    """Softmax of each row of ``scores [n, n]`` in place, ``hidden`` cells (True) at 0."""
    if hidden is not None:
        np.copyto(scores, -np.inf, where=hidden)
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)


def attend(
    w: ModelWeights, layer: int, x: np.ndarray, knocked: Iterable[int] = (), out=None
) -> tuple[np.ndarray, np.ndarray]:
    """Layer ``layer``'s attention on ``x [n, d]``: weights ``[heads, n, n]`` (written into
    ``out`` when given) and the block's output ``[n, d]`` (before the residual), in ``x``'s
    dtype."""
    lw: LayerWeights = w.layers[layer]
    n, group = x.shape[0], w.heads // w.kv_heads
    q = _heads(_plus(x @ lw.W_Q, lw.b_Q), w.heads)  # [h, n, d_k]
    k = _heads(_plus(x @ lw.W_K, lw.b_K), w.kv_heads)  # [kv, n, d_k]
    v = _heads(_plus(x @ lw.W_V, lw.b_V), w.kv_heads)  # [kv, n, d_v]
    if w.rope is not None:
        q, k = rotate(q, w.rope), rotate(k, w.rope)  # RoPE per head before the scores
    if group > 1:
        k, v = np.repeat(k, group, axis=0), np.repeat(v, group, axis=0)  # [h, n, d]
    q *= x.dtype.type(w.scales[layer])
    s = np.matmul(q, k.transpose(0, 2, 1), out=out)  # [h, n, n]
    future = hidden_keys(n, w.causal, w.window)  # [n, n] hidden keys (causal, window)
    for scores in s:  # one head at a time: its [n, n] stays in the CPU's cache
        _softmax_rows(scores, future)  # weights [n, n]
    concat = (s @ v).transpose(1, 0, 2).reshape(n, -1)  # [n, h*d_v]
    d_v = concat.shape[1] // w.heads
    for head in knocked:
        concat[:, head * d_v : (head + 1) * d_v] = 0.0
    return s, _plus(concat @ lw.W_O, lw.b_O)  # [h, n, n], [n, d]


def attend_engine(
    config: AttentionConfig,
    inputs: AttentionInputs,
    backend: Backend | None,
    dtype: str,
    knocked: Iterable[int] = (),
) -> tuple[np.ndarray, np.ndarray]:
    """The same through the engine's ``compute()`` (an edited session, or torch): weights
    ``[heads, n, n]`` and output ``[n, d]``; a knocked-out head's rows of W_O are zeroed."""
    knocked = tuple(knocked)
    if knocked:
        W_O = np.array(inputs.W_O, dtype=np.float64)  # [h*d_v, d]
        d_v = W_O.shape[0] // config.heads
        for head in knocked:
            W_O[head * d_v : (head + 1) * d_v] = 0.0
        inputs = replace(inputs, W_O=W_O)
    trace = compute(inputs, config, backend, dtype=dtype, stages=("weights", "output"))
    return np.asarray(trace.stages["weights"]), np.asarray(trace.stages["output"])
