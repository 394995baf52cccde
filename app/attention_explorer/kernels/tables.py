"""Position tables, written once for every array library: they are small, so they are made in
float64 numpy and each namespace converts them (``rotation_tables`` of
:mod:`.numpy_ops` and :mod:`.torch_ops`).

RoPE turns each query and key vector ``x [d_k]`` at position p pair by pair: the pairs are
dimensions i and i + d_k/2 (the "rotate-half" convention of transformers' Llama, not the
interleaved 2i, 2i+1 of the RoPE paper), and pair i turns by the angle p * f_i, where

    f_i = 1 / theta^(2i / d_k)                      i = 0 .. d_k/2 - 1   (inverse frequencies)

    x' = x * cos(angle) + rotate_half(x) * sin(angle),   rotate_half(x) = [-x_hi, x_lo]

with cos and sin of the d_k/2 angles repeated for both halves. Because q and k each turn by
their own position's angle, ``q'(p) . k'(s)`` depends only on p - s.

Scaling variants change only the inverse frequencies: ``linear`` divides them all by
``factor``; ``llama3`` (Llama 3.1/3.2) divides the low frequencies (wavelength above
``original_max_position_embeddings / low_freq_factor``) by ``factor``, keeps the high ones
(wavelength below ``original / high_freq_factor``) and blends linearly in between. The
settings are checked where they are read (the engine's ``RopeScaling``); here is the maths.

Also the tables added to X before the projections: sinusoidal and a seeded stand-in for a
learned table. Shapes: n positions, d_k the head width, d the model width.
"""

from __future__ import annotations

import math

import numpy as np


def inverse_frequencies(d_k: int, theta: float, scaling=None) -> np.ndarray:
    """The ``[d_k/2]`` angles per position step of the pairs (i, i + d_k/2), float64, for
    every scaling type: ``scaling`` has ``kind`` (``default``, ``linear``, ``llama3``),
    ``factor``, ``low_freq_factor``, ``high_freq_factor`` and
    ``original_max_position_embeddings`` (None: default)."""
    half = d_k // 2
    inv = 1.0 / (float(theta) ** (np.arange(0, 2 * half, 2, dtype=np.float64) / d_k))  # [d_k/2]
    kind = "default" if scaling is None else scaling.kind
    if kind == "linear":
        return inv / scaling.factor
    if kind == "llama3":
        return _llama3(inv, scaling)
    return inv


def _llama3(inv: np.ndarray, s) -> np.ndarray:
    """Llama 3.1's frequency scaling of ``inv [d_k/2]`` (transformers' formula, in float64)."""
    old = float(s.original_max_position_embeddings)
    low_wavelen, high_wavelen = old / s.low_freq_factor, old / s.high_freq_factor
    wavelen = 2 * math.pi / inv  # [d_k/2]
    scaled = np.where(wavelen > low_wavelen, inv / s.factor, inv)  # low frequencies slowed
    smooth = (old / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor)
    blended = (1 - smooth) * scaled / s.factor + smooth * scaled
    medium = ~(wavelen < high_wavelen) & ~(wavelen > low_wavelen)
    return np.where(medium, blended, scaled)  # [d_k/2]


def positions(n: int, offset: int = 0) -> np.ndarray:
    """Positions ``offset .. offset + n - 1`` as float64 ``[n]``."""
    return offset + np.arange(n, dtype=np.float64)  # [n]


def angles(where, inv_freq: np.ndarray) -> np.ndarray:
    """``[n, d_k/2]``: position x inverse frequency, the angle each pair turns by."""
    return np.outer(np.asarray(where, dtype=np.float64).reshape(-1), inv_freq)  # [n, d_k/2]


def cos_sin(where, inv_freq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """THE cos/sin table builder: ``cos, sin [n, d_k]`` (float64) of positions ``where [n]``,
    each angle repeated for both halves (pair i and i + d_k/2 share an angle), as
    transformers' rotary embedding returns them."""
    turns = angles(where, inv_freq)  # [n, d_k/2]
    both = np.concatenate([turns, turns], axis=-1)  # [n, d_k]
    return np.cos(both), np.sin(both)


def sinusoidal(n: int, d_model: int) -> np.ndarray:
    """Vaswani et al. (2017): PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(same).

    Returns float64 ``[n, d_model]``; ``d_model`` must be even.
    """
    where = np.arange(n, dtype=np.float64)[:, None]  # [n, 1]
    rates = 10000.0 ** (-np.arange(0, d_model, 2, dtype=np.float64) / d_model)  # [d/2]
    table = np.zeros((n, d_model), dtype=np.float64)  # [n, d]
    table[:, 0::2] = np.sin(where * rates)
    table[:, 1::2] = np.cos(where * rates)
    return table


def learned(n: int, d_model: int, seed: int = 0) -> np.ndarray:
    """A stand-in for a learned table: seeded normal values with std 0.1, ``[n, d_model]``.

    Row p is the same whatever n is, so adding tokens never changes earlier positions.
    """
    rng = np.random.default_rng(seed)
    return rng.normal(0.0, 0.1, size=(max(n, 1), d_model))[:n]  # [n, d_model]


def added_table(
    kind: str, n: int, d_model: int, seed: int = 0, offset: int = 0
) -> np.ndarray | None:
    """The table added to X for positional ``kind``, float64 ``[n, d_model]`` for positions
    ``offset .. offset + n - 1``; None for ``none`` and ``rope`` (RoPE adds nothing to X)."""
    if kind == "sinusoidal":
        return sinusoidal(offset + n, d_model)[offset:]  # [n, d_model]
    if kind == "learned":
        return learned(offset + n, d_model, seed)[offset:]  # [n, d_model]
    return None
