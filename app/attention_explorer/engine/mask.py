"""The boolean attention mask: True where query i may attend to key j."""

from __future__ import annotations

import numpy as np

from attention_explorer.engine.cache import EngineCache
from attention_explorer.engine.config import AttentionConfig
from attention_explorer.kernels import numpy_ops


def allowed_mask(
    config: AttentionConfig, n: int, m: int, cache: EngineCache | None = None
) -> np.ndarray:
    """``[n, m]`` bool for the config's mask kind, read-only (it may be shared by traces).

    causal uses torch's top-left alignment (``tril`` of an n x m matrix of ones), so query i
    sees keys 0..i; padding hides the keys in ``padded_keys`` from every query. A sliding
    ``config.window`` W then also hides from query i every key j with i − j >= W (as
    transformers' sliding-window layers do, on top of the causal mask). With a
    ``cache`` the last mask made is reused while kind, sizes and padded keys stay the same (a
    custom mask is always made anew); without one every call makes a new array.
    """
    if cache is None or config.mask == "custom":
        return _read_only(config, n, m)
    key = (config.mask, n, m, tuple(config.padded_keys or ()), config.window)
    return cache.mask(key, lambda: _read_only(config, n, m))


def _read_only(config: AttentionConfig, n: int, m: int) -> np.ndarray:
    allowed = _make(config, n, m)  # [n, m]
    if config.window is not None:
        allowed = allowed & numpy_ops.window_mask(n, m, config.window)  # [n, m]
    allowed.setflags(write=False)
    return allowed


def _make(config: AttentionConfig, n: int, m: int) -> np.ndarray:
    if config.mask == "causal":
        return numpy_ops.causal_mask(n, m)  # [n, m], True where j <= i
    if config.mask == "padding":
        return numpy_ops.padding_mask(n, m, config.padded_keys)  # [n, m]
    if config.mask == "custom" and config.custom_mask is not None:
        return np.array(config.custom_mask, dtype=bool).reshape(n, m)  # [n, m]
    return np.ones((n, m), dtype=bool)  # [n, m]
