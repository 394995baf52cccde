"""QK-norm's weights (``inputs.q_norm``, ``inputs.k_norm``) kept in step with the sizes.

Turning QK-norm on, changing heads or d_k, or switching between one weight vector per head
width ("head") and one over every head ("all") gives the weights the config's shape: the
numbers of each head's block are kept where they overlap, and new ones are neutral (1 for
``rms``, 0 for ``rms_one_plus``, whose factor is 1 + w), so growing a size never changes what
the kept dimensions compute.
"""

from __future__ import annotations

import numpy as np


def neutral_weight(config) -> float:
    """The weight that leaves a normed value as it is: 1 (``rms``) or 0 (``rms_one_plus``)."""
    return 0.0 if config.qk_norm == "rms_one_plus" else 1.0


def _blocks(weights: np.ndarray, config, which: str) -> np.ndarray:
    """``weights`` as ``[blocks, d_k]``: one block per head ("all") or the one shared."""
    count = weights.size // max(1, config.head_dim)
    if config.qk_norm_width == "all" and count * config.head_dim == weights.size:
        return weights.reshape(count, config.head_dim)  # [heads, d_k]
    return weights.reshape(1, -1)  # [1, d_k]


def fitted(weights: np.ndarray | None, old, new, which: str) -> np.ndarray | None:
    """``weights`` (shaped for config ``old``) in the shape config ``new`` asks for; None
    while ``new`` has QK-norm off and there were none."""
    if weights is None and not new.qk_normed:
        return None
    shape = new.qk_norm_shape(which)
    if (
        weights is not None
        and weights.shape == shape
        and (old.qk_norm_width == new.qk_norm_width and old.head_dim == new.head_dim)
    ):
        return weights
    fill = neutral_weight(new)
    blocks_new = shape[0] // new.head_dim  # 1 per head width, else heads (or kv heads)
    out = np.full((blocks_new, new.head_dim), fill)  # [blocks, d_k]
    if weights is not None:
        old_blocks = _blocks(np.asarray(weights, dtype=np.float64), old, which)  # [b, d_k']
        width = min(old_blocks.shape[1], new.head_dim)
        for b in range(blocks_new):
            if len(old_blocks) == 1:  # one shared vector fills every head's block
                source = old_blocks[0]
            elif b < len(old_blocks):
                source = old_blocks[b]
            else:
                continue  # a new head: neutral
            out[b, :width] = source[:width]
    return out.reshape(shape)


def refit_norm_weights(inputs, old, new) -> dict:
    """The ``q_norm`` and ``k_norm`` changes that fit ``inputs`` (of config ``old``) to ``new``."""
    return {
        name: fitted(getattr(inputs, name), old, new, which)
        for name, which in (("q_norm", "q"), ("k_norm", "k"))
    }
