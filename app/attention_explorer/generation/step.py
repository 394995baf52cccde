"""The incremental forward pass: a prompt once (prefill), then one new query a step against
the cached keys and values, with the model run's own steps.

Per layer, for new tokens at positions ``start .. start+t-1`` (``x [t, d]``): q, k, v are the
layer's projections (:func:`~attention_explorer.pretrained.kernel.projections`), QK-normed
(``qk_normed``) and turned by the layer's RoPE at their true positions (the layer's
``RotaryPlan``: its base, linear/llama3/yarn scaling, partial rotary; none in a NoPE layer);
k and v are written into the cache (:class:`KVCache`, after RoPE); the scores of q against
every cached key are scaled by the layer's factor, soft-capped where the model caps them,
hidden where the causal rule, the layer's sliding window or the cache policy hides them, and
softmaxed (with the head's sink logit in each row's denominator where the layer has attention
sinks, gpt-oss); the heads' outputs go through W_O. Everything else is the model run's own
(``embed``, ``attention_input``, ``rest_of_layer``, ``output_logits``).

The prefill checks itself against the model run's attention block
(:func:`~attention_explorer.pretrained.kernel.attend`) on the prompt: a family whose block
does anything this step does not is refused by name (:class:`GenerationError`), never
approximated.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_explorer.engine.variants.sink_logit import sink_softmax
from attention_explorer.kernels import ops_for
from attention_explorer.pretrained.checkpoint.weights import ModelWeights
from attention_explorer.pretrained.kernel import attend, projections, qk_normed, soft_cap
from attention_explorer.pretrained.latent.decode import latent_buffers, latent_new
from attention_explorer.pretrained.rope_plan import rotate_part

from .errors import GenerationError
from .policy import CachePolicy

LENGTH_DEPENDENT = ("dynamic", "longrope")


def host(x) -> np.ndarray:
    """An array of the run (numpy, or a torch tensor) as numpy."""
    return x if isinstance(x, np.ndarray) else x.detach().cpu().numpy()


def refusal(w: ModelWeights) -> str:
    """Why this model cannot be generated from incrementally (one sentence), or ""."""
    name = f"{w.name} ({w.family})"
    if not w.causal:
        return f"{name} is an encoder (every token reads every other), not a next-token model"
    if w.head is None or w.head.kind != "lm":
        return f"{name} has no language-model head to predict the next token"
    if w.arch.position_padding is not None:
        return f"{name} numbers positions from its padding token, which generation does not"
    for layer in range(w.n_layers):
        rotary = w.rotary_of(layer)
        kind = getattr(getattr(rotary, "scaling", None), "kind", None)
        if kind in LENGTH_DEPENDENT:
            return (
                f"{name} uses {kind} rope scaling, whose frequencies change with the text's "
                "length, so cached keys would need turning again: not implemented"
            )
    return ""


@dataclass
class KVCache:
    """One layer's cache: ``keys [kv, capacity, d_k]`` (after RoPE) and ``values
    [kv, capacity, d_v]`` buffers of the run's library, filled up to ``length``. A latent
    layer (DeepSeek-V3) also holds ``latent [capacity, kv_lora]`` and ``rope_key
    [capacity, rope]``, what its cache really keeps (:mod:`.latent.decode`); its keys and
    values are the heads' up-projections of them."""

    keys: object
    values: object
    length: int = 0
    latent: object = None
    rope_key: object = None


def widths(w: ModelWeights) -> tuple[int, int]:
    """The width of each cached key and value (per key/value head): the projections', or a
    latent layer's up-projected ``nope + rope`` and ``v_dim``."""
    if w.latent is not None:
        return w.latent.qk_dim, w.latent.v_dim
    lw = w.layers[0]
    return lw.W_K.shape[1] // w.kv_heads, lw.W_V.shape[1] // w.kv_heads


def _zeros(like):
    """``zeros(shape)`` in ``like``'s library, dtype and device."""
    if isinstance(like, np.ndarray):
        return lambda shape: np.zeros(shape, like.dtype)
    import torch

    return lambda shape: torch.zeros(shape, dtype=like.dtype, device=like.device)


def new_caches(w: ModelWeights, capacity: int, like) -> list[KVCache]:
    """One empty :class:`KVCache` per layer, ``capacity`` positions, ``like``'s dtype/device."""
    caches = []
    for lw in w.layers:
        if w.latent is not None:  # latent attention: the latent and the rotary key too
            caches.append(KVCache(**latent_buffers(w, capacity, _zeros(like))))
            continue
        d_k, d_v = lw.W_K.shape[1] // w.kv_heads, lw.W_V.shape[1] // w.kv_heads
        zeros = _zeros(like)
        keys = zeros((w.kv_heads, capacity, d_k))  # [kv, capacity, d_k]
        values = zeros((w.kv_heads, capacity, d_v))  # [kv, capacity, d_v]
        caches.append(KVCache(keys, values))
    return caches


