"""RoPE's scaling, checked: the :class:`RopeScaling` record of every scaling type (default,
linear, llama3 and the long-context dynamic, yarn, longrope) and the checked inverse
frequencies; the maths itself is :mod:`attention_explorer.kernels.tables`."""

from __future__ import annotations

import math
from dataclasses import dataclass

from attention_explorer.engine.engine_errors import AttentionInputError
from attention_explorer.kernels import tables

#: The default RoPE base.
DEFAULT_THETA = 10000.0
#: The RoPE scaling types (``default`` also stands for no scaling); the maths is
#: :func:`attention_explorer.kernels.tables.inverse_frequencies`. ``dynamic``, ``yarn`` and
#: ``longrope`` (long-context checkpoints) need the model's ``max_position_embeddings``, which
#: an engine session does not have: they are read from checkpoints only.
SCALING_TYPES = ("default", "linear", "llama3", "dynamic", "yarn", "longrope")
#: The kinds that depend on the model's context length (``max_position_embeddings``).
LONG_CONTEXT_TYPES = ("dynamic", "yarn", "longrope")


@dataclass(frozen=True)
class RopeScaling:
    """How RoPE's inverse frequencies (and, for ``yarn`` and ``longrope``, the factor on cos
    and sin) are scaled, checked: ``kind`` is one of :data:`SCALING_TYPES`; ``factor``
    (linear, llama3, dynamic, yarn, longrope), ``low_freq_factor``, ``high_freq_factor``
    (llama3 only; Llama 3.1's values by default) and ``original_max_position_embeddings``
    (llama3, yarn, longrope: the pretraining context). The long-context kinds also carry the
    model's ``max_position_embeddings`` (dynamic: the length beyond which the base grows),
    ``attention_factor`` (yarn, longrope; None: derived as transformers does), yarn's
    ``beta_fast``, ``beta_slow``, ``mscale``, ``mscale_all_dim`` and ``truncate``, and
    longrope's per-frequency ``short_factor`` and ``long_factor``."""

    kind: str = "default"
    factor: float = 1.0
    low_freq_factor: float = 1.0
    high_freq_factor: float = 4.0
    original_max_position_embeddings: int = 8192
    max_position_embeddings: int | None = None
    attention_factor: float | None = None
    beta_fast: float = 32.0
    beta_slow: float = 1.0
    mscale: float | None = None
    mscale_all_dim: float | None = None
    truncate: bool = True
    short_factor: tuple[float, ...] = ()
    long_factor: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in SCALING_TYPES:
            raise AttentionInputError(
                "rope_scaling",
                f"rope scaling type {self.kind!r} is not supported; "
                f"supported: {', '.join(SCALING_TYPES)}",
            )
        if not (math.isfinite(self.factor) and self.factor > 0):
            raise AttentionInputError("rope_scaling", f"factor {self.factor} must be above 0")
        if self.kind in LONG_CONTEXT_TYPES:
            self._check_long_context()
        if self.kind != "llama3":
            return
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

    def _check_long_context(self) -> None:
        """dynamic, yarn and longrope: the model's context length, a positive original one,
        finite positive numbers, and longrope's two factor lists of one length."""
        if self.max_position_embeddings is None or self.max_position_embeddings < 1:
            raise AttentionInputError(
                "rope_scaling",
                f"a {self.kind} rope scaling needs the model's max_position_embeddings "
                "(it is read from a checkpoint's config.json)",
            )
        if self.original_max_position_embeddings < 1:
            raise AttentionInputError(
                "rope_scaling", "original_max_position_embeddings must be at least 1"
            )
        numbers = [("attention_factor", self.attention_factor), ("mscale", self.mscale)]
        numbers += [("mscale_all_dim", self.mscale_all_dim), ("beta_fast", self.beta_fast)]
        numbers += [("beta_slow", self.beta_slow)]
        numbers += [("short_factor", v) for v in self.short_factor]
        numbers += [("long_factor", v) for v in self.long_factor]
        for name, value in numbers:
            if value is not None and not (math.isfinite(value) and value > 0):
                raise AttentionInputError(
                    "rope_scaling", f"{name} {value} must be a finite number above 0"
                )
        if self.kind == "longrope" and (
            not self.short_factor or len(self.short_factor) != len(self.long_factor)
        ):
            raise AttentionInputError(
                "rope_scaling",
                "longrope needs short_factor and long_factor, two lists of one length "
                f"(found {len(self.short_factor)} and {len(self.long_factor)})",
            )


def inverse_frequencies(
    d_k: int,
    theta: float = DEFAULT_THETA,
    scaling: RopeScaling | None = None,
    seq_len: int | None = None,
):
    """RoPE's ``[d_k/2]`` inverse frequencies (float64) after checking the settings: an even
    ``d_k`` and a base above 1, else AttentionInputError naming the field. ``seq_len``: the
    text's length (the last position + 1), which ``dynamic`` and ``longrope`` depend on."""
    if d_k < 2 or d_k % 2:
        raise AttentionInputError("d_k", f"RoPE needs an even head width d_k, not {d_k}")
    if not (math.isfinite(theta) and theta > 1):
        raise AttentionInputError("rope_theta", f"rope_theta {theta} must be above 1")
    return tables.inverse_frequencies(d_k, theta, scaling or RopeScaling(), seq_len)  # [d_k/2]


#: The RopeScaling settings a session gives in ``rope_parameters`` (beside ``rope_scaling``,
#: the kind, and ``rope_factor``): llama3's, and the long-context kinds' (dynamic, yarn,
#: longrope; these need the model's ``max_position_embeddings``).
ROPE_PARAMETERS = (
    "low_freq_factor", "high_freq_factor", "original_max_position_embeddings",
    "max_position_embeddings", "attention_factor", "beta_fast", "beta_slow", "mscale",
    "mscale_all_dim", "truncate", "short_factor", "long_factor",
)  # fmt: skip
