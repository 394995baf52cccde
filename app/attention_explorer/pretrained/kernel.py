"""The model run's attention block: all heads at once, in float32 or float64.

An unedited layer on numpy runs :func:`attend`: the same arithmetic as the engine's
``compute()`` in projection mode (softmax, the record's scale and causal mask), batched over
heads with no stage bookkeeping (QK-norm, when the layer has it, on q and k before RoPE),
which is what makes a whole-model run as fast as transformers. An edited layer (a session)
runs :func:`attend_engine`: on numpy, a session whose settings are still plain softmax
attention (any X, W, bias, scale or temperature; no Q/K/V typed in, no positions, no padding
or custom mask) takes the same batched arithmetic (:func:`attend_plain`, after the engine's
checks of its inputs); anything else, a float32 overflow and any other backend go through
``compute()`` itself. A knocked-out head contributes nothing to ``concat · W_O``: its
columns of ``concat`` are zeroed in the batched path, its rows of ``W_O`` in ``compute()``
(the same thing).

A layer may also soft-cap its scores (Gemma 2: ``cap * tanh(scores / cap)`` after the scale,
before the mask; :func:`soft_cap`), have its own sliding window and RoPE, or none (local and
global layers, NoPE layers: ``ModelWeights.window_of``/``rotary_of``), run QK-norm over
each head or over the whole projection (OLMo 2), and put each head's learned sink logit in
its softmax's denominator (gpt-oss's attention sinks, ``LayerWeights.sinks``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

import numpy as np
from array_api_compat import array_namespace

from attention_explorer.engine import AttentionConfig, AttentionInputs, Backend, compute
from attention_explorer.engine.inputs import validate_inputs
from attention_explorer.engine.variants.sink_logit import sink_softmax
from attention_explorer.kernels import numpy_ops, ops_for
from attention_explorer.pretrained.checkpoint.model_weights import LayerWeights, ModelWeights
from attention_explorer.pretrained.latent.attention import attend_latent


def projections(ops, w: ModelWeights, lw: LayerWeights, x):
    """q ``[h, n, d_k]``, k ``[kv, n, d_k]``, v ``[kv, n, d_v]`` of ``x [n, d]`` (one fused
    product when the layer keeps ``W_QKV``), contiguous per head."""
    if lw.W_QKV is not None:
        d_q, d_kv = lw.W_Q.shape[1], lw.W_K.shape[1]
        parts = ops.linear_split(x, lw.W_QKV, lw.b_QKV, (d_q, d_kv, d_kv))
    else:
        parts = [ops.linear(x, W, b) for W, b in ((lw.W_Q, lw.b_Q), (lw.W_K, lw.b_K))]
        parts.append(ops.linear(x, lw.W_V, lw.b_V))
    counts = (w.heads, w.kv_heads, w.kv_heads)
    return [ops.split_heads(part, c, contiguous=True) for part, c in zip(parts, counts)]


def qk_normed(ops, lw: LayerWeights, eps: float, q, k, over: str = "head", offset: float = 0.0):
    """QK-norm: ``q [h, n, d_k]`` and ``k [kv, n, d_k]`` each RMS-normed with the layer's
    ``q_norm`` and ``k_norm`` weights, before RoPE: over each head's d_k (``over="head"``,
    Qwen3 and Gemma 3: ``[d_k]`` weights shared by all heads) or over the whole projection
    before it is split into heads (``"all"``, OLMo 2: ``[h*d_k]`` and ``[kv*d_k]``),
    multiplying by ``offset + w`` (Gemma 3: 1 + w; the weights are kept as stored); q and k
    unchanged when the layer has no QK-norm."""
    if lw.q_norm is None:
        return q, k
    gammas = (lw.q_norm, lw.k_norm) if not offset else (lw.q_norm + offset, lw.k_norm + offset)
    if over == "all":  # [n, h*d_k] normed as one row per token, then split again
        normed = [
            ops.split_heads(ops.rms_norm(ops.merge_heads(x), g, None, eps), x.shape[0], True)
            for x, g in zip((q, k), gammas)
        ]
        return normed[0], normed[1]
    return ops.rms_norm(q, gammas[0], None, eps), ops.rms_norm(k, gammas[1], None, eps)


def soft_cap(x, cap: float):
    """``cap * tanh(x / cap)`` in ``x``'s library and dtype, as transformers computes it
    (divide, tanh, multiply): Gemma 2's soft-capping of scores and logits."""
    return array_namespace(x).tanh(x / cap) * cap


def _capped_attention(ops, q, k, v, factor, cap, blocked, sinks=None, out=None):
    """The attention core step by step: the scaled scores soft-capped before the mask (with
    ``cap``), the softmax with each head's sink logit ``sinks [c]`` in its denominator (with
    ``sinks``; the weights then in ``out`` when given, numpy): weights ``[c, n, m]`` and
    their sums of values ``[c, n, d_v]``."""
    s = ops.scale(ops.score(q, k), factor)  # [c, n, m]
    if cap is not None:
        s = soft_cap(s, cap)  # [c, n, m]
    if blocked is not None:
        s = ops.mask_scores(s, blocked=blocked)  # [c, n, m]
    if sinks is None:
        p = ops.softmax(s)  # [c, n, m]
    else:  # gpt-oss: each row's weights sum to 1 - the sink's share
        fits = out is not None and isinstance(s, np.ndarray) and out.dtype == s.dtype
        p, _ = sink_softmax(s, sinks, out=out if fits else None)  # [c, n, m]
    return p, ops.combine(p, v)


