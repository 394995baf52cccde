"""How many bytes a model's KV cache costs per token, and what the same model would cost
under other attention designs of the same width.

A cached token costs, in each layer:

- under the model's own attention: ``kv_heads × (head_dim + v_head_dim)`` numbers (a key
  and a value for every key/value head; grouped-query attention shares them between the
  query heads of a group);
- under multi-head latent attention (DeepSeek-V2/V3, Kimi K2): ``kv_lora_rank +
  qk_rope_head_dim`` numbers (the compressed latent ``c_kv`` and the one rotary key shared
  by every head; K and V are rebuilt from the latent by up-projections at each step);
- under full multi-head attention of the same width: ``heads × (head_dim + v_head_dim)``
  (every query head its own key and value; for a latent model ``head_dim`` is its full key
  width ``qk_nope_head_dim + qk_rope_head_dim``);
- under grouped-query attention with ``g`` groups: ``g × (head_dim + v_head_dim)`` (``g``
  key/value heads; ``g = 1`` is multi-query attention).

times the bytes of one number of the dtype. :class:`CacheShape` holds the sizes, from a
loaded model (:meth:`CacheShape.of_model`) or from plain numbers (a published shape, no
weights needed); :func:`bytes_per_token` gives the bytes per layer and for all layers, and
:func:`held_bytes` the bytes a cache of ``positions`` tokens holds (a sliding layer keeps at
most ``window - 1`` of them, as :func:`~attention_explorer.generation.loop.generate`'s
cache does).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .errors import GenerationError

#: Bytes of one number of each dtype a cache may be held in (numpy's names, and the
#: half-precision ones numpy lacks).
DTYPE_BYTES: Mapping[str, int] = {
    "float64": 8,
    "float32": 4,
    "float16": 2,
    "bfloat16": 2,
    "float8": 1,
}

#: The attention designs :func:`bytes_per_token` prices: the model's own, full multi-head,
#: grouped-query (with ``groups``) and multi-head latent attention.
ATTENTIONS = ("own", "mha", "gqa", "mla")


@dataclass(frozen=True)
class CacheShape:
    """The sizes that set a KV cache's bytes: ``layers``, query ``heads``, ``kv_heads``,
    the key width per head ``head_dim`` and the value width ``v_head_dim``; for multi-head
    latent attention also ``kv_lora_rank`` (the latent's width) and ``qk_rope_head_dim``
    (the shared rotary key's width; ``head_dim`` is then ``qk_nope_head_dim +
    qk_rope_head_dim``). ``windows``: each layer's sliding window (None: no window), or
    empty when no layer has one."""

    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    v_head_dim: int
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    windows: tuple = ()

    def __post_init__(self):
        for name in ("layers", "heads", "kv_heads", "head_dim", "v_head_dim"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise GenerationError("cache", f"cache {name} must be a whole number >= 1")
        if self.heads % self.kv_heads:
            raise GenerationError(
                "cache", f"{self.heads} heads do not divide into {self.kv_heads} kv heads"
            )
        if (self.kv_lora_rank is None) != (self.qk_rope_head_dim is None):
            raise GenerationError(
                "cache", "latent attention needs both kv_lora_rank and qk_rope_head_dim"
            )
        if self.windows and len(self.windows) != self.layers:
            raise GenerationError(
                "cache", f"{len(self.windows)} layer windows for {self.layers} layers"
            )

    @property
    def latent(self) -> bool:
        """True for multi-head latent attention (the model caches a latent per token)."""
        return self.kv_lora_rank is not None

    @property
    def design(self) -> str:
        """The model's own attention, by what its cache holds: ``"mla"`` (a latent),
        ``"mha"`` (a key and value per head), ``"mqa"`` (one for all heads) or ``"gqa"``."""
        if self.latent:
            return "mla"
        if self.kv_heads == self.heads:
            return "mha"
        return "mqa" if self.kv_heads == 1 else "gqa"

    @classmethod
    def deepseek(cls, config: Mapping) -> CacheShape:
        """The shape of a DeepSeek-V2/V3-style config (transformers' key names:
        num_hidden_layers, num_attention_heads, qk_nope_head_dim, qk_rope_head_dim,
        v_head_dim, kv_lora_rank): a published shape, no weights needed."""
        keys = ("num_hidden_layers", "num_attention_heads", "qk_nope_head_dim")
        keys += ("qk_rope_head_dim", "v_head_dim", "kv_lora_rank")
        missing = [k for k in keys if config.get(k) is None]
        if missing:
            raise GenerationError("cache", f"a latent shape needs {', '.join(missing)}")
        nope, rope = int(config["qk_nope_head_dim"]), int(config["qk_rope_head_dim"])
        heads = int(config["num_attention_heads"])
        return cls(
            layers=int(config["num_hidden_layers"]),
            heads=heads,
            kv_heads=heads,  # once decompressed, every head has its own K and V
            head_dim=nope + rope,
            v_head_dim=int(config["v_head_dim"]),
            kv_lora_rank=int(config["kv_lora_rank"]),
            qk_rope_head_dim=rope,
        )

    @classmethod
    def of_model(cls, model) -> CacheShape:
        """The shape of a loaded model (a ``LoadedModel`` or its ``ModelWeights``), from the
        sizes the model run reads (a latent model's from its latent plan, so keys config.json
        leaves to their defaults count too)."""
        from .step import widths  # lazily: pricing a published shape needs no model code

        w = getattr(model, "weights", model)  # LoadedModel -> ModelWeights
        windows = tuple(w.window_of(i) for i in range(w.n_layers))
        windows = windows if any(x is not None for x in windows) else ()
        key, value = widths(w)  # the widths the decode step caches
        plan = w.latent  # the plan the model run reads (config.json's keys or their defaults)
        return cls(
            w.n_layers,
            w.heads,
            w.kv_heads,
            int(key),
            int(value),
            kv_lora_rank=None if plan is None else int(plan.kv_lora),
            qk_rope_head_dim=None if plan is None else int(plan.rope),
            windows=windows,
        )


def _dtype_name(dtype) -> str:
    """``dtype`` (a name, a numpy or torch dtype) as a name: ``"float32"``."""
    name = str(getattr(dtype, "name", dtype))
    return name[len("torch.") :] if name.startswith("torch.") else name


def dtype_bytes(dtype) -> int:
    """Bytes of one number of ``dtype`` (a name of :data:`DTYPE_BYTES`, a numpy or torch
    dtype; every float8 kind is 1 byte)."""
    name = _dtype_name(dtype)
    if name.startswith("float8"):
        name = "float8"
    if name not in DTYPE_BYTES:
        raise GenerationError(
            "dtype", f"cache dtype {name!r} is not one of {', '.join(DTYPE_BYTES)}"
        )
    return DTYPE_BYTES[name]


def numbers_per_token(shape: CacheShape, attention: str = "own", groups: int | None = None) -> int:
    """How many numbers one token's cache holds in one layer under ``attention`` (see the
    module docstring): ``"own"`` the model's, ``"mha"`` full multi-head, ``"gqa"``
    grouped-query with ``groups`` key/value heads, ``"mla"`` latent (a latent model's)."""
    pair = shape.head_dim + shape.v_head_dim  # a key and a value of one head
    if attention == "own":
        attention = "mla" if shape.latent else "gqa"
        groups = shape.kv_heads
    if attention == "mha":
        return shape.heads * pair
    if attention == "gqa":
        if isinstance(groups, bool) or not isinstance(groups, (int, np.integer)) or groups < 1:
            raise GenerationError("cache", f"grouped-query groups must be >= 1, not {groups!r}")
        if shape.heads % groups:
            raise GenerationError(
                "cache", f"{shape.heads} heads do not divide into {groups} groups"
            )
        return int(groups) * pair
    if attention == "mla":
        if not shape.latent:
            raise GenerationError("cache", "this shape has no latent (kv_lora_rank) to price")
        return int(shape.kv_lora_rank + shape.qk_rope_head_dim)
    raise GenerationError("cache", f"attention {attention!r} is not one of {', '.join(ATTENTIONS)}")


@dataclass(frozen=True)
class TokenBytes:
    """One token's cache in ``dtype`` under ``attention``: ``numbers`` per layer,
    ``per_layer`` bytes and ``all_layers`` bytes (every layer of the model)."""

    attention: str
    groups: int | None
    dtype: str
    numbers: int
    per_layer: int
    all_layers: int


def bytes_per_token(
    shape: CacheShape, dtype="float32", attention: str = "own", groups: int | None = None
) -> TokenBytes:
    """The bytes one token costs in the cache of ``shape`` in ``dtype`` under ``attention``
    (``"own"``, ``"mha"``, ``"gqa"`` with ``groups``, ``"mla"``): per layer and in all
    layers."""
    numbers = numbers_per_token(shape, attention, groups)
    per_layer = numbers * dtype_bytes(dtype)
    name = _dtype_name(dtype)
    return TokenBytes(attention, groups, name, numbers, per_layer, per_layer * shape.layers)


def held_positions(shape: CacheShape, positions: int) -> list[int]:
    """``[layers]`` how many of ``positions`` fed tokens each layer's cache holds when the
    next query comes: all of them, or a sliding layer's last ``window - 1`` (the next query
    reads its own key and the ``window - 1`` before it)."""
    if isinstance(positions, bool) or not isinstance(positions, (int, np.integer)) or positions < 0:
        raise GenerationError("cache", f"positions must be a whole number >= 0, not {positions!r}")
    windows = shape.windows or (None,) * shape.layers
    return [positions if w is None else min(positions, w - 1) for w in windows]


def held_bytes(
    shape: CacheShape,
    positions: int,
    dtype="float32",
    attention: str = "own",
    groups: int | None = None,
) -> int:
    """The bytes every layer's cache holds after ``positions`` tokens were fed (sliding
    layers hold fewer: :func:`held_positions`), under ``attention`` in ``dtype``."""
    per_layer = bytes_per_token(shape, dtype, attention, groups).per_layer
    return per_layer * sum(held_positions(shape, positions))


@dataclass(frozen=True)
class CacheSize:
    """One model's cache prices in one dtype: :attr:`own` (its own attention), :attr:`mha`
    (full multi-head attention of the same width), :meth:`gqa` (grouped-query with ``g``
    groups), :attr:`mla` (a latent model's latent, else None) and :meth:`held` (the bytes
    after ``positions`` tokens)."""

    shape: CacheShape
    dtype: str

    @property
    def own(self) -> TokenBytes:
        """One token under the model's own attention."""
        return bytes_per_token(self.shape, self.dtype)

    @property
    def mha(self) -> TokenBytes:
        """One token under full multi-head attention of the same width."""
        return bytes_per_token(self.shape, self.dtype, "mha")

    def gqa(self, groups: int) -> TokenBytes:
        """One token under grouped-query attention with ``groups`` key/value heads."""
        return bytes_per_token(self.shape, self.dtype, "gqa", groups)

    @property
    def mla(self) -> TokenBytes | None:
        """One token's latent and rotary key (a latent model), else None."""
        return bytes_per_token(self.shape, self.dtype, "mla") if self.shape.latent else None

    def held(self, positions: int, attention: str = "own", groups: int | None = None) -> int:
        """The bytes every layer holds after ``positions`` tokens (:func:`held_bytes`)."""
        return held_bytes(self.shape, positions, self.dtype, attention, groups)


def cache_size(model, dtype="float32") -> CacheSize:
    """The cache prices of ``model`` in ``dtype``: ``model`` a folder or id, a
    ``LoadedModel``/``ModelWeights``, a :class:`CacheShape`, or a DeepSeek-style config
    mapping (a published shape, no weights needed)."""
    if isinstance(model, CacheShape):
        shape = model
    elif isinstance(model, Mapping):
        shape = CacheShape.deepseek(model)
    else:
        if not hasattr(model, "weights") and not hasattr(model, "n_layers"):
            from attention_explorer.pretrained.open_model import load_model

            model = load_model(model)
        shape = CacheShape.of_model(model)
    dtype_bytes(dtype)  # refused here, by name, rather than at the first price
    return CacheSize(shape, _dtype_name(dtype))
