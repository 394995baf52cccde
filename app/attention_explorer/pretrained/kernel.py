"""The model run's attention block: all heads at once, in float32 or float64.

An unedited layer on numpy runs :func:`attend`: the same arithmetic as the engine's
``compute()`` in projection mode (softmax, the record's scale and causal mask), batched over
heads with no stage bookkeeping, which is what makes a whole-model run as fast as
transformers. An edited layer (a session) runs :func:`attend_engine`: on numpy, a session
whose settings are still plain softmax attention (any X, W, bias, scale or temperature; no
Q/K/V typed in, no positions, no padding or custom mask) takes the same batched arithmetic
(:func:`attend_plain`, after the engine's checks of its inputs); anything else, a float32
overflow and any other backend go through ``compute()`` itself. A knocked-out head
contributes nothing to ``concat · W_O``: its columns of ``concat`` are zeroed in the
batched path, its rows of ``W_O`` in ``compute()`` (the same thing).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

import numpy as np

from attention_explorer.engine import AttentionConfig, AttentionInputs, Backend, compute
from attention_explorer.engine.inputs import validate_inputs
from attention_explorer.pretrained.checkpoint.weights import LayerWeights, ModelWeights
from attention_explorer.pretrained.rotary import hidden_keys, rotate


def _heads(x: np.ndarray, count: int) -> np.ndarray:
    """``[n, count*d_head]`` as contiguous ``[count, n, d_head]``: numpy hands stacked
    products of contiguous matrices to BLAS, and loops slowly over strided ones."""
    n = x.shape[0]
    return np.ascontiguousarray(x.reshape(n, count, -1).transpose(1, 0, 2))


def _linear(x: np.ndarray, W: np.ndarray, b) -> np.ndarray:
    """``x W + b`` with the bias added in place (no second ``[n, out]`` temporary)."""
    y = x @ W  # [n, out]
    if b is not None:
        y += b
    return y


#: Score cells per softmax chunk: a chunk of heads' ``[c, n, n]`` stays in the CPU's cache,
#: and short texts take all heads in one call instead of one call per head.
SOFTMAX_CELLS = 32768
#: When every score lies within ±SCORE_BOUND, ``exp`` neither overflows nor underflows (float32
#: holds e^±87), so the softmax need not subtract each row's maximum first: two passes fewer.
SCORE_BOUND = 60.0


def _bounded(q: np.ndarray, k: np.ndarray) -> bool:
    """True when every score ``q_i · k_j`` of ``q [c, n, d]`` and ``k [c, n, d]`` is known to
    lie within ±SCORE_BOUND: ``|q_i · k_j| <= |q_i| |k_j|`` (Cauchy-Schwarz), per head. False
    for a NaN or an infinity (the maximum is then subtracted, as always)."""
    q_top = np.einsum("cnd,cnd->cn", q, q).max(axis=1)  # [c]: the largest |q_i|² per head
    k_top = np.einsum("cnd,cnd->cn", k, k).max(axis=1)  # [c]
    return bool((q_top * k_top).max() <= SCORE_BOUND * SCORE_BOUND)


def _softmax_rows(scores: np.ndarray, hidden: np.ndarray | None, shift: bool = True) -> None:
    """Softmax of each row of ``scores [c, n, n]`` in place, ``hidden`` cells (True) at 0.
    ``shift``: subtract each row's maximum first (not needed when :func:`_bounded`). The row
    sums are one matrix-vector product over all rows of the chunk (3x faster than a sum along
    rows, and 3x faster again than a stacked product, which numpy loops over per head)."""
    if hidden is not None:
        np.copyto(scores, -np.inf, where=hidden)
    if shift:
        scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    n = scores.shape[-1]
    sums = (scores.reshape(-1, n) @ np.ones(n, scores.dtype)).reshape(scores.shape[:-1])  # [c, n]
    np.divide(1.0, sums, out=sums)
    scores *= sums[..., None]


def mix(q, k, v, factor, hidden, out=None) -> tuple[np.ndarray, np.ndarray]:
    """The attention core of query heads ``q [c, n, d_k]`` (scaled by ``factor`` here, in
    place), each with its own key and value head ``k [c, n, d_k]``, ``v [c, n, d_v]``: the
    weights ``[c, n, n]`` (in ``out`` when given) and their sums of values ``[c, n, d_v]``."""
    n = q.shape[1]
    q *= q.dtype.type(factor)
    shift = not _bounded(q, k)
    k_t = np.ascontiguousarray(k.transpose(0, 2, 1))  # [c, d_k, n]: BLAS is 25% faster so
    s = np.matmul(q, k_t, out=out)  # [c, n, n]
    step = max(1, SOFTMAX_CELLS // (n * n))  # heads per chunk
    for lo in range(0, s.shape[0], step):
        _softmax_rows(s[lo : lo + step], hidden, shift)  # weights [step, n, n]
    return s, s @ v  # [c, n, n], [c, n, d_v]


def per_query_head(k: np.ndarray, v: np.ndarray, heads: int) -> tuple[np.ndarray, np.ndarray]:
    """``k [kv, n, d_k]`` and ``v [kv, n, d_v]`` repeated so each of ``heads`` query heads has
    its own (grouped-query attention shares one key/value head among a group)."""
    group = heads // k.shape[0]
    if group == 1:
        return k, v
    return np.repeat(k, group, axis=0), np.repeat(v, group, axis=0)  # [heads, n, d]


def knock_out(concat: np.ndarray, knocked: Iterable[int], heads: int) -> None:
    """Zero the ``knocked`` heads' columns of ``concat [n, heads*d_v]`` in place: those heads
    contribute nothing to ``concat · W_O``."""
    d_v = concat.shape[1] // heads
    for head in knocked:
        concat[:, head * d_v : (head + 1) * d_v] = 0.0


def _weights_and_output(q, k, v, factor, hidden, W_O, b_O, knocked, out):
    """The attention after the projections: ``q [h, n, d_k]`` (scaled here, in place),
    ``k [kv, n, d_k]``, ``v [kv, n, d_v]``; weights ``[h, n, n]`` (in ``out`` when given)
    and ``concat · W_O + b_O`` ``[n, d]`` with the ``knocked`` heads' columns zeroed."""
    heads, n = q.shape[0], q.shape[1]
    s, mixed = mix(q, *per_query_head(k, v, heads), factor, hidden, out)
    concat = mixed.transpose(1, 0, 2).reshape(n, -1)  # [n, h*d_v]
    knock_out(concat, knocked, heads)
    return s, _linear(concat, W_O, b_O)  # [h, n, n], [n, d]


