"""A rotary checkpoint's RoPE as the model run applies it: the base, the scaling (default,
linear, llama3, dynamic, yarn, longrope; :class:`~attention_explorer.engine.config.RopeScaling`)
and how many of each head's dimensions turn (partial rotary: GPT-NeoX's ``rotary_pct``, Phi's
and StableLM's ``partial_rotary_factor``).

As transformers computes it: the inverse frequencies of the rotated width ``r``
(:func:`attention_explorer.kernels.tables.inverse_frequencies`, which for ``dynamic`` and
``longrope`` depend on the text's length), cos and sin of positions 0..n-1 multiplied by the
scaling's attention factor (yarn's and longrope's mscale), and rotate-half on the first ``r``
dimensions of each head's q and k; the other ``d_k - r`` pass unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from attention_explorer.engine.config import RopeScaling
from attention_explorer.engine.engine_errors import AttentionInputError
from attention_explorer.kernels import tables
from attention_explorer.pretrained.model_errors import ModelError
from attention_explorer.pretrained.rotary import _rope_settings


@dataclass(frozen=True)
class RotaryPlan:
    """RoPE of a model: base ``theta``, ``scaling``, ``rotary_dim`` (even, at most d_k)."""

    theta: float
    scaling: RopeScaling
    rotary_dim: int
    d_k: int

    def frequencies(self, n: int | None = None) -> np.ndarray:
        """The ``[rotary_dim/2]`` inverse frequencies for a text of ``n`` tokens (float64)."""
        return tables.inverse_frequencies(self.rotary_dim, self.theta, self.scaling, n)

    @property
    def factor(self) -> float:
        """What cos and sin are multiplied by (yarn's and longrope's attention factor)."""
        return tables.attention_factor(self.scaling)

    @property
    def partial(self) -> bool:
        """Whether only the first ``rotary_dim`` of each head's dimensions turn."""
        return self.rotary_dim != self.d_k

    @property
    def length_dependent(self) -> bool:
        """Whether the frequencies depend on the text's length (dynamic, longrope)."""
        return self.scaling.kind in ("dynamic", "longrope")

    def cos_sin(self, ops, n: int, like=None):
        """``cos, sin [n, rotary_dim]`` of positions 0..n-1 in ``ops``' library (``like``'s
        dtype and device), times the attention factor."""
        cos, sin = ops.rotation_tables(np.arange(n), self.frequencies(n), like=like)
        factor = self.factor
        return (cos, sin) if factor == 1.0 else (cos * factor, sin * factor)

    def rotate(self, ops, q, k):
        """``q [h, n, d_k]`` and ``k [kv, n, d_k]`` with RoPE applied (numpy arrays or torch
        tensors); the dimensions past ``rotary_dim`` are left as they are."""
        cos, sin = self.cos_sin(ops, q.shape[-2], like=q)  # [n, r]
        return rotate_part(ops, q, cos, sin), rotate_part(ops, k, cos, sin)


def rotate_part(ops, x, cos, sin):
    """RoPE on the first ``cos.shape[-1]`` dimensions of ``x [.., n, d_k]``; the rest pass."""
    r = cos.shape[-1]
    if r == x.shape[-1]:
        return ops.rotate(x, cos, sin)  # [.., n, d_k]
    out = x * 1  # a new array or tensor: x itself is not changed
    out[..., :r] = ops.rotate(x[..., :r], cos, sin)  # [.., n, r]
    return out


def _fraction(arch, config: Mapping) -> tuple[float, str]:
    """(the fraction of each head that turns, the key it came from)."""
    for key in ("rope_scaling", "rope_parameters"):
        given = config.get(key)
        if isinstance(given, Mapping) and given.get("partial_rotary_factor") is not None:
            return given["partial_rotary_factor"], f"{key}.partial_rotary_factor"
    if arch.partial_rotary is None:
        return config.get("partial_rotary_factor", 1.0), "partial_rotary_factor"
    key, default = arch.partial_rotary
    return config.get(key, default), key


def rotary_plan(arch, config: Mapping, d_k: int) -> RotaryPlan:
    """The :class:`RotaryPlan` of a rotary checkpoint's config.json; a ModelError naming the
    key for a scaling, a fraction or a width that is not implemented."""
    theta, scaling = _rope_settings(config, arch)
    fraction, key = _fraction(arch, config)
    ok = isinstance(fraction, (int, float)) and not isinstance(fraction, bool)
    if not ok or not 0 < fraction <= 1:
        raise ModelError("config", f"config.json sets {key} {fraction!r}; expected (0, 1]")
    if arch.partial_rotary is None and fraction != 1:
        raise ModelError(
            "config",
            f"config.json sets {key} {fraction}, but {arch.label} rotate whole heads here "
            "(partial rotary is not implemented for this family)",
        )
    rotary_dim = int(d_k * fraction)
    if rotary_dim < 2 or rotary_dim % 2:
        raise ModelError(
            "config",
            f"config.json: {key} {fraction} turns {rotary_dim} of each head's {d_k} "
            "dimensions; RoPE needs an even number, at least 2",
        )
    if scaling.kind == "dynamic" and rotary_dim == 2:
        raise ModelError(
            "config", "config.json: a dynamic rope scaling needs more than 2 rotary dims"
        )
    if scaling.kind == "longrope" and len(scaling.short_factor) != rotary_dim // 2:
        raise ModelError(
            "config",
            f"config.json: the longrope short_factor and long_factor have "
            f"{len(scaling.short_factor)} values; the {rotary_dim} rotary dimensions need "
            f"{rotary_dim // 2}",
        )
    if not (np.isfinite(theta) and theta > 1):
        raise ModelError("config", f"config.json: rope_theta {theta} must be above 1")
    try:
        plan = RotaryPlan(float(theta), scaling, rotary_dim, d_k)
        plan.frequencies()
    except AttentionInputError as exc:
        raise ModelError("config", f"config.json: {exc.message}") from None
    return plan
