"""The shape of a latent-attention layer, read from config.json: the ranks (``q_lora_rank``,
``kv_lora_rank``), the widths of each head's parts (``qk_nope_head_dim``, ``qk_rope_head_dim``,
``v_head_dim``), whether RoPE pairs neighbouring dimensions (``rope_interleave``) and the
score factor (``qk_head_dim ** -0.5``, times ``mscale(factor, mscale_all_dim)²`` under a rope
scaling that sets ``mscale_all_dim``, as transformers' ``yarn_apply_mscale``).

The family's config checks are here too (:func:`check_latent_config`): every key that changes
the numbers is implemented or refused by name.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from attention_explorer.pretrained.layer_plan import positive
from attention_explorer.pretrained.model_errors import ModelError

#: The epsilon of the two latent norms (``q_a_layernorm``, ``kv_a_layernorm``): transformers
#: builds them as ``DeepseekV3RMSNorm(rank)``, whose default is 1e-6, whatever
#: ``rms_norm_eps`` says (that one is the hidden-state norms').
LATENT_EPS = 1e-6

#: q_lora_rank when config.json leaves it out (``DeepseekV3Config``'s default); null: no rank.
Q_LORA_DEFAULT = 1536


@dataclass(frozen=True)
class LatentPlan:
    """One model's latent attention: ``q_lora`` (None: q is one projection), ``kv_lora``,
    each head's ``nope`` + ``rope`` query/key widths and ``v_dim`` value width, and whether
    RoPE is ``interleave``d (pairs (0, 1), (2, 3)… rather than (i, i + rope/2))."""

    q_lora: int | None
    kv_lora: int
    nope: int
    rope: int
    v_dim: int
    interleave: bool = True
    eps: float = LATENT_EPS

    @property
    def qk_dim(self) -> int:
        """Each head's query and key width: ``nope + rope``."""
        return self.nope + self.rope

    def cache_width(self) -> int:
        """Numbers cached per token and layer: the latent and the rotary key."""
        return self.kv_lora + self.rope


def latent_plan(arch, config: Mapping, sizes: Mapping) -> LatentPlan | None:
    """The :class:`LatentPlan` of a record with ``latent`` attention (None otherwise), from
    the checked ``sizes`` (roles ``kv_lora``, ``nope_dim``, ``rope_dim``, ``v_dim``)."""
    if not getattr(arch, "latent", False):
        return None
    q_lora = positive(config, "q_lora_rank", integer=True, default=Q_LORA_DEFAULT)
    return LatentPlan(
        q_lora=q_lora,
        kv_lora=sizes["kv_lora"],
        nope=sizes["nope_dim"],
        rope=sizes["rope_dim"],
        v_dim=sizes["v_dim"],
        interleave=bool(config.get("rope_interleave", True)),
    )


def _mscale(scale: float, m: float) -> float:
    """YaRN's ``0.1 m ln(scale) + 1`` (1 for a scale of 1 or less)."""
    return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0


def rope_dict(config: Mapping) -> Mapping:
    """The rope settings transformers reads: ``rope_scaling`` (config.json's older key),
    else ``rope_parameters``, else none."""
    for key in ("rope_scaling", "rope_parameters"):
        if isinstance(config.get(key), Mapping):
            return config[key]
    return {}


def latent_scale(config: Mapping, layer: int, d_k: int) -> float:
    """The score factor: ``1 / sqrt(d_k)`` (``d_k`` = nope + rope), times
    ``mscale(factor, mscale_all_dim)²`` when a rope type other than the default sets
    ``mscale_all_dim`` (transformers' ``yarn_apply_mscale``)."""
    factor = 1.0 / math.sqrt(d_k)
    rope = rope_dict(config)
    kind = rope.get("rope_type", rope.get("type", "default"))
    if kind != "default" and rope.get("mscale_all_dim"):
        m = _mscale(float(rope["factor"]), float(rope["mscale_all_dim"]))
        factor = factor * m * m
    return factor


def check_latent_config(config: Mapping) -> None:
    """The DeepSeek-V3 checks a tuple of accepted values cannot state: every head has its own
    key and value (``num_key_value_heads`` equal to ``num_attention_heads``: transformers'
    block repeats nothing), a positive ``q_lora_rank`` or null, an even ``qk_rope_head_dim``
    and a rope scaling with ``mscale_all_dim`` that names its factor."""
    heads = config.get("num_attention_heads")
    kv = config.get("num_key_value_heads")
    if kv is not None and kv != heads:
        raise ModelError(
            "config",
            f"config.json sets num_key_value_heads {kv!r} and num_attention_heads {heads!r}: "
            "latent attention makes a key and a value for every head, so they must be equal",
        )
    positive(config, "q_lora_rank", integer=True, default=Q_LORA_DEFAULT)
    rope = config.get("qk_rope_head_dim", 64)
    if isinstance(rope, int) and not isinstance(rope, bool) and rope % 2:
        raise ModelError(
            "config",
            f"config.json sets qk_rope_head_dim {rope}: RoPE turns pairs of dimensions, so it "
            "must be even",
        )
    for key in ("rope_scaling", "rope_parameters"):
        rope = config.get(key)
        if isinstance(rope, Mapping) and rope.get("mscale_all_dim") and rope.get("factor") is None:
            raise ModelError(
                "config",
                f"config.json {key} sets mscale_all_dim without a factor, which the score "
                "scale of latent attention needs",
            )
