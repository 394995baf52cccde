"""The cache's bytes in words: one token's cost under the model's attention and under full
multi-head attention of the same width, and what the cache holds now (read off the arrays the
generation holds, so the words agree with them). Prices come from
:mod:`attention_explorer.generation.cache_size`; nothing here computes attention."""

from __future__ import annotations

from dataclasses import dataclass

from attention_explorer.generation.cache_size import cache_size


@dataclass(frozen=True)
class CacheBytes:
    """The numbers the cache view states: ``per_token`` (one token, every layer, the model's
    attention) and ``per_token_mha`` (full multi-head attention), ``held_positions`` per
    layer, ``held`` (the bytes of the arrays held) and ``held_mha`` (the same positions under
    full multi-head attention); the shape words ``layers``, ``heads``, ``kv_heads``,
    ``numbers`` (per token and layer: kv heads × (d_k + d_v)), ``itemsize`` and ``dtype``;
    ``latent``: (kv_lora_rank, qk_rope_head_dim) for multi-head latent attention, whose
    cache holds one latent and one rotary key per token and layer, else None."""

    per_token: int
    per_token_mha: int
    held_positions: tuple[int, ...]
    held: int
    held_mha: int
    layers: int
    heads: int
    kv_heads: int
    numbers: int
    itemsize: int
    dtype: str
    latent: tuple[int, int] | None = None


def cache_bytes(model, gen) -> CacheBytes:
    """The bytes of ``gen``'s cache (``model``: the loaded model it was made with)."""
    size = cache_size(model, gen.dtype)
    own, mha = size.own, size.mha
    positions = tuple(len(layer.positions) for layer in gen.cache)
    return CacheBytes(
        per_token=own.all_layers,
        per_token_mha=mha.all_layers,
        held_positions=positions,
        held=gen.cache_bytes,  # the arrays themselves
        held_mha=mha.per_layer * sum(positions),
        layers=size.shape.layers,
        heads=size.shape.heads,
        kv_heads=size.shape.kv_heads,
        numbers=own.numbers,
        itemsize=own.per_layer // max(1, own.numbers),
        dtype=gen.dtype,
        latent=(
            (size.shape.kv_lora_rank, size.shape.qk_rope_head_dim)
            if size.shape.kv_lora_rank is not None
            else None
        ),
    )


def size_text(n: int) -> str:
    """``n`` bytes for a reader: "1,024 B", "12.5 KiB", "3.2 MiB"."""
    if n < 10_000:
        return f"{n:,} B"
    if n < 10 * 2**20:
        return f"{n / 2**10:,.1f} KiB"
    return f"{n / 2**20:,.1f} MiB"


def bytes_text(b: CacheBytes, last_step: int) -> str:
    """Two sentences: one token's price (and under full multi-head attention), and what the
    cache holds after step ``last_step`` (the last one)."""
    heads = f"{b.kv_heads} K/V head{'s' if b.kv_heads != 1 else ''}"
    per_layer = b.numbers // max(1, b.kv_heads)
    first = (
        f"One token costs {size_text(b.per_token)}: {b.layers} layers × {heads} × "
        f"{per_layer} numbers (its key and value) × {b.itemsize} B ({b.dtype})."
    )
    if b.latent is not None:  # latent attention: the cache holds the latent, not K and V
        rank, rope = b.latent
        first = (
            f"One token costs {size_text(b.per_token)}: {b.layers} layers × ({rank} latent + "
            f"{rope} rotary-key numbers) × {b.itemsize} B ({b.dtype}); every head's K and V "
            "are up-projected from them."
        )
    if b.kv_heads == b.heads and b.latent is None:
        first += " This is full multi-head attention: every head has its own K and V."
    else:
        ratio = b.per_token_mha / max(1, b.per_token)
        first += (
            f" Under full multi-head attention ({b.heads} heads, each its own K and V) the "
            f"same model would cost {size_text(b.per_token_mha)} ({ratio:g}×)."
        )
    counts = sorted(set(b.held_positions))
    where = (
        f"{counts[0]} positions in each layer"
        if len(counts) == 1
        else f"{sum(b.held_positions)} positions over the layers ({min(counts)} to {max(counts)})"
    )
    second = f"Held after the last step ({last_step}): {where} = {size_text(b.held)}"
    if b.kv_heads != b.heads or b.latent is not None:
        second += f" (full multi-head attention: {size_text(b.held_mha)})"
    return first + " " + second + "."
