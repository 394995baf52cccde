"""AttentionConfig: every setting of one attention computation, validated in one place."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from types import MappingProxyType
from typing import Literal, get_args

from attention_explorer.engine.engine_errors import AttentionInputError
from attention_explorer.engine.variants.setting_checks import (
    check_choice,
    check_positive_finite,
    check_positive_int,
    check_rope,
    check_variants,
)

# The option lists, declared once: the session format (session/schema.py), the controls and
# the walkthrough read these aliases and :data:`OPTIONS`.
Mode = Literal["direct", "projection"]
MaskKind = Literal["none", "causal", "padding", "custom"]
ScaleRule = Literal["sqrt_dk", "none", "custom"]
Normalizer = Literal["softmax", "sparsemax", "sigmoid"]
Positional = Literal["none", "sinusoidal", "learned", "rope"]
AttentionKind = Literal["self", "cross"]
#: QK-norm: none; an RMSNorm with weights w ("rms", Qwen3, OLMo 2) or 1 + w ("rms_one_plus",
#: Gemma 3) on each head's q and k before RoPE.
QKNorm = Literal["none", "rms", "rms_one_plus"]
#: What one QK-norm normalises over: each head's d_k ("head": Qwen3, Gemma 3) or every head's
#: width together ("all": OLMo 2, weights [heads*d_k] and [kv_heads*d_k]).
QKNormWidth = Literal["head", "all"]


# RoPE's scaling record and frequencies live in variants/rope_scaling.py (re-exported).
from attention_explorer.engine.variants.rope_scaling import (  # noqa: E402, F401
    DEFAULT_THETA,
    LONG_CONTEXT_TYPES,
    ROPE_PARAMETERS,
    SCALING_TYPES,
    RopeScaling,
    inverse_frequencies,
)

#: The learner-facing label of every option of every choice setting, in menu order.
OPTIONS = MappingProxyType(
    {
        "mode": {"direct": "Type Q, K, V directly", "projection": "Project from embeddings X"},
        "mask": {
            "none": "None",
            "causal": "Causal (no peeking ahead)",
            "padding": "Padding (hide last keys)",
            "custom": "Custom (click the mask)",
        },
        "scale": {"sqrt_dk": "1/√d_k", "none": "None (raw scores)", "custom": "Custom factor"},
        "normalizer": {"softmax": "Softmax", "sparsemax": "Sparsemax", "sigmoid": "Sigmoid"},
        "positional": {
            "none": "None",
            "sinusoidal": "Sinusoidal",
            "learned": "Learned (seeded)",
            "rope": "Rotary (RoPE)",
        },
        "attention": {"self": "Self-attention", "cross": "Cross-attention"},
        "qk_norm": {
            "none": "None",
            "rms": "RMSNorm × w (Qwen3, OLMo 2)",
            "rms_one_plus": "RMSNorm × (1 + w) (Gemma 3)",
        },
        "qk_norm_width": {"head": "Each head's d_k", "all": "All heads together (OLMo 2)"},
    }
)
#: The Literal alias of each choice setting (a test checks OPTIONS labels each of its values).
CHOICES = MappingProxyType(
    {
        "mode": Mode,
        "mask": MaskKind,
        "scale": ScaleRule,
        "normalizer": Normalizer,
        "positional": Positional,
        "attention": AttentionKind,
        "qk_norm": QKNorm,
        "qk_norm_width": QKNormWidth,
    }
)

MODES: tuple[str, ...] = get_args(Mode)
MASKS: tuple[str, ...] = get_args(MaskKind)
SCALES: tuple[str, ...] = get_args(ScaleRule)
NORMALIZERS: tuple[str, ...] = get_args(Normalizer)
POSITIONALS: tuple[str, ...] = get_args(Positional)
ATTENTIONS: tuple[str, ...] = get_args(AttentionKind)
QK_NORMS: tuple[str, ...] = get_args(QKNorm)
QK_NORM_WIDTHS: tuple[str, ...] = get_args(QKNormWidth)


def option_label(setting: str, value: str) -> str:
    """The learner-facing label of ``value`` of a choice ``setting`` ("causal" -> "Causal …")."""
    return OPTIONS[setting].get(value, value)


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


@dataclass(frozen=True)
class AttentionConfig:
    """Settings of a (multi-head) attention computation.

    ``d_k`` and ``d_v`` default to ``d_model // heads``; ``kv_heads`` defaults to ``heads``
    (plain multi-head; fewer gives grouped-query attention, 1 gives multi-query).

    mask: ``none``; ``causal`` (query i sees keys j <= i); ``padding`` (keys listed in
    ``padded_keys`` are hidden from every query); ``custom`` (``custom_mask[i][j]`` True means
    query i may attend to key j).
    positional: ``sinusoidal`` and ``learned`` add a table P to X (projection mode only);
    ``rope`` rotates each head's q and k by position (``rope_theta``; ``rope_scaling``
    ``linear`` or ``llama3`` with ``rope_factor``), in both modes, and adds nothing to X.
    Positions are ``position_offset`` + 0 .. n-1 (RoPE and sinusoidal; keys likewise).
    ``rotary_fraction`` < 1 rotates only the first ``rotary_dims`` of each head's d_k
    (GPT-NeoX, Phi), rotate-half on that part; the rest pass through.
    qk_norm: ``rms`` or ``rms_one_plus`` RMS-normalise each head's q and k (``qk_norm_width``
    ``head``) or all heads' q and k together (``all``) with ``qk_norm_eps`` and the weights
    ``inputs.q_norm``/``inputs.k_norm`` (times w, or times 1 + w), after the projections and
    before RoPE.
    softcap: a number c caps the scaled scores at ±c, ``c · tanh(scaled / c)`` (Gemma 2),
    before the mask; None: off. window: with a number W, query i sees only keys j with
    i − j < W (a sliding-window layer, on top of the mask). attention_sinks: each head's
    sink logit ``inputs.sinks [heads]`` joins its softmax rows, which then sum to 1 − the
    sink's weight (gpt-oss; softmax only).
    scale: ``sqrt_dk`` multiplies scores by 1/sqrt(d_k); ``none`` by 1; ``custom`` by
    ``scale_factor``. The scaled stage is then divided by ``temperature``.
    """

    mode: Mode = "direct"
    heads: int = 1
    d_model: int = 4
    d_k: int | None = None
    d_v: int | None = None
    kv_heads: int | None = None
    mask: MaskKind = "none"
    padded_keys: tuple[int, ...] = ()
    custom_mask: tuple[tuple[bool, ...], ...] | None = None
    scale: ScaleRule = "sqrt_dk"
    scale_factor: float = 1.0
    temperature: float = 1.0
    normalizer: Normalizer = "softmax"
    positional: Positional = "none"
    positional_seed: int = 0
    rope_theta: float = 10000.0
    position_offset: int = 0
    attention: AttentionKind = "self"
    use_output_projection: bool = True
    rope_scaling: str = "default"
    rope_factor: float = 1.0
    qk_norm: QKNorm = "none"
    qk_norm_width: QKNormWidth = "head"
    qk_norm_eps: float = 1e-6
    softcap: float | None = None
    rotary_fraction: float = 1.0
    window: int | None = None
    attention_sinks: bool = False
    #: the rest of the RoPE scaling's settings, as sorted (name, value) pairs of
    #: :data:`ROPE_PARAMETERS` (llama3's factors, yarn's betas, longrope's lists ...)
    rope_parameters: tuple[tuple[str, object], ...] = ()

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

    @property
    def kv_group(self) -> int:
        """How many query heads share one key/value head: heads // kv_heads (1 = plain
        multi-head, heads = multi-query). At least 1 even before validation."""
        return max(1, self.heads // max(1, self.n_kv_heads))

    @property
    def grouped(self) -> bool:
        """True when query heads share key/value heads (grouped- or multi-query attention)."""
        return self.kv_group > 1

    def kv_head_of(self, head: int) -> int:
        """The key/value head that query head ``head`` reads K and V from."""
        return head // self.kv_group

    def summary(self, n_tokens: int) -> str:
        """The sizes and mask in words, from the settings as they are now: "4 tokens,
        2 heads, causal mask" (so no text keeps saying "two heads" after a change)."""
        heads = f"{self.heads} head{'s' if self.heads != 1 else ''}"
        if self.grouped:
            heads += (
                f" sharing {self.n_kv_heads} key/value head{'s' if self.n_kv_heads > 1 else ''}"
            )
        mask = "no mask" if self.mask == "none" else f"{self.mask} mask"
        return f"{n_tokens} token{'s' if n_tokens != 1 else ''}, {heads}, {mask}"

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
                elif f.name == "rope_parameters":
                    value = {k: list(v) if isinstance(v, tuple) else v for k, v in value}
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
        check_choice("mode", self.mode, MODES)
        self._validate_sizes()
        for setting in ("mask", "scale", "normalizer", "positional", "attention"):
            check_choice(setting, getattr(self, setting), tuple(OPTIONS[setting]))
        check_positive_finite("scale_factor", self.scale_factor, "")
        check_positive_finite("temperature", self.temperature, ", e.g. 1.0")
        self._validate_positional()
        check_variants(self, QK_NORMS, QK_NORM_WIDTHS)
        if self.mask == "custom" and self.custom_mask is None:
            raise AttentionInputError("custom_mask", "a custom mask needs a boolean matrix")
        if n_queries is not None and n_keys is not None:
            self._validate_mask_shape(n_queries, n_keys)
        return self

    def _validate_sizes(self) -> None:
        """Whole positive sizes; d_model splits into the heads; kv_heads divides heads."""
        for name in ("heads", "d_model"):
            check_positive_int(name, getattr(self, name))
        for name in ("d_k", "d_v", "kv_heads"):
            if getattr(self, name) is not None:
                check_positive_int(name, getattr(self, name))
        if self.mode == "projection" and self.d_k is None and self.d_model % self.heads:
            h, dm = self.heads, self.d_model
            options = ", ".join(str(d) for d in divisors_near(dm, h))
            lower, upper = max(h, dm - dm % h), dm - dm % h + h
            raise AttentionInputError(
                "heads",
                f"d_model {dm} is not divisible by {h} heads; try {options} heads, or "
                f"d_model {lower} or {upper}, or give d_k in the session file",
            )
        if self.heads % self.n_kv_heads:
            options = ", ".join(str(d) for d in divisors_near(self.heads, self.n_kv_heads))
            raise AttentionInputError(
                "kv_heads",
                f"{self.heads} query heads cannot be shared evenly by {self.n_kv_heads} "
                f"key/value heads; try {options}",
            )

    @property
    def rotary(self) -> bool:
        """True when q and k are rotated by position (RoPE)."""
        return self.positional == "rope"

    @property
    def added_positions(self) -> bool:
        """True when a position table P is added to X (sinusoidal or learned)."""
        return self.mode == "projection" and self.positional in ("sinusoidal", "learned")

    def _validate_positional(self) -> None:
        if isinstance(self.position_offset, bool) or not isinstance(self.position_offset, int):
            raise AttentionInputError(
                "position_offset", f"{self.position_offset!r} must be a whole number"
            )
        if not 0 <= self.position_offset <= 10**7:
            raise AttentionInputError(
                "position_offset", f"{self.position_offset} must be between 0 and 10000000"
            )
        if self.rotary:
            check_rope(self)
            return
        if self.mode == "direct" and self.positional != "none":
            raise AttentionInputError(
                "positional",
                "positional encodings are added to embeddings X, which direct mode does not "
                "have; choose 'none' or 'rope', or switch to projection mode",
            )
        if self.mode == "projection" and self.positional == "sinusoidal" and self.d_model % 2:
            raise AttentionInputError(
                "positional", f"sinusoidal encoding needs an even d_model, got {self.d_model}"
            )

    @property
    def rotary_dims(self) -> int:
        """How many of each head's d_k dimensions RoPE turns: the first
        ``int(d_k × rotary_fraction)`` (all of them by default), as transformers counts them."""
        return int(self.head_dim * self.rotary_fraction)

    @property
    def qk_normed(self) -> bool:
        """True when each head's q and k are RMS-normalised before RoPE (QK-norm)."""
        return self.qk_norm != "none"

    def qk_norm_shape(self, which: str) -> tuple[int]:
        """The shape of ``inputs.q_norm`` (``which`` "q") or ``inputs.k_norm`` ("k"): [d_k]
        per head, [heads*d_k] or [kv_heads*d_k] over all heads."""
        if self.qk_norm_width == "head":
            return (self.head_dim,)
        return ((self.heads if which == "q" else self.n_kv_heads) * self.head_dim,)

    def rope_scaling_record(self) -> RopeScaling:
        """The :class:`RopeScaling` of ``rope_scaling``, ``rope_factor`` and
        ``rope_parameters``."""
        check_positive_finite("rope_factor", self.rope_factor, ", e.g. 8")
        extra = dict(self.rope_parameters)
        unknown = sorted(set(extra) - set(ROPE_PARAMETERS))
        if unknown:
            raise AttentionInputError(
                "rope_parameters",
                f"{unknown[0]!r} is not a RoPE setting; choose from {', '.join(ROPE_PARAMETERS)}",
            )
        return RopeScaling(kind=self.rope_scaling, factor=float(self.rope_factor), **extra)

    def rope_length(self, n_queries: int, n_keys: int) -> int:
        """The text length RoPE's frequencies see (dynamic and longrope depend on it): the
        last position + 1."""
        return self.position_offset + max(n_queries, n_keys)

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
