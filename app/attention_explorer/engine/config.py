"""AttentionConfig: every setting of one attention computation, validated in one place."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace

from attention_explorer.engine.errors import AttentionInputError

MASKS = ("none", "causal", "padding", "custom")
SCALES = ("sqrt_dk", "none", "custom")
NORMALIZERS = ("softmax", "sparsemax", "sigmoid")
POSITIONALS = ("none", "sinusoidal", "learned")
ATTENTIONS = ("self", "cross")
MODES = ("direct", "projection")


def divisors(n: int) -> list[int]:
    """All positive divisors of ``n``, increasing: ``divisors(12) == [1, 2, 3, 4, 6, 12]``.

    Costs O(sqrt(n)) steps (pairs d, n // d), so a prime near 10**9 takes milliseconds.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        return []
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    large = [n // d for d in reversed(small) if d * d != n]
    return small + large


def divisors_near(n: int, near: int, count: int = 6) -> list[int]:
    """At most ``count`` divisors of ``n`` closest to ``near``, increasing (for suggestions)."""
    found = divisors(n) if n <= 10**12 else [1, n]  # isqrt(10**12) = 10**6 steps at most
    return sorted(sorted(found, key=lambda d: (abs(d - near), d))[:count])


def _choice(name: str, value: str, options: tuple[str, ...]) -> None:
    if value not in options:
        raise AttentionInputError(name, f"{value!r} is not one of {', '.join(options)}")


def _positive_int(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise AttentionInputError(name, f"{value!r} must be a whole number of at least 1")


@dataclass(frozen=True)
class AttentionConfig:
    """Settings of a (multi-head) attention computation.

    ``d_k`` and ``d_v`` default to ``d_model // heads``; ``kv_heads`` defaults to ``heads``
    (plain multi-head; fewer gives grouped-query attention, 1 gives multi-query).

    mask: ``none``; ``causal`` (query i sees keys j <= i); ``padding`` (keys listed in
    ``padded_keys`` are hidden from every query); ``custom`` (``custom_mask[i][j]`` True means
    query i may attend to key j).
    scale: ``sqrt_dk`` multiplies scores by 1/sqrt(d_k); ``none`` by 1; ``custom`` by
    ``scale_factor``. The scaled stage is then divided by ``temperature``.
    """

    mode: str = "direct"
    heads: int = 1
    d_model: int = 4
    d_k: int | None = None
    d_v: int | None = None
    kv_heads: int | None = None
    mask: str = "none"
    padded_keys: tuple[int, ...] = ()
    custom_mask: tuple[tuple[bool, ...], ...] | None = None
    scale: str = "sqrt_dk"
    scale_factor: float = 1.0
    temperature: float = 1.0
    normalizer: str = "softmax"
    positional: str = "none"
    positional_seed: int = 0
    attention: str = "self"
    use_output_projection: bool = True

    # -- derived sizes ---------------------------------------------------------------------
    @property
    def head_dim(self) -> int:
        """d_k, with the default d_model // heads filled in."""
        return self.d_k if self.d_k is not None else max(1, self.d_model // max(1, self.heads))

    @property
    def value_dim(self) -> int:
        """d_v, defaulting to d_k."""
        return self.d_v if self.d_v is not None else self.head_dim

    @property
    def n_kv_heads(self) -> int:
        """kv_heads, defaulting to heads."""
        return self.kv_heads if self.kv_heads is not None else self.heads

    def scale_value(self) -> float:
        """The factor the scores are multiplied by before the temperature divides them."""
        if self.scale == "sqrt_dk":
            return 1.0 / math.sqrt(self.head_dim)
        if self.scale == "none":
            return 1.0
        return float(self.scale_factor)

    def with_changes(self, **changes: object) -> AttentionConfig:
        """A copy with some fields replaced (the config itself is immutable)."""
        return replace(self, **changes)

    def to_dict(self) -> dict:
        """Plain-JSON form, leaving out fields at their default value."""
        out: dict = {}
        default = AttentionConfig()
        for f in fields(self):
            value = getattr(self, f.name)
            if value != getattr(default, f.name):
                if f.name == "padded_keys":
                    value = list(value)
                elif f.name == "custom_mask" and value is not None:
                    value = [list(row) for row in value]
                out[f.name] = value
        return out

    @classmethod
    def field_names(cls) -> list[str]:
        """Names of the settings a session file may give under ``config``."""
        return [f.name for f in fields(cls)]

    # -- validation ------------------------------------------------------------------------
    def validate(self, n_queries: int | None = None, n_keys: int | None = None) -> AttentionConfig:
        """Raise :class:`AttentionInputError` naming the first invalid field; return self.

        ``n_queries``/``n_keys`` (token counts) let the mask settings be checked too.
        """
        _choice("mode", self.mode, MODES)
        for name in ("heads", "d_model"):
            _positive_int(name, getattr(self, name))
        for name in ("d_k", "d_v", "kv_heads"):
            if getattr(self, name) is not None:
                _positive_int(name, getattr(self, name))
        if self.mode == "projection" and self.d_k is None and self.d_model % self.heads:
            options = ", ".join(str(d) for d in divisors_near(self.d_model, self.heads))
            raise AttentionInputError(
                "heads",
                f"d_model {self.d_model} is not divisible by {self.heads} heads; "
                f"try {options} heads, or give d_k in the session file (the window derives it)",
            )
        if self.heads % self.n_kv_heads:
            options = ", ".join(str(d) for d in divisors_near(self.heads, self.n_kv_heads))
            raise AttentionInputError(
                "kv_heads",
                f"{self.heads} query heads cannot be shared evenly by {self.n_kv_heads} "
                f"key/value heads; try {options}",
            )
        _choice("mask", self.mask, MASKS)
        _choice("scale", self.scale, SCALES)
        _choice("normalizer", self.normalizer, NORMALIZERS)
        _choice("positional", self.positional, POSITIONALS)
        _choice("attention", self.attention, ATTENTIONS)
        if not math.isfinite(self.scale_factor) or self.scale_factor <= 0:
            raise AttentionInputError(
                "scale_factor", f"{self.scale_factor!r} must be a positive finite number"
            )
        if not math.isfinite(self.temperature) or self.temperature <= 0:
            raise AttentionInputError(
                "temperature", f"{self.temperature!r} must be a positive finite number, e.g. 1.0"
            )
        if self.mode == "direct" and self.positional != "none":
            raise AttentionInputError(
                "positional",
                "positional encodings are added to embeddings X, which direct mode does not "
                "have; choose 'none' or switch to projection mode",
            )
        if self.mode == "projection" and self.positional == "sinusoidal" and self.d_model % 2:
            raise AttentionInputError(
                "positional", f"sinusoidal encoding needs an even d_model, got {self.d_model}"
            )
        if self.mask == "custom" and self.custom_mask is None:
            raise AttentionInputError("custom_mask", "a custom mask needs a boolean matrix")
        if n_queries is not None and n_keys is not None:
            self._validate_mask_shape(n_queries, n_keys)
        return self

    def _validate_mask_shape(self, n_queries: int, n_keys: int) -> None:
        if self.mask == "padding":
            for j in self.padded_keys:
                if isinstance(j, bool) or not isinstance(j, int) or not 0 <= j < n_keys:
                    raise AttentionInputError(
                        "padded_keys", f"{j!r} is not a key position 0..{n_keys - 1}"
                    )
        if self.mask == "custom":
            rows = self.custom_mask or ()
            if len(rows) != n_queries or any(len(r) != n_keys for r in rows):
                got = f"{len(rows)}x{len(rows[0]) if rows else 0}"
                raise AttentionInputError(
                    "custom_mask",
                    f"expected {n_queries}x{n_keys} (queries x keys), got {got}",
                )
