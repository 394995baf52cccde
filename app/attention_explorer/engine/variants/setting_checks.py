"""The checks of one AttentionConfig's variant settings (QK-norm, the soft cap, the rotary
fraction, the window, attention sinks and RoPE), and the field checkers the config shares.

Each check raises :class:`AttentionInputError` naming the first field that is wrong; the
config (``engine/config.py``) calls them from ``AttentionConfig.validate``.
"""

from __future__ import annotations

import math

from attention_explorer.engine.engine_errors import AttentionInputError


def check_choice(name: str, value: str, options: tuple[str, ...]) -> None:
    """Refuse ``value`` of setting ``name`` unless it is one of ``options``."""
    if value not in options:
        raise AttentionInputError(name, f"{value!r} is not one of {', '.join(options)}")


def check_positive_finite(name: str, value: float, hint: str) -> None:
    """Refuse ``value`` of ``name`` unless it is a positive finite number (``hint`` ends the
    message, e.g. ", e.g. 1.0")."""
    if not math.isfinite(value) or value <= 0:
        raise AttentionInputError(name, f"{value!r} must be a positive finite number{hint}")


def check_positive_int(name: str, value: object) -> None:
    """Refuse ``value`` of ``name`` unless it is a whole number of at least 1 (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise AttentionInputError(name, f"{value!r} must be a whole number of at least 1")


def check_variants(config, qk_norms: tuple[str, ...], qk_norm_widths: tuple[str, ...]) -> None:
    """QK-norm's choices (among ``qk_norms`` and ``qk_norm_widths``) and epsilon, the soft
    cap, the rotary fraction, the window and the attention sinks of ``config``."""
    check_choice("qk_norm", config.qk_norm, qk_norms)
    check_choice("qk_norm_width", config.qk_norm_width, qk_norm_widths)
    eps = config.qk_norm_eps
    if isinstance(eps, bool) or not isinstance(eps, (int, float)):
        raise AttentionInputError("qk_norm_eps", f"{eps!r} must be a number, e.g. 1e-6")
    check_positive_finite("qk_norm_eps", eps, ", e.g. 1e-6")
    cap = config.softcap
    if cap is not None:
        if isinstance(cap, bool) or not isinstance(cap, (int, float)):
            raise AttentionInputError("softcap", f"{cap!r} must be a number, e.g. 50, or off")
        check_positive_finite("softcap", cap, ", e.g. 50 (or off)")
    fraction = config.rotary_fraction
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)):
        raise AttentionInputError("rotary_fraction", f"{fraction!r} must be a number")
    if not (math.isfinite(fraction) and 0 < fraction <= 1):
        raise AttentionInputError(
            "rotary_fraction", f"{fraction!r} must be above 0 and at most 1, e.g. 0.25"
        )
    if config.window is not None:
        check_positive_int("window", config.window)
    if not isinstance(config.attention_sinks, bool):
        raise AttentionInputError(
            "attention_sinks", f"{config.attention_sinks!r} must be true or false"
        )
    if config.attention_sinks and config.normalizer != "softmax":
        raise AttentionInputError(
            "attention_sinks",
            f"a sink logit joins a softmax's denominator; {config.normalizer} has none "
            "(choose softmax, or turn the sinks off)",
        )


def check_rope(config) -> None:
    """RoPE turns pairs of dimensions: an even d_k (an even number of turned dimensions, at
    least 2, under a rotary fraction), a base above 1, a known scaling."""
    if config.rotary_fraction == 1 and config.head_dim % 2:
        raise AttentionInputError(
            "d_k", f"RoPE turns pairs of dimensions, so d_k must be even, not {config.head_dim}"
        )
    dims = config.rotary_dims
    if config.rotary_fraction != 1 and (dims < 2 or dims % 2):
        raise AttentionInputError(
            "rotary_fraction",
            f"rotary fraction {config.rotary_fraction:g} of d_k {config.head_dim} turns {dims} "
            "dimensions; RoPE turns pairs, so it must be an even number of at least 2",
        )
    theta = config.rope_theta
    if isinstance(theta, bool) or not isinstance(theta, (int, float)):
        raise AttentionInputError("rope_theta", f"{theta!r} must be a number, e.g. 10000")
    if not (math.isfinite(theta) and theta > 1):
        raise AttentionInputError(
            "rope_theta", f"{theta!r} must be a finite number above 1, e.g. 10000"
        )
    config.rope_scaling_record()  # raises, naming the supported scaling types
