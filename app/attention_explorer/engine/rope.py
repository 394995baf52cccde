"""Rotary position embeddings (RoPE), as the LLaMA family applies them to queries and keys.

Each query and key vector ``x [d_k]`` at position p is rotated pair by pair: the pairs are
dimensions i and i + d_k/2 (the "rotate-half" convention of transformers' Llama, not the
interleaved 2i, 2i+1 of the RoPE paper), and pair i turns by the angle p * f_i, where

    f_i = 1 / theta^(2i / d_k)                      i = 0 .. d_k/2 - 1   (inverse frequencies)

    x' = x * cos(angle) + rotate_half(x) * sin(angle),   rotate_half(x) = [-x_hi, x_lo]

with cos and sin of the d_k/2 angles repeated for both halves. Because both q and k turn by
their own position's angle, ``q'(p) . k'(s)`` depends only on p - s: shifting every position
by the same amount leaves the scores unchanged.

Scaling variants (a checkpoint's ``rope_scaling`` / ``rope_parameters``) change only the
inverse frequencies: ``linear`` divides them all by ``factor``; ``llama3`` (Llama 3.1/3.2)
divides the low frequencies (wavelength above ``original_max_position_embeddings /
low_freq_factor``) by ``factor``, keeps the high ones (wavelength below ``original / high_freq_
factor``) and blends linearly in between. Other variants are refused by name.

Pure numpy in float64 (transformers computes the angles in float32: at position p its angles
differ from these by up to about p * 6e-8 rad). Shapes: n positions, d_k the head width.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from attention_explorer.engine.engine_errors import AttentionInputError

#: The default RoPE base.
DEFAULT_THETA = 10000.0
#: The scaling types implemented here (``default`` also stands for no scaling).
SCALING_TYPES = ("default", "linear", "llama3")
#: Keys of a checkpoint's rope dict that do not change the numbers here (or are read elsewhere).
_IGNORED_KEYS = frozenset({"rope_type", "type", "rope_theta"})


@dataclass(frozen=True)
class RopeScaling:
    """How the inverse frequencies are scaled: ``kind`` is one of :data:`SCALING_TYPES`.

    ``factor`` (linear and llama3), ``low_freq_factor``, ``high_freq_factor`` and
    ``original_max_position_embeddings`` (llama3 only; Llama 3.1's values by default).
    """

    kind: str = "default"
    factor: float = 1.0
    low_freq_factor: float = 1.0
    high_freq_factor: float = 4.0
    original_max_position_embeddings: int = 8192

    def __post_init__(self) -> None:
        if self.kind not in SCALING_TYPES:
            raise AttentionInputError(
                "rope_scaling",
                f"rope scaling type {self.kind!r} is not supported; "
                f"supported: {', '.join(SCALING_TYPES)}",
            )
        if not (math.isfinite(self.factor) and self.factor > 0):
            raise AttentionInputError("rope_scaling", f"factor {self.factor} must be above 0")
        if self.kind == "llama3":
            if not self.high_freq_factor > self.low_freq_factor > 0:
                raise AttentionInputError(
                    "rope_scaling",
                    f"llama3 needs high_freq_factor ({self.high_freq_factor}) above "
                    f"low_freq_factor ({self.low_freq_factor}) above 0",
                )
            if self.original_max_position_embeddings < 1:
                raise AttentionInputError(
                    "rope_scaling", "original_max_position_embeddings must be at least 1"
                )

    @classmethod
    def from_config(cls, mapping: Mapping | None) -> RopeScaling:
        """From a checkpoint's ``rope_scaling`` (or ``rope_parameters``) dict; None: default.

        Keys that would change the numbers and are not implemented are refused by name.
        """
        if mapping is None:
            return cls()
        kind = str(mapping.get("rope_type", mapping.get("type", "default")))
        if kind not in SCALING_TYPES:
            cls(kind=kind)  # raises, naming the supported types
        known = {"factor"} if kind == "linear" else set()
        if kind == "llama3":
            known = {"factor", "low_freq_factor", "high_freq_factor"}
            known.add("original_max_position_embeddings")
        for key, value in mapping.items():
            if key in _IGNORED_KEYS or key in known:
                continue
            if key == "partial_rotary_factor" and float(value) == 1.0:
                continue
            raise AttentionInputError(
                "rope_scaling", f"the key {key!r} of a {kind!r} rope scaling is not supported"
            )
        values = {key: mapping[key] for key in known if key in mapping}
        if kind == "llama3" and "original_max_position_embeddings" in values:
            values["original_max_position_embeddings"] = int(
                values["original_max_position_embeddings"]
            )
        return cls(kind=kind, **{k: v for k, v in values.items()})


def _even_width(d_k: int) -> int:
    if d_k < 2 or d_k % 2:
        raise AttentionInputError("d_k", f"RoPE needs an even head width d_k, not {d_k}")
    return d_k // 2


def inverse_frequencies(
    d_k: int, theta: float = DEFAULT_THETA, scaling: RopeScaling | None = None
) -> np.ndarray:
    """The ``[d_k/2]`` angles per position step of the pairs (i, i + d_k/2), float64."""
    half = _even_width(d_k)
    if not (math.isfinite(theta) and theta > 1):
        raise AttentionInputError("rope_theta", f"rope_theta {theta} must be above 1")
    inv = 1.0 / (float(theta) ** (np.arange(0, 2 * half, 2, dtype=np.float64) / d_k))  # [d_k/2]
    scaling = scaling or RopeScaling()
    if scaling.kind == "linear":
        return inv / scaling.factor
    if scaling.kind == "llama3":
        return _llama3(inv, scaling)
    return inv


def _llama3(inv: np.ndarray, s: RopeScaling) -> np.ndarray:
    """Llama 3.1's frequency scaling of ``inv [d_k/2]`` (transformers' formula, in float64)."""
    old = float(s.original_max_position_embeddings)
    low_wavelen, high_wavelen = old / s.low_freq_factor, old / s.high_freq_factor
    wavelen = 2 * math.pi / inv  # [d_k/2]
    scaled = np.where(wavelen > low_wavelen, inv / s.factor, inv)  # low frequencies slowed
    smooth = (old / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor)
    blended = (1 - smooth) * scaled / s.factor + smooth * scaled
    medium = ~(wavelen < high_wavelen) & ~(wavelen > low_wavelen)
    return np.where(medium, blended, scaled)  # [d_k/2]


def _positions(positions, n: int | None = None) -> np.ndarray:
    if positions is None:
        return np.arange(n, dtype=np.float64)  # [n]
    return np.asarray(positions, dtype=np.float64).reshape(-1)  # [n]


def rope_angles(
    positions, d_k: int, theta: float = DEFAULT_THETA, scaling: RopeScaling | None = None
) -> np.ndarray:
    """``[n, d_k/2]``: position x inverse frequency, the angle each pair turns by."""
    return np.outer(_positions(positions), inverse_frequencies(d_k, theta, scaling))


def rope_cos_sin(
    positions, d_k: int, theta: float = DEFAULT_THETA, scaling: RopeScaling | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``cos, sin [n, d_k]`` of the angles, each repeated for both halves (pair i and
    i + d_k/2 share an angle), as transformers' rotary embedding returns them."""
    angles = rope_angles(positions, d_k, theta, scaling)  # [n, d_k/2]
    both = np.concatenate([angles, angles], axis=-1)  # [n, d_k]
    return np.cos(both), np.sin(both)


def rotate_half(x: np.ndarray) -> np.ndarray:
    """``[..., d_k]`` -> ``[-x[d_k/2:], x[:d_k/2]]``: each pair (a, b) becomes (-b, a)."""
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)  # [..., d_k]


def apply_rope(
    x: np.ndarray,
    positions=None,
    theta: float = DEFAULT_THETA,
    scaling: RopeScaling | None = None,
) -> np.ndarray:
    """``x [..., n, d_k]`` rotated by position: ``x * cos + rotate_half(x) * sin``.

    ``positions [n]`` default to 0 .. n-1. Returns a new float64 array of x's shape.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim < 2:
        raise AttentionInputError("x", f"RoPE needs [n, d_k] vectors, not shape {x.shape}")
    n, d_k = x.shape[-2], x.shape[-1]
    where = _positions(positions, n)
    if where.shape[0] != n:
        raise AttentionInputError("positions", f"{where.shape[0]} positions for {n} vectors")
    cos, sin = rope_cos_sin(where, d_k, theta, scaling)  # [n, d_k] each
    return x * cos + rotate_half(x) * sin  # [..., n, d_k]
