"""One layer of a model whose layers differ (local and global layers, NoPE layers) as the
session builders see it, and what no session can reproduce yet.

:func:`layer_view` puts layer L's window and RoPE in the model-wide fields
(``ModelWeights.window``, ``rotary``, ``rope``) that the session builders of
:mod:`~attention_explorer.pretrained.rotary` and :mod:`~attention_explorer.pretrained.rope_plan`
read, so a sliding layer opens with its window as a custom mask, a NoPE layer with no RoPE and
a local layer with its own frequencies (in direct mode when the engine's RoPE setting differs).
:func:`unbridged` names a layer that no session computes exactly yet (soft-capped scores:
refused, never approximated, while the engine has no soft cap); :func:`direct_layer_parts`
opens a layer in direct mode with q and k exactly as the model run makes them (QK-norm over a
head or the whole projection, with Gemma's 1 + w; any RoPE), for layers whose RoPE or QK-norm
the engine's settings cannot express.
"""

from __future__ import annotations

from dataclasses import fields, replace

import numpy as np

from attention_explorer.engine import AttentionConfig, AttentionInputs
from attention_explorer.kernels import numpy_ops
from attention_explorer.pretrained.checkpoint.model_weights import ModelWeights
from attention_explorer.pretrained.kernel import query_key_value


def layer_view(w: ModelWeights, layer: int) -> ModelWeights:
    """``w`` with layer ``layer``'s window, RoPE and the config keys its RoPE reads as the
    model's (the same object when every layer is alike)."""
    if not (w.kinds or w.rotaries):
        return w
    rotary, keys = w.rotary_of(layer), w.kinds[layer].rope if w.kinds else None
    return replace(
        w,
        config=w.config if keys is None else {**w.config, **keys},
        window=w.window_of(layer),
        rotary=rotary,
        rope=None if rotary is None else rotary.frequencies(),
        kinds=(),
        rotaries=(),
    )


def engine_caps() -> bool:
    """Whether the engine's settings have a soft cap on the scores (``softcap``)."""
    return "softcap" in {f.name for f in fields(AttentionConfig)}


def unbridged(w: ModelWeights, layer: int) -> str:
    """Why layer ``layer`` cannot open as a session that reproduces it (a sentence), or ""."""
    if w.score_cap is not None and not engine_caps():
        key = w.arch.score_cap_key
        return (
            f"layer {layer} of {w.name} soft-caps its scores ({key} {w.score_cap:g}: "
            "cap · tanh(scores / cap) before the softmax), which is not a stage of the engine "
            "yet, so it cannot open as a session that reproduces it"
        )
    return ""


def mask_settings(w: ModelWeights, n: int) -> dict:
    """The layer's mask settings: causal or none, or its sliding window as a custom mask."""
    blocked = numpy_ops.blocked_keys(n, w.causal, w.window)  # [n, n] or None
    if w.window is not None and blocked is not None:
        return {"mask": "custom", "custom_mask": tuple(map(tuple, (~blocked).tolist()))}
    return {"mask": "causal" if w.causal else "none"}


def direct_layer_parts(w: ModelWeights, layer: int, x: np.ndarray, scale: tuple[str, float]):
    """The engine's (config, inputs) for layer ``layer`` of ``w`` (a :func:`layer_view`) on
    ``x [n, d]`` in direct mode: Q, K and V exactly as the model run's kernel makes them
    (projected, QK-normed, rotated), the model's W_O. ``scale`` is (scale, scale_factor)."""
    x = np.asarray(x, dtype=np.float64)
    q, k, v = query_key_value(numpy_ops, w, layer, x)  # [h, n, d_k], [kv, n, d_k], [kv, n, d_v]
    lw = w.layers[layer]
    config = AttentionConfig(
        mode="direct",
        heads=w.heads,
        d_model=w.d_model,
        d_k=w.d_k,
        d_v=v.shape[-1],
        kv_heads=w.kv_heads if w.kv_heads != w.heads else None,
        scale=scale[0],
        scale_factor=scale[1],
        **mask_settings(w, x.shape[0]),
        **({} if w.score_cap is None else {"softcap": w.score_cap}),
    )
    return config, AttentionInputs(Q=q, K=k, V=v, W_O=lw.W_O, b_O=lw.b_O)


def with_sinks(lw, parts: tuple[AttentionConfig, AttentionInputs]):
    """A layer's session ``parts`` (config, inputs) with its attention sinks (gpt-oss: the
    engine's ``attention_sinks`` and the layer's logits as ``inputs.sinks``, editable), or
    as they are for a layer without sinks."""
    config, inputs = parts
    if lw.sinks is None:
        return parts
    return replace(config, attention_sinks=True), inputs.with_changes(sinks=lw.sinks)
