"""What the rotary families (Llama, Qwen2, Mistral) add to the forward pass: RoPE on q and k
per head before the scores, and Mistral's sliding window as a mask.

The rotation itself is :mod:`attention_explorer.engine.rope` (rotate-half pairs i and
i + d_k/2, positions 0..n-1, ``llama3`` and ``linear`` frequency scaling). Here the
checkpoint's settings are read (``rope_theta``, ``rope_scaling``; other scaling types or keys
are refused by name) and an engine session is built for a rotary layer: the engine's
projection mode has no RoPE stage yet, so a rotary layer opens in direct mode with the
rotated ``Q [heads, n, d_k]``, ``K [kv_heads, n, d_k]``, ``V`` and the model's ``W_O``. That
is exactly what the model computes, and the model run feeds it on unchanged.

The sliding window, as transformers applies it: query i sees key j when ``j <= i`` and
``i - j < window`` (a key ``window`` or more positions back is hidden).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from attention_explorer.engine import AttentionConfig, AttentionInputs
from attention_explorer.engine.errors import AttentionInputError
from attention_explorer.engine.rope import (
    DEFAULT_THETA,
    RopeScaling,
    inverse_frequencies,
    rotate_half,
)
from attention_explorer.pretrained.errors import ModelError


def rope_frequencies(config: Mapping, d_k: int) -> np.ndarray:
    """The ``[d_k/2]`` inverse frequencies of a rotary checkpoint's config, float64.

    Reads ``rope_theta`` and ``rope_scaling`` (or the newer ``rope_parameters``); a scaling
    type or key not implemented is a ModelError naming it.
    """
    legacy, params = config.get("rope_scaling"), config.get("rope_parameters")
    for given in (legacy, params):  # each is checked: an unsupported type is refused
        if isinstance(given, Mapping):
            _scaling(given)
    rope = legacy if isinstance(legacy, Mapping) else params
    theta = config.get("rope_theta")
    for given in (params, legacy):
        if theta is None and isinstance(given, Mapping):
            theta = given.get("rope_theta")
    scaling = _scaling(rope if isinstance(rope, Mapping) else None)
    try:
        return inverse_frequencies(d_k, float(theta or DEFAULT_THETA), scaling)
    except AttentionInputError as exc:
        raise ModelError("config", f"config.json rope settings: {exc}") from None


def _scaling(rope: Mapping | None) -> RopeScaling:
    try:
        return RopeScaling.from_config(rope)
    except AttentionInputError as exc:
        raise ModelError("config", f"config.json rope settings: {exc}") from None


def rotate(x: np.ndarray, inv_freq: np.ndarray) -> np.ndarray:
    """``x [heads, n, d_k]`` rotated by position 0..n-1 (``x cos + rotate_half(x) sin``), in
    x's dtype (the angles are computed in float64)."""
    n = x.shape[-2]
    angles = np.outer(np.arange(n, dtype=np.float64), inv_freq)  # [n, d_k/2]
    both = np.concatenate([angles, angles], axis=-1)  # [n, d_k]
    cos, sin = np.cos(both).astype(x.dtype), np.sin(both).astype(x.dtype)
    return x * cos + rotate_half(x) * sin  # [heads, n, d_k]


def hidden_keys(n: int, causal: bool, window: int | None) -> np.ndarray | None:
    """``[n, n]`` True where query i may NOT see key j (causal and/or sliding window), or
    None when every key is visible."""
    if not causal and window is None:
        return None
    i = np.arange(n)[:, None]  # [n, 1]
    j = np.arange(n)[None, :]  # [1, n]
    hidden = (j > i) if causal else np.zeros((n, n), dtype=bool)  # [n, n]
    if window is not None:
        hidden = hidden | (i - j >= window)
    return hidden


def _split(x: np.ndarray, count: int) -> np.ndarray:
    n = x.shape[0]
    return x.reshape(n, count, -1).transpose(1, 0, 2)  # [count, n, d_head]


def _plus(x: np.ndarray, b) -> np.ndarray:
    return x if b is None else x + b


def rotary_parts(w, layer: int, x: np.ndarray, scale: tuple[str, float]):
    """The engine's (config, inputs) for rotary layer ``layer`` on ``x [n, d]``: direct mode
    with the rotated q and k (see the module docstring). ``scale`` is (scale, scale_factor)."""
    lw = w.layers[layer]
    n = x.shape[0]
    q = rotate(_split(_plus(x @ lw.W_Q, lw.b_Q), w.heads), w.rope)  # [h, n, d_k]
    k = rotate(_split(_plus(x @ lw.W_K, lw.b_K), w.kv_heads), w.rope)  # [kv, n, d_k]
    v = _split(_plus(x @ lw.W_V, lw.b_V), w.kv_heads)  # [kv, n, d_v]
    hidden = hidden_keys(n, w.causal, w.window)
    if w.window is not None and hidden is not None:
        mask = {"mask": "custom", "custom_mask": tuple(map(tuple, (~hidden).tolist()))}
    else:
        mask = {"mask": "causal" if w.causal else "none"}
    config = AttentionConfig(
        mode="direct",
        heads=w.heads,
        d_model=w.d_model,
        d_k=w.d_k,
        d_v=v.shape[-1],
        kv_heads=w.kv_heads if w.kv_heads != w.heads else None,
        scale=scale[0],
        scale_factor=scale[1],
        **mask,
    )
    inputs = AttentionInputs(Q=q, K=k, V=v, W_O=lw.W_O, b_O=lw.b_O)
    return config, inputs
