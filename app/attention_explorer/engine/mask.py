"""The boolean attention mask: True where query i may attend to key j."""

from __future__ import annotations

import numpy as np

from attention_explorer.engine.config import AttentionConfig


def allowed_mask(config: AttentionConfig, n: int, m: int) -> np.ndarray:
    """``[n, m]`` bool for the config's mask kind.

    causal uses torch's top-left alignment (``tril`` of an n x m matrix of ones), so query i
    sees keys 0..i; padding hides the keys in ``padded_keys`` from every query.
    """
    if config.mask == "causal":
        return np.tri(n, m, dtype=bool)  # [n, m], True where j <= i (np.tril's cost without ones)
    allowed = np.ones((n, m), dtype=bool)  # [n, m]
    if config.mask == "padding":
        allowed[:, list(config.padded_keys)] = False
    elif config.mask == "custom" and config.custom_mask is not None:
        allowed = np.array(config.custom_mask, dtype=bool).reshape(n, m)
    return allowed