def _weights_and_output(
    ops, q, k, v, factor, blocked, W_O, b_O, knocked, out, cap=None, sinks=None
):
    """The attention after the projections: ``q [h, n, d_k]`` (scaled here, in place on
    numpy), ``k [kv, n, d_k]``, ``v [kv, n, d_v]``; weights ``[h, n, n]`` (in ``out`` when
    given, unless soft-capped by ``cap``) and ``concat · W_O + b_O`` ``[n, d]`` with the
    ``knocked`` heads' columns zeroed. ``sinks [h]``: the heads' sink logits (gpt-oss)."""
    heads = q.shape[0]
    group = heads // k.shape[0]  # grouped-query attention: a key/value head per group
    k, v = ops.repeat_kv(k, group), ops.repeat_kv(v, group)  # [h, n, d_k], [h, n, d_v]
    if cap is None and sinks is None:
        p, mixed = ops.attention(q, k, v, factor, blocked, out)
    else:
        p, mixed = _capped_attention(ops, q, k, v, factor, cap, blocked, sinks, out)
    concat = ops.knock_out(ops.merge_heads(mixed), knocked, heads)  # [n, h*d_v]
    return p, ops.linear(concat, W_O, b_O)  # [h, n, n], [n, d]


def attend(w: ModelWeights, layer: int, x, knocked: Iterable[int] = (), out=None):
    """Layer ``layer``'s attention on ``x [n, d]`` (a numpy array, or a torch tensor when
    ``w``'s weights are tensors): weights ``[heads, n, n]`` (written into ``out``, a numpy
    buffer, when given and the arrays live on the cpu; else a new array or tensor) and the
    block's output ``[n, d]`` (before the residual), in ``x``'s dtype. A latent-attention
    layer (DeepSeek-V3) is :func:`.latent.attention.attend_latent`."""
    if w.latent is not None:  # multi-head latent attention (pretrained/latent/)
        return attend_latent(w, layer, x, knocked, out)
    ops = ops_for(x)
    lw: LayerWeights = w.layers[layer]
    q, k, v = query_key_value(ops, w, layer, x)  # [h, n, d_k], [kv, n, d_k], [kv, n, d_v]
    window = w.window_of(layer)
    blocked = ops.blocked_keys(x.shape[0], w.causal, window, getattr(x, "device", None))
    factor, cap = w.scales[layer], w.score_cap
    return _weights_and_output(
        ops, q, k, v, factor, blocked, lw.W_O, lw.b_O, knocked, out, cap, lw.sinks
    )


def query_key_value(ops, w: ModelWeights, layer: int, x):
    """Layer ``layer``'s q ``[h, n, d_k]``, k ``[kv, n, d_k]`` and v ``[kv, n, d_v]`` of
    ``x [n, d]`` as its scores read them: projected, QK-normed, then rotated by the layer's
    RoPE (its scaling, partial rotary; none in a NoPE layer)."""
    lw: LayerWeights = w.layers[layer]
    q, k, v = projections(ops, w, lw, x)  # [h, n, d_k], [kv, n, d_k], [kv, n, d_v]
    arch = w.arch
    q, k = qk_normed(ops, lw, w.eps, q, k, arch.qk_norm_over, arch.norm_offset)  # before RoPE
    rotary = w.rotary_of(layer)
    if rotary is not None:  # RoPE per head before the scores
        q, k = rotary.rotate(ops, q, k)  # [h, n, d_k], [kv, n, d_k]
    return q, k, v


def plain(config: AttentionConfig, inputs: AttentionInputs) -> bool:
    """True when ``compute()`` of this session is the arithmetic of :func:`attend`: self
    projection attention with a softmax, no mask or a causal one, no positions, W_O applied,
    no QK-norm, soft cap, window or attention sinks, and no Q/K/V typed in (any X, W, bias,
    scale or temperature)."""
    return (
        config.mode == "projection"
        and config.qk_norm == "none"
        and config.softcap is None
        and config.window is None
        and not config.attention_sinks
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

    ops, kv = numpy_ops, config.n_kv_heads

    def heads(name: str, count: int):
        projected = ops.linear(x, cast(f"W_{name}"), cast(f"b_{name}"))  # [n, count*d]
        return ops.split_heads(projected, count, contiguous=True)  # [count, n, d]

    with np.errstate(over="ignore", invalid="ignore"):
        q, k, v = heads("Q", config.heads), heads("K", kv), heads("V", kv)  # [h|kv, n, d]
        blocked = ops.blocked_keys(x.shape[0], config.mask == "causal", None)  # [n, n] | None
        factor = config.scale_value() / config.temperature
        p, a = _weights_and_output(
            ops, q, k, v, factor, blocked, cast("W_O"), cast("b_O"), tuple(knocked), None
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
        numpy_ops.knock_out(W_O.T, knocked, config.heads)  # the heads' rows of W_O, in place
        inputs = replace(inputs, W_O=W_O)
    trace = compute(inputs, config, backend, dtype=dtype, stages=("weights", "output"))
    return np.asarray(trace.stages["weights"]), np.asarray(trace.stages["output"])
