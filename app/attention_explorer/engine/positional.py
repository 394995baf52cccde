"""Positional encodings added to the embeddings X before the projections."""

from __future__ import annotations

import numpy as np


def sinusoidal_encoding(n: int, d_model: int) -> np.ndarray:
    """Vaswani et al. (2017): PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(same).

    Returns float64 ``[n, d_model]``; ``d_model`` must be even.
    """
    positions = np.arange(n, dtype=np.float64)[:, None]  # [n, 1]
    rates = 10000.0 ** (-np.arange(0, d_model, 2, dtype=np.float64) / d_model)  # [d/2]
    table = np.zeros((n, d_model), dtype=np.float64)  # [n, d]
    table[:, 0::2] = np.sin(positions * rates)
    table[:, 1::2] = np.cos(positions * rates)
    return table


def learned_encoding(n: int, d_model: int, seed: int = 0) -> np.ndarray:
    """A stand-in for a learned table: seeded normal values with std 0.1, ``[n, d_model]``.

    Row p is the same whatever n is, so adding tokens never changes earlier positions.
    """
    rng = np.random.default_rng(seed)
    width = max(n, 1)
    return rng.normal(0.0, 0.1, size=(width, d_model))[:n]


def positional_table(kind: str, n: int, d_model: int, seed: int = 0) -> np.ndarray | None:
    """The table for ``kind`` (``none`` gives None), float64 ``[n, d_model]``."""
    if kind == "sinusoidal":
        return sinusoidal_encoding(n, d_model)
    if kind == "learned":
        return learned_encoding(n, d_model, seed)
    return None