def attend(
    w: ModelWeights, layer: int, x: np.ndarray, knocked: Iterable[int] = (), out=None
) -> tuple[np.ndarray, np.ndarray]:
    """Layer ``layer``'s attention on ``x [n, d]``: weights ``[heads, n, n]`` (written into
    ``out`` when given) and the block's output ``[n, d]`` (before the residual), in ``x``'s
    dtype."""
    lw: LayerWeights = w.layers[layer]
    if lw.W_QKV is not None:  # one product, cut into the three
        d_q, d_kv = lw.W_Q.shape[1], lw.W_K.shape[1]
        parts = np.split(_linear(x, lw.W_QKV, lw.b_QKV), (d_q, d_q + d_kv), axis=1)
    else:
        parts = [_linear(x, lw.W_Q, lw.b_Q), _linear(x, lw.W_K, lw.b_K), _linear(x, lw.W_V, lw.b_V)]
    q = _heads(parts[0], w.heads)  # [h, n, d_k]
    k, v = (_heads(part, w.kv_heads) for part in parts[1:])  # [kv, n, d_k], [kv, n, d_v]
    if w.rope is not None:
        q, k = rotate(q, w.rope), rotate(k, w.rope)  # RoPE per head before the scores
    hidden = hidden_keys(x.shape[0], w.causal, w.window)  # [n, n] hidden keys
    return _weights_and_output(q, k, v, w.scales[layer], hidden, lw.W_O, lw.b_O, knocked, out)


def plain(config: AttentionConfig, inputs: AttentionInputs) -> bool:
    """True when ``compute()`` of this session is the arithmetic of :func:`attend`: self
    projection attention with a softmax, no mask or a causal one, no positions, W_O applied,
    and no Q/K/V typed in (any X, W, bias, scale or temperature)."""
    return (
        config.mode == "projection"
        and config.attention == "self"
        and config.normalizer == "softmax"
        and config.mask in ("none", "causal")
        and config.positional == "none"
        and config.use_output_projection
        and inputs.W_O is not None
        and all(getattr(inputs, name) is None for name in ("Q", "K", "V", "X_kv"))
    )


def attend_plain(
    config: AttentionConfig, inputs: AttentionInputs, dtype: str, knocked: Iterable[int] = ()
) -> tuple[np.ndarray, np.ndarray] | None:
    """An edited :func:`plain` session's weights ``[heads, n, n]`` and output ``[n, d]``
    computed like an unedited layer (6 times faster than ``compute()`` at 32 tokens: no
    stage bookkeeping), after the engine's own checks of the inputs. None when float32
    overflowed: ``compute()`` then redoes the pass in float64, as it always does."""
    validate_inputs(config, inputs)
    dt = np.dtype(dtype)
    x = np.asarray(inputs.X, dtype=dt)  # [n, d]

    def cast(name):
        value = getattr(inputs, name)
        return None if value is None else np.asarray(value, dtype=dt)

    kv = config.n_kv_heads
    with np.errstate(over="ignore", invalid="ignore"):
        q = _heads(_linear(x, cast("W_Q"), cast("b_Q")), config.heads)  # [h, n, d_k]
        k = _heads(_linear(x, cast("W_K"), cast("b_K")), kv)  # [kv, n, d_k]
        v = _heads(_linear(x, cast("W_V"), cast("b_V")), kv)  # [kv, n, d_v]
        hidden = hidden_keys(x.shape[0], config.mask == "causal", None)  # [n, n] or None
        factor = config.scale_value() / config.temperature
        p, a = _weights_and_output(
            q, k, v, factor, hidden, cast("W_O"), cast("b_O"), tuple(knocked), None
        )
    if not (np.isfinite(a).all() and np.isfinite(p).all()):
        return None
    return p, a


def attend_engine(
    config: AttentionConfig,
    inputs: AttentionInputs,
    backend: Backend | None,
    dtype: str,
    knocked: Iterable[int] = (),
) -> tuple[np.ndarray, np.ndarray]:
    """The same through the engine's ``compute()`` (an edited session, or torch): weights
    ``[heads, n, n]`` and output ``[n, d]``; a knocked-out head's rows of W_O are zeroed.
    On numpy a :func:`plain` session takes :func:`attend_plain` instead (same numbers)."""
    knocked = tuple(knocked)
    if backend is None and plain(config, inputs):
        fast = attend_plain(config, inputs, dtype, knocked)
        if fast is not None:
            return fast
    if knocked:
        W_O = np.array(inputs.W_O, dtype=np.float64)  # [h*d_v, d]
        d_v = W_O.shape[0] // config.heads
        for head in knocked:
            W_O[head * d_v : (head + 1) * d_v] = 0.0
        inputs = replace(inputs, W_O=W_O)
    trace = compute(inputs, config, backend, dtype=dtype, stages=("weights", "output"))
    return np.asarray(trace.stages["weights"]), np.asarray(trace.stages["output"])
