"""What the rotary families (Llama, Qwen2, Mistral) add to the forward pass: RoPE on q and k
per head before the scores, and Mistral's sliding window as a mask.

The rotation itself is :mod:`attention_explorer.engine.rope` (rotate-half pairs i and
i + d_k/2, positions 0..n-1, ``llama3`` and ``linear`` frequency scaling). Here the
checkpoint's settings are read (``rope_theta``, ``rope_scaling``; other scaling types or keys
are refused by name) and an engine session is built for a rotary layer.

Whenever the engine's own RoPE setting (``positional="rope"`` with ``rope_theta``,
``rope_scaling`` and ``rope_factor``) gives exactly the checkpoint's inverse frequencies, the
layer opens as an ordinary projection session: X is the layer's normed input, W_Q, W_K, W_V,
W_O and their biases are the model's, and the engine rotates q and k itself (so W_Q and W_K
can be edited). Otherwise (a ``llama3`` scaling whose ``low_freq_factor``,
``high_freq_factor`` or ``original_max_position_embeddings`` differ from the engine's
Llama 3.1 values) it falls back to direct mode with the rotated ``Q [heads, n, d_k]``,
``K [kv_heads, n, d_k]``, ``V`` and the model's ``W_O``, and :func:`rotary_note` says why.

The sliding window, as transformers applies it: query i sees key j when ``j <= i`` and
``i - j < window`` (a key ``window`` or more positions back is hidden).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from attention_explorer.engine import AttentionConfig, AttentionInputs
from attention_explorer.engine.engine_errors import AttentionInputError
from attention_explorer.engine.rope import (
    DEFAULT_THETA,
    RopeScaling,
    inverse_frequencies,
    rotate_half,
)
from attention_explorer.pretrained.model_errors import ModelError


def _rope_settings(config: Mapping) -> tuple[float, RopeScaling]:
    """A rotary checkpoint's (theta, scaling) from ``rope_theta`` and ``rope_scaling`` (or the
    newer ``rope_parameters``); a scaling type or key not implemented is a ModelError."""
    legacy, params = config.get("rope_scaling"), config.get("rope_parameters")
    for given in (legacy, params):  # each is checked: an unsupported type is refused
        if isinstance(given, Mapping):
            _scaling(given)
    rope = legacy if isinstance(legacy, Mapping) else params
    theta = config.get("rope_theta")
    for given in (params, legacy):
        if theta is None and isinstance(given, Mapping):
            theta = given.get("rope_theta")
    return float(theta or DEFAULT_THETA), _scaling(rope if isinstance(rope, Mapping) else None)


def rope_frequencies(config: Mapping, d_k: int) -> np.ndarray:
    """The ``[d_k/2]`` inverse frequencies of a rotary checkpoint's config, float64.

    Reads ``rope_theta`` and ``rope_scaling`` (or the newer ``rope_parameters``); a scaling
    type or key not implemented is a ModelError naming it.
    """
    theta, scaling = _rope_settings(config)
    try:
        return inverse_frequencies(d_k, theta, scaling)
    except AttentionInputError as exc:
        raise ModelError("config", f"config.json rope settings: {exc}") from None


def engine_rope(w) -> tuple[dict | None, str]:
    """The engine settings (``positional="rope"``, ``rope_theta``, ``rope_scaling``,
    ``rope_factor``) that reproduce ``w``'s rotation exactly, with ""; or (None, why not).

    The engine's config carries only a scaling kind and a factor (llama3's other parameters
    are Llama 3.1's); the check is that its inverse frequencies equal the checkpoint's.
    """
    theta, scaling = _rope_settings(w.config)
    settings = {
        "positional": "rope",
        "rope_theta": theta,
        "rope_scaling": scaling.kind,
        "rope_factor": float(scaling.factor),
    }
    engine = AttentionConfig(d_k=w.d_k, **settings).rope_scaling_record()  # what it computes
    if engine != scaling:
        differ = [
            f"{name} {getattr(scaling, name)} (the engine uses {getattr(engine, name)})"
            for name in ("low_freq_factor", "high_freq_factor", "original_max_position_embeddings")
            if getattr(scaling, name) != getattr(engine, name)
        ]
        return None, f"its {scaling.kind} rope scaling has " + ", ".join(differ)
    if not np.array_equal(inverse_frequencies(w.d_k, theta, engine), w.rope):  # [d_k/2]
        return None, "the engine's RoPE frequencies differ from the checkpoint's"
    return settings, ""


def rotary_note(w) -> str:
    """A sentence for the session description when a rotary layer opens in direct mode
    (see the module docstring), else ""."""
    if w.rope is None:
        return ""
    settings, why = engine_rope(w)
    if settings is not None:
        return ""
    return (
        f" Q and K are given already rotated (direct mode), so W_Q and W_K cannot be edited: "
        f"{why}, which the engine's RoPE setting cannot express."
    )


def _scaling(rope: Mapping | None) -> RopeScaling:
    try:
        return RopeScaling.from_config(rope)
    except AttentionInputError as exc:
        raise ModelError("config", f"config.json rope settings: {exc}") from None


def rotation_tables(n: int, inv_freq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin ``[n, d_k]`` (float64) of the angles of positions 0..n-1: each frequency
    twice, for the pairs (i, i + d_k/2) that rotate_half makes."""
    angles = np.outer(np.arange(n, dtype=np.float64), inv_freq)  # [n, d_k/2]
    both = np.concatenate([angles, angles], axis=-1)  # [n, d_k]
    return np.cos(both), np.sin(both)


