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

Scaling variants, as transformers' ``modeling_rope_utils`` computes them (here in float64):
``linear`` divides every frequency by ``factor``; ``llama3`` (Llama 3.1/3.2) divides the low
frequencies (wavelength above ``original_max_position_embeddings / low_freq_factor``) by
``factor``, keeps the high ones (wavelength below ``original / high_freq_factor``) and blends
linearly in between; ``dynamic`` (NTK) raises the base to
``theta (factor L / max - (factor - 1))^(d / (d - 2))`` once the text's length L exceeds the
model's ``max_position_embeddings`` (unchanged below); ``yarn`` blends interpolated
(``/ factor``) and extrapolated frequencies along a ramp between the dimensions that turn
``beta_fast`` and ``beta_slow`` times over the original context, and multiplies cos and sin by
its ``attention_factor`` (``0.1 ln(factor) + 1`` unless given); ``longrope`` divides frequency
i by ``short_factor[i]``, or ``long_factor[i]`` when the text is longer than
``original_max_position_embeddings``, and multiplies cos and sin by
``sqrt(1 + ln(factor) / ln(original))`` unless given. :func:`inverse_frequencies` takes the
text's length for the two kinds that depend on it; :func:`attention_factor` gives the factor.
The settings are checked where they are read (the engine's ``RopeScaling``); here is the maths.

Also the tables added to X before the projections: sinusoidal and a seeded stand-in for a
learned table. Shapes: n positions, d_k the head width, d the model width.
"""

from __future__ import annotations

import math

import numpy as np


def inverse_frequencies(d_k: int, theta: float, scaling=None, seq_len: int | None = None):
    """The ``[d_k/2]`` angles per position step of the pairs (i, i + d_k/2), float64, for
    every scaling type: ``scaling`` has ``kind`` (``default``, ``linear``, ``llama3``,
    ``dynamic``, ``yarn``, ``longrope``) and the fields of the engine's ``RopeScaling`` (None:
    default). ``d_k`` is the rotated width (a partial rotary head's first dimensions).
    ``seq_len``: the text's length, which ``dynamic`` and ``longrope`` depend on (None: a
    text within the original context)."""
    kind = "default" if scaling is None else scaling.kind
    if kind == "dynamic":  # NTK: a larger base once the text outgrows the context
        longest = max(seq_len or 0, scaling.max_position_embeddings)
        stretch = scaling.factor * longest / scaling.max_position_embeddings - (scaling.factor - 1)
        theta = theta * stretch ** (d_k / (d_k - 2))
    exponents = np.arange(0, d_k, 2, dtype=np.float64) / d_k  # [d_k/2]
    if kind == "longrope":
        long = seq_len is not None and seq_len > scaling.original_max_position_embeddings
        ext = np.asarray(scaling.long_factor if long else scaling.short_factor, np.float64)
        return 1.0 / (ext * float(theta) ** exponents)  # [d_k/2]
    inv = 1.0 / (float(theta) ** exponents)  # [d_k/2]
    if kind == "linear":
        return inv / scaling.factor
    if kind == "llama3":
        return _llama3(inv, scaling)
    if kind == "yarn":
        return _yarn(d_k, float(theta), scaling)
    return inv


def attention_factor(scaling=None) -> float:
    """The factor transformers multiplies RoPE's cos and sin by: 1, except ``yarn``
    (``attention_factor``, else ``mscale(factor, mscale) / mscale(factor, mscale_all_dim)``
    when both are set, else ``mscale(factor)``, with ``mscale(s, m) = 0.1 m ln(s) + 1`` for
    s > 1) and ``longrope`` (``attention_factor``, else ``sqrt(1 + ln(factor) /
    ln(original_max_position_embeddings))`` for a factor above 1)."""
    kind = "default" if scaling is None else scaling.kind
    if kind not in ("yarn", "longrope"):
        return 1.0
    if scaling.attention_factor is not None:
        return float(scaling.attention_factor)
    factor = scaling.factor
    if kind == "longrope":
        if factor <= 1.0:
            return 1.0
        return math.sqrt(1 + math.log(factor) / math.log(scaling.original_max_position_embeddings))

    def mscale(scale: float, m: float = 1.0) -> float:
        return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

    if scaling.mscale and scaling.mscale_all_dim:
        return float(mscale(factor, scaling.mscale) / mscale(factor, scaling.mscale_all_dim))
    return mscale(factor)


def _yarn(d_k: int, theta: float, s) -> np.ndarray:
    """YaRN's ``[d_k/2]`` frequencies (transformers' ``_compute_yarn_parameters`` in float64):
    interpolated (``/ factor``) below the ramp, extrapolated (as is) above it."""
    original = s.original_max_position_embeddings

    def correction_dim(rotations: float) -> float:  # the dimension turning this many times
        return (d_k * math.log(original / (rotations * 2 * math.pi))) / (2 * math.log(theta))

    low, high = correction_dim(s.beta_fast), correction_dim(s.beta_slow)
    if s.truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, d_k - 1)
    if low == high:
        high += 0.001  # transformers' guard against a zero-width ramp
    ramp = np.clip((np.arange(d_k // 2, dtype=np.float64) - low) / (high - low), 0, 1)
    pos_freqs = theta ** (np.arange(0, d_k, 2, dtype=np.float64) / d_k)  # [d_k/2]
    extrapolation, interpolation = 1.0 / pos_freqs, 1.0 / (s.factor * pos_freqs)
    keep = 1 - ramp  # [d_k/2] the share of the extrapolated frequency
    return interpolation * (1 - keep) + extrapolation * keep  # [d_k/2]


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
