"""The maps and sentences of the latent-stages window, from a
:class:`~attention_explorer.pretrained.latent.view.LatentView` (the numbers come from
``pretrained/latent/``; nothing here computes attention).

Five frames, each from the display model (:func:`~attention_explorer.display.arrays.
frame_for_array`, signed scale around 0): the latent ``c_kv`` and the shared rotary key
``k_pe`` (what the cache stores per token), then for one head the up-projected ``k_nope`` and
``v`` and the key the scores read, ``K = [k_nope ; k_pe]`` (the window draws k_nope as K's
first columns rather than twice). Columns are named so the assembly reads off the axis:
``c0..`` latent, ``n0..`` the no-rotary part, ``r0..`` the rotary part, ``v0..`` value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_explorer.display import DisplayFrame
from attention_explorer.display.arrays import frame_for_array
from attention_explorer.generation.cache_size import CacheSize

#: Decimals written in the cells (where they fit).
DECIMALS = 2
#: The maps the window draws, in its order: (key, row axis, column axis). ``k_nope`` is
#: drawn as the first columns (n0..) of ``key``, beside the shared ``k_pe`` (r0..).
MAPS = (
    ("c_kv", "token", "latent dimension"),
    ("k_pe", "token", "rotary dimension"),
    ("key", "token", "k_nope (n…) from c_kv ; k_pe (r…) shared"),
    ("value", "token", "value dimension"),
)


def _names(prefix: str, count: int) -> list[str]:
    return [f"{prefix}{i}" for i in range(count)]


@dataclass(frozen=True)
class LatentFrames:
    """The five frames of one head (``head``) of a view, by :data:`MAPS` key."""

    head: int
    frames: dict[str, DisplayFrame]


def latent_frames(view, head: int) -> LatentFrames:
    """The frames of ``view`` (a LatentView) for ``head``: the cached ``c_kv [n, kv_lora]``
    and ``k_pe [n, rope]``, and head ``head``'s ``k_nope [n, nope]``, ``value [n, v_dim]``
    and ``key [n, nope + rope]``. ValueError for a head out of range."""
    heads = view.k_nope.shape[0]
    if not 0 <= head < heads:
        raise ValueError(f"head {head} is out of range: the layer has heads 0..{heads - 1}")
    rows = list(view.tokens)
    nope, rope = view.k_nope.shape[2], view.k_pe.shape[1]
    key = view.key[head]  # [n, nope + rope]
    arrays = {
        "c_kv": (view.c_kv, "c", "c_kv: each token's latent, what the cache stores"),
        "k_pe": (view.k_pe, "r", "k_pe: the rotary key (after RoPE), one for all heads, cached"),
        "k_nope": (view.k_nope[head], "n", f"k_nope, head {head}: kv_b up-projects c_kv"),
        "value": (view.value[head], "v", f"V, head {head}: kv_b up-projects c_kv"),
    }
    frames = {
        name: frame_for_array(
            np.asarray(values, dtype=np.float64),  # [n, width]
            "signed",
            title,
            rows,
            _names(prefix, values.shape[1]),
            decimals=DECIMALS,
        )
        for name, (values, prefix, title) in arrays.items()
    }
    frames["key"] = frame_for_array(
        np.asarray(key, dtype=np.float64),  # [n, nope + rope]
        "signed",
        f"K, head {head} = [k_nope ; k_pe]: what the scores read",
        rows,
        _names("n", nope) + _names("r", rope),
        decimals=DECIMALS,
    )
    return LatentFrames(head, frames)


def shapes_text(view) -> str:
    """One sentence naming the layer's widths: the latent, the rotary key, the per-head parts."""
    n, kv_lora = view.c_kv.shape
    heads, _, nope = view.k_nope.shape
    rope, v_dim = view.k_pe.shape[1], view.value.shape[2]
    return (
        f"Layer {view.layer}, {n} tokens: the cache keeps c_kv ({kv_lora} numbers) and k_pe "
        f"({rope}) per token; each of the {heads} heads up-projects c_kv to its k_nope "
        f"({nope}) and V ({v_dim}) and reads K = [k_nope ; k_pe] ({nope + rope})."
    )


def bytes_text(size: CacheSize) -> str:
    """The plain sentence of the cache's bytes per token: the latent against full multi-head
    attention of the same width (``size`` from ``cache_size(model, dtype)``)."""
    own, mha, shape = size.own, size.mha, size.shape
    times = mha.per_layer / own.per_layer
    return (
        f"Cache per token in {size.dtype}: latent attention stores {own.numbers} numbers "
        f"({shape.kv_lora_rank} latent + {shape.qk_rope_head_dim} rotary key) = "
        f"{own.per_layer:,} bytes per layer, {own.all_layers:,} bytes in all {shape.layers} "
        f"layers; full multi-head attention would store {mha.numbers} numbers (a key and a "
        f"value for each of {shape.heads} heads) = {mha.per_layer:,} bytes per layer, "
        f"{mha.all_layers:,} in all: {times:.1f}x as much."
    )