def rotate(x: np.ndarray, inv_freq: np.ndarray) -> np.ndarray:
    """``x [heads, n, d_k]`` rotated by position 0..n-1 (``x cos + rotate_half(x) sin``), in
    x's dtype (the angles are computed in float64)."""
    cos, sin = rotation_tables(x.shape[-2], inv_freq)  # [n, d_k]
    return x * cos.astype(x.dtype) + rotate_half(x) * sin.astype(x.dtype)  # [heads, n, d_k]


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


def _mask(w, n: int) -> dict:
    """The layer's mask settings: causal, or the sliding window as a custom mask."""
    hidden = hidden_keys(n, w.causal, w.window)  # [n, n] or None
    if w.window is not None and hidden is not None:
        return {"mask": "custom", "custom_mask": tuple(map(tuple, (~hidden).tolist()))}
    return {"mask": "causal" if w.causal else "none"}


def rotary_parts(w, layer: int, x: np.ndarray, scale: tuple[str, float]):
    """The engine's (config, inputs) for rotary layer ``layer`` on ``x [n, d]``: projection
    mode with the engine's RoPE when it reproduces the model's, else direct mode with the
    rotated q and k (see the module docstring). ``scale`` is (scale, scale_factor)."""
    lw = w.layers[layer]
    shared = {
        "heads": w.heads,
        "d_model": w.d_model,
        "d_k": w.d_k,
        "kv_heads": w.kv_heads if w.kv_heads != w.heads else None,
        "scale": scale[0],
        "scale_factor": scale[1],
        **_mask(w, x.shape[0]),
    }
    rope, _ = engine_rope(w)
    if rope is not None:
        d_v = lw.W_V.shape[1] // w.kv_heads
        config = AttentionConfig(mode="projection", d_v=d_v, **shared, **rope)
        return config, lw.projection_inputs(x)
    q = rotate(_split(_plus(x @ lw.W_Q, lw.b_Q), w.heads), w.rope)  # [h, n, d_k]
    k = rotate(_split(_plus(x @ lw.W_K, lw.b_K), w.kv_heads), w.rope)  # [kv, n, d_k]
    v = _split(_plus(x @ lw.W_V, lw.b_V), w.kv_heads)  # [kv, n, d_v]
    config = AttentionConfig(mode="direct", d_v=v.shape[-1], **shared)
    return config, AttentionInputs(Q=q, K=k, V=v, W_O=lw.W_O, b_O=lw.b_O)
