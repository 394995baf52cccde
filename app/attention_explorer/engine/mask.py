"""The boolean attention mask: True where query i may attend to key j."""

from __future__ import annotations

import numpy as np

from attention_explorer.engine.config import AttentionConfig

#: The last mask made, by (kind, n, m, padded keys): edits that leave the mask alone reuse it
#: (a 4096 x 4096 mask is 16 MiB of fresh memory, 3 to 35 ms to make).
_last: tuple[tuple, np.ndarray] | None = None


def allowed_mask(config: AttentionConfig, n: int, m: int) -> np.ndarray:
    """``[n, m]`` bool for the config's mask kind, read-only (it may be shared by traces).

    causal uses torch's top-left alignment (``tril`` of an n x m matrix of ones), so query i
    sees keys 0..i; padding hides the keys in ``padded_keys`` from every query.
    """
    global _last
    key = (config.mask, n, m, tuple(config.padded_keys or ()))
    if config.mask != "custom" and _last is not None and _last[0] == key:
        return _last[1]
    allowed = _make(config, n, m)
    allowed.setflags(write=False)
    if config.mask != "custom":
        _last = (key, allowed)
    return allowed


def _make(config: AttentionConfig, n: int, m: int) -> np.ndarray:
    if config.mask == "causal":
        return np.tri(n, m, dtype=bool)  # [n, m], True where j <= i (np.tril's cost without ones)
    allowed = np.ones((n, m), dtype=bool)  # [n, m]
    if config.mask == "padding":
        allowed[:, list(config.padded_keys)] = False
    elif config.mask == "custom" and config.custom_mask is not None:
        allowed = np.array(config.custom_mask, dtype=bool).reshape(n, m)
    return allowed
