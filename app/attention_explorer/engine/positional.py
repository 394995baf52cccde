"""Positional encodings: tables added to the embeddings X before the projections
(sinusoidal, learned), and the cos/sin tables that rotate q and k (RoPE, :mod:`.rope`).

Positions run from ``offset`` (0 unless an experiment shifts them) to ``offset + n - 1``.
"""

from __future__ import annotations

import numpy as np

from attention_explorer.engine.rope import rope_cos_sin


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


def positional_table(
    kind: str, n: int, d_model: int, seed: int = 0, offset: int = 0
) -> np.ndarray | None:
    """The table added to X for ``kind``, float64 ``[n, d_model]`` for positions ``offset``
    .. ``offset + n - 1``; None for ``none`` and ``rope`` (RoPE adds nothing to X)."""
    if kind == "sinusoidal":
        return sinusoidal_encoding(offset + n, d_model)[offset:]  # [n, d_model]
    if kind == "learned":
        return learned_encoding(offset + n, d_model, seed)[offset:]  # [n, d_model]
    return None


def rotary_tables(config, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``cos, sin [n, d_k]`` that turn the vectors at positions ``config.position_offset`` +
    0 .. n-1 (pair i and i + d_k/2 share an angle), for :func:`rotate`."""
    positions = config.position_offset + np.arange(n, dtype=np.float64)  # [n]
    return rope_cos_sin(positions, config.head_dim, config.rope_theta, config.rope_scaling_record())


def rotate(xp, x, cos, sin):
    """``x [s, n, d_k]`` rotated pair by pair: ``x * cos + rotate_half(x) * sin`` with
    ``cos, sin [n, d_k]`` (arrays of ``xp``); works on numpy and torch alike."""
    half = x.shape[-1] // 2
    turned = xp.concat([-x[..., half:], x[..., :half]], axis=-1)  # [s, n, d_k]
    return x * cos + turned * sin  # [s, n, d_k]