def rotate_at_positions(ops, w: ModelWeights, layer: int, q, k, start: int):
    """The new tokens' q ``[h, t, d_k]`` and k ``[kv, t, d_k]`` turned by layer ``layer``'s
    RoPE at positions ``start .. start+t-1``, as a cached step turns them (its scaling's
    frequencies and attention factor, the rotary part only under a rotary fraction); both
    returned unchanged in a NoPE layer. ``ops`` is the array library's kernel module
    (``ops_for(q)``); ``w`` the model's weights."""
    rotary = w.rotary_of(layer)
    if rotary is None:
        return q, k
    where = np.arange(start, start + q.shape[-2])  # [t]
    cos, sin = ops.rotation_tables(where, rotary.frequencies(), like=q)  # [t, r]
    factor = rotary.factor
    if factor != 1.0:
        cos, sin = cos * factor, sin * factor
    return rotate_part(ops, q, cos, sin), rotate_part(ops, k, cos, sin)


def _core(ops, w: ModelWeights, layer: int, q, keys, values, visible):
    """Weights ``[h, t, m]`` and the block's output ``[t, d]`` of queries ``q [h, t, d_k]``
    over ``keys [kv, m, d_k]`` and ``values [kv, m, d_v]``, ``visible [t, m]`` (numpy bool).
    The query heads of one key/value head are batched as one product (no repeated keys)."""
    heads, t, d_k = q.shape
    kv = keys.shape[0]
    group = heads // kv
    m = keys.shape[1]
    grouped = q.reshape(kv, group * t, d_k)  # [kv, g*t, d_k]: heads are kv-major
    s = ops.score(grouped, keys).reshape(heads, t, m)  # [h, t, m]
    s = ops.scale(s, w.scales[layer])
    if w.score_cap is not None:
        s = soft_cap(s, w.score_cap)
    if not visible.all():
        blocked = ~visible  # [t, m]
        if not isinstance(s, np.ndarray):
            import torch

            blocked = torch.from_numpy(blocked).to(s.device)
        s = ops.mask_scores(s, blocked=blocked)
    lw = w.layers[layer]
    if lw.sinks is None:
        p = ops.softmax(s)  # [h, t, m]
    else:  # gpt-oss: each head's sink logit in its rows' denominators (evicted keys stay 0)
        p, _ = sink_softmax(s, lw.sinks)  # [h, t, m]
    mixed = ops.combine(p.reshape(kv, group * t, m), values)  # [kv, g*t, d_v]
    mixed = mixed.reshape(heads, t, values.shape[-1])  # [h, t, d_v]
    return p, ops.linear(ops.merge_heads(mixed), lw.W_O, lw.b_O)  # [h, t, m], [t, d]


def _apply_edits(cache: KVCache, policy: CachePolicy, layer: int, start: int, end: int) -> None:
    """Write the policy's edited vectors of ``layer`` at positions ``start..end-1``."""
    for edit in policy.edits:
        if edit.layer == layer and start <= edit.position < end:
            target = cache.keys if edit.part == "key" else cache.values
            vector = edit.vector.astype(host(target[0, :1, :1]).dtype)  # [head_dim]
            if not isinstance(target, np.ndarray):
                import torch

                vector = torch.from_numpy(vector).to(target.device)
            target[edit.head, edit.position] = vector


def _check(w: ModelWeights, layer: int, x, mine) -> None:
    """A GenerationError unless ``mine`` (weights, output) is the model run's attention block
    on the prompt ``x [n, d]``."""
    theirs = attend(w, layer, x)
    for a, b in zip(mine, theirs):
        a, b = host(a), host(b)
        tolerance = (1e-4 if a.dtype == np.float32 else 1e-9) * (1.0 + float(np.abs(b).max()))
        if a.shape != b.shape or not np.all(np.abs(a - b) <= tolerance):
            raise GenerationError(
                "architecture",
                f"layer {layer} of {w.name} ({w.family}) computes its attention in a way the "
                "incremental step does not follow, so it is not generated step by step",
            )


def attend_new(w: ModelWeights, layer: int, x, cache: KVCache, policy: CachePolicy):
    """Layer ``layer``'s attention for new tokens ``x [t, d]`` at the cache's next positions:
    appends their keys and values (edited where the policy says) and returns the weights
    ``[h, t, m]`` over every position fed so far (m = start + t; exactly 0 where hidden) and
    the block's output ``[t, d]``. A prefill (empty cache) is checked against the model run's
    own attention block first."""
    ops = ops_for(x)
    lw = w.layers[layer]
    start = cache.length
    end = start + x.shape[0]
    if w.latent is not None:  # multi-head latent attention: its latent cache filled too
        q, k, v = latent_new(ops, w, layer, x, start, cache)  # [h, t, qk], [h, t, qk], [h, t, v]
    else:
        q, k, v = projections(ops, w, lw, x)  # [h, t, d_k], [kv, t, d_k], [kv, t, d_v]
        arch = w.arch
        q, k = qk_normed(ops, lw, w.eps, q, k, arch.qk_norm_over, arch.norm_offset)
        q, k = rotate_at_positions(ops, w, layer, q, k, start)
    cache.keys[:, start:end] = k
    cache.values[:, start:end] = v
    cache.length = end
    queries = np.arange(start, end)  # [t]
    model_window = w.window_of(layer)
    if start == 0:
        plain = CachePolicy().visible(queries, end, model_window)  # [t, m]
        mine = _core(ops, w, layer, q, k, v, plain)
        _check(w, layer, x, mine)
        if policy.full:
            return mine
    _apply_edits(cache, policy, layer, start, end)
    visible = policy.visible(queries, end, model_window)  # [t, m]
    return _core(ops, w, layer, q, cache.keys[:, :end], cache.values[:, :end], visible)
