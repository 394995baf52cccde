"""What may differ from layer to layer, and the model-wide numbers beside it, read from a
config through the family's :class:`~attention_explorer.pretrained.architecture.Architecture`.

A family's ``layer_plan(config)`` gives one :class:`LayerKind` per layer: its sliding window
(Gemma 2/3's local layers, Qwen2's layers from ``max_window_layers``, SmolLM3's), whether it
encodes positions at all (SmolLM3's NoPE layers) and the config keys its RoPE reads (Gemma 3's
local layers: ``rope_local_base_freq``). Without a plan every layer is alike: the record's
``window_key`` and the model's RoPE. :func:`model_settings` turns the plan into what the
forward pass reads (each layer's window and inverse frequencies, the soft-caps, the
embedding multiplier), checking every value: a window, a cap or a multiplier that is not a
positive number is refused naming its key. No code here names a family.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from attention_explorer.pretrained.model_errors import ModelError

#: The layer types transformers' ``layer_types`` lists that this run implements.
LAYER_TYPES = ("full_attention", "sliding_attention")


@dataclass(frozen=True)
class LayerKind:
    """One layer's attention settings beyond the model's: its sliding window (query i sees
    key j when ``0 <= i - j < window``; None: every earlier key), whether RoPE rotates its q
    and k (False: a NoPE layer) and the config keys its RoPE reads instead of the model's
    (None: the model's)."""

    window: int | None = None
    rotary: bool = True
    rope: Mapping | None = field(default=None, compare=False)


@dataclass(frozen=True)
class ModelSettings:
    """The per-layer and model-wide numbers of :func:`model_settings`."""

    kinds: tuple[LayerKind, ...]  # [layers]
    ropes: tuple  # [layers] each layer's inverse frequencies [d_k/2], None where no RoPE
    rope: object  # the model's own RoPE (the first rotary layer's), None without
    rope_keys: Mapping | None  # the config keys that RoPE reads, None: the config's own
    window: int | None  # the window every layer shares, else None
    score_cap: float | None  # cap * tanh(scores / cap) before the mask
    logit_cap: float | None  # cap * tanh(logits / cap)
    embed_scale: float | None  # the embeddings' multiplier


def positive(config: Mapping, key: str, integer: bool = False, default=None) -> float | int | None:
    """``config[key]`` (``default`` when absent) as a positive number (an integer with
    ``integer``), None when null; a ModelError naming the key otherwise."""
    value = config.get(key, default)
    if value is None:
        return None
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if integer:
        number = number and float(value).is_integer()
    if not number or not math.isfinite(value) or value <= 0:
        kind = "a positive integer" if integer else "a positive number"
        raise ModelError("config", f"config.json sets {key} to {value!r}; expected {kind}")
    return int(value) if integer else float(value)


def layer_types(config: Mapping, n_layers: int, default: Callable[[int], str], family: str):
    """The ``layer_types`` list of ``config`` (or ``default(i)`` for each layer when absent,
    as the family's config class fills it), checked: one entry per layer, each of
    :data:`LAYER_TYPES`; a ModelError naming the key otherwise."""
    kinds = config.get("layer_types")
    if kinds is None:
        return tuple(default(i) for i in range(n_layers))
    if not isinstance(kinds, list) or len(kinds) != n_layers:
        raise ModelError(
            "config",
            f"config.json's layer_types must list one type for each of its {n_layers} layers",
        )
    other = sorted({str(k) for k in kinds} - set(LAYER_TYPES))
    if other:
        raise ModelError(
            "config",
            f"config.json sets layer_types with {', '.join(other)}, which {family} support here "
            f"does not implement (supported: {', '.join(LAYER_TYPES)})",
        )
    return tuple(str(k) for k in kinds)


def sliding_windows(kinds: Sequence[str], window: int | None, why: str) -> tuple:
    """Each layer's window: ``window`` for a ``sliding_attention`` layer, None for a full one;
    a ModelError when a layer slides and there is no window (``why`` says which key)."""
    if window is None and "sliding_attention" in kinds:
        layer = list(kinds).index("sliding_attention")
        raise ModelError(
            "config",
            f"config.json's layer_types makes layer {layer} sliding_attention, but {why}",
        )
    return tuple(window if kind == "sliding_attention" else None for kind in kinds)


def plan(arch, config: Mapping, n_layers: int) -> tuple[LayerKind, ...]:
    """The :class:`LayerKind` of each of the ``n_layers`` layers of ``config``."""
    if arch.layer_plan is not None:
        kinds = tuple(arch.layer_plan(config))
        if len(kinds) != n_layers:  # a family's plan reads num_hidden_layers itself
            raise ModelError("config", f"config.json describes {len(kinds)} of {n_layers} layers")
        return kinds
    window = positive(config, arch.window_key, integer=True) if arch.window_key else None
    return (LayerKind(window=window),) * n_layers


def _cap(arch, config: Mapping, key: str | None) -> float | None:
    """The soft cap config key ``key`` sets (the family's default when absent), or None."""
    return None if key is None else positive(config, key, default=arch.config_defaults.get(key))


def model_settings(
    arch, config: Mapping, n_layers: int, rope_of: Callable[[Mapping], object]
) -> ModelSettings:
    """Every layer's window and RoPE and the model-wide caps and multiplier, checked;
    ``rope_of(config)`` computes a RoPE from a config (and refuses what it does not
    implement). Layers reading the same keys share one RoPE."""
    kinds = plan(arch, config, n_layers)
    ropes: list = []
    made: dict[str, object] = {}
    for kind in kinds:
        if arch.positions != "rotary" or not kind.rotary:
            ropes.append(None)
            continue
        key = json.dumps(kind.rope, sort_keys=True, default=str)
        if key not in made:
            made[key] = rope_of(config if kind.rope is None else {**config, **kind.rope})
        ropes.append(made[key])
    windows = tuple(kind.window for kind in kinds)
    scale = None
    if arch.embed_scale is not None:
        scale = arch.embed_scale(config)
        if not (math.isfinite(scale) and scale > 0):
            raise ModelError("config", f"the embedding multiplier {scale!r} is not positive")
    return ModelSettings(
        kinds=kinds,
        ropes=tuple(ropes),
        rope=next((r for r in ropes if r is not None), None),
        rope_keys=next((k.rope for k, r in zip(kinds, ropes) if r is not None), None),
        window=windows[0] if windows and len(set(windows)) == 1 else None,
        score_cap=_cap(arch, config, arch.score_cap_key),
        logit_cap=_cap(arch, config, arch.logit_cap_key),
        embed_scale=scale,
    )
