"""The KV cache's worked example "What does latent attention store?" (issue 30 item 6),
every number computed here.

DeepSeek-V3's published shape (:data:`DEEPSEEK_V3`) priced by :mod:`.cache_size` against
multi-head and grouped-query attention of the same width, on a toy session whose keys and
values are up-projections of a 3-number latent per token. :func:`latent_measures` computes
the numbers and :func:`latent_notes` writes them, so a note cannot disagree with
``ae.cache_size``; the first-token example is :mod:`.worked_example`'s.
"""

from __future__ import annotations

import json

import numpy as np

from .cache_size import CacheShape, bytes_per_token, cache_size, held_bytes

LATENT_KEY = "kv-cache-latent-attention"
#: The walkthrough group of both KV-cache examples (the first-token example reads it here).
GROUP = "The KV cache"


#: DeepSeek-V3's attention shape as published (transformers' ``DeepseekV3Config`` defaults).
DEEPSEEK_V3 = {
    "num_hidden_layers": 61,
    "num_attention_heads": 128,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "kv_lora_rank": 512,
}
CACHE_DTYPE = "bfloat16"  # a cache in 2-byte numbers
CONTEXT = 32_768  # a long conversation's tokens
GROUPS = (8, 1)  # grouped-query attention with 8 key/value heads, and multi-query attention
#: The toy attention of the latent example's session: tokens, d_model, heads, latent width.
TOY_TOKENS = "the cache keeps one latent for every token".split()
TOY_D, TOY_HEADS, TOY_RANK = 16, 4, 3


def latent_measures() -> dict:
    """Every number of the latent example: DeepSeek-V3's bytes per token (per layer, all
    layers) and after :data:`CONTEXT` tokens under its latent attention, multi-head attention
    of the same width and grouped-query attention (:data:`GROUPS`), and the toy session's
    check (the rank of its keys and values, rebuilt from the latent)."""
    size = cache_size(DEEPSEEK_V3, CACHE_DTYPE)
    designs = {"mla": size.mla, "mha": size.mha} | {f"gqa{g}": size.gqa(g) for g in GROUPS}
    shape = size.shape
    out = {
        name: {
            "numbers": b.numbers,
            "per_layer": b.per_layer,
            "all_layers": b.all_layers,
            "context": held_bytes(shape, CONTEXT, CACHE_DTYPE, b.attention, b.groups),
        }
        for name, b in designs.items()
    }
    return {"designs": out, "pair": shape.head_dim + shape.v_head_dim, "toy": _toy_check()}


def toy_weights() -> dict:
    """The toy session's X and projections: ``W_K = W_DKV W_UK`` and ``W_V = W_DKV W_UV``
    (the latent c = X W_DKV is ``TOY_RANK`` numbers a token), seeded, two decimals."""
    rng = np.random.default_rng(30)
    n, d, r = len(TOY_TOKENS), TOY_D, TOY_RANK

    def draw(*shape):
        return np.round(rng.normal(size=shape), 2)

    X, W_Q = draw(n, d), draw(d, d) * 0.5  # [n, d], [d, h*d_k]
    W_DKV, W_UK, W_UV = draw(d, r), draw(r, d), draw(r, d)  # [d, r], [r, h*d_k], [r, h*d_v]
    return {"X": X, "W_Q": W_Q, "W_DKV": W_DKV, "W_UK": W_UK, "W_UV": W_UV}


def _toy_session(w: dict) -> dict:
    """The toy attention as a session-file dict (projection mode, causal)."""
    from attention_explorer.session.file_format import FORMAT_NAME, FORMAT_VERSION

    inputs = {"mode": "projection", "X": w["X"].tolist(), "W_Q": w["W_Q"].tolist()}
    # exact products of 2-decimal numbers have 4 decimals: rounding drops float noise only
    inputs["W_K"] = np.round(w["W_DKV"] @ w["W_UK"], 4).tolist()  # [d, h*d_k], rank TOY_RANK
    inputs["W_V"] = np.round(w["W_DKV"] @ w["W_UV"], 4).tolist()  # [d, h*d_v], rank TOY_RANK
    return {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "tokens": TOY_TOKENS,
        "config": {"heads": TOY_HEADS, "d_model": TOY_D, "mask": "causal"},
        "inputs": inputs,
    }


def _toy_check() -> dict:
    """The engine's K and V of every head of the toy session: their rank, and how far they
    are from the latent ``c = X W_DKV`` times the up-projections."""
    from attention_explorer.session.compute_session import compute_session
    from attention_explorer.session.file_format import loads_session

    w = toy_weights()
    trace = compute_session(loads_session(json.dumps(_toy_session(w))), dtype="float64")
    heads = range(TOY_HEADS)
    K = np.concatenate([trace.stage("K", h) for h in heads], axis=1)  # [n, h*d_k]
    V = np.concatenate([trace.stage("V", h) for h in heads], axis=1)  # [n, h*d_v]
    c = w["X"] @ w["W_DKV"]  # [n, r] the latent a token's cache holds
    rebuilt = np.concatenate([c @ w["W_UK"], c @ w["W_UV"]], axis=1)  # [n, h*(d_k+d_v)]
    kv = np.concatenate([K, V], axis=1)  # [n, h*(d_k+d_v)]
    toy = CacheShape(1, TOY_HEADS, TOY_HEADS, TOY_D // TOY_HEADS, TOY_D // TOY_HEADS)
    return {
        "numbers": int(kv.shape[1]),
        "rank": int(np.linalg.matrix_rank(kv)),
        "error": float(np.abs(kv - rebuilt).max()),
        "mha": bytes_per_token(toy, "float64", "mha").numbers,
        "last_latent": c[-1].tolist(),  # [r] the last token's latent
    }


def _within(error: float) -> str:
    """A rounding error as the power of ten it stays under (machine-independent)."""
    power = -12
    while 10.0**power <= error:
        power += 1
    return f"within 1e{power}"


def _size(n: int) -> str:
    """Bytes as an exact count and in KiB, MiB or GiB."""
    for unit, power in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 2**power:
            return f"{n:,} bytes ({n / 2**power:.2f} {unit})"
    return f"{n:,} bytes"


def latent_notes(m: dict) -> list[dict]:
    """The latent example's notes, every number from ``m`` (:func:`latent_measures`)."""
    d, toy, pair = m["designs"], m["toy"], m["pair"]
    mla, mha = d["mla"], d["mha"]
    s = DEEPSEEK_V3
    g8, g1 = (d[f"gqa{g}"] for g in GROUPS)
    fewer = "less" if g1["numbers"] < mla["numbers"] else "more"
    return [
        {
            "title": "What DeepSeek-V3 caches per token",
            "text": f"Each of its {s['num_hidden_layers']} layers caches, per token, the "
            f"latent c_kv ({s['kv_lora_rank']} numbers, after its RMSNorm) and one rotary "
            f"key shared by all {s['num_attention_heads']} heads "
            f"({s['qk_rope_head_dim']} numbers): {mla['numbers']} numbers, "
            f"{mla['per_layer']:,} bytes a layer in {CACHE_DTYPE} (2 bytes a number), "
            f"{_size(mla['all_layers'])} a token in all layers. Each step rebuilds every "
            f"head's key (a {s['qk_nope_head_dim']}-number part from the latent, then the shared "
            "rotary part) and value from the latent by the up-projection kv_b_proj.",
        },
        {
            "title": "The same width under multi-head attention",
            "text": f"Every head its own key ({s['qk_nope_head_dim']} + "
            f"{s['qk_rope_head_dim']}) and value ({s['v_head_dim']}): "
            f"{s['num_attention_heads']} × {pair} = {mha['numbers']:,} numbers a layer, "
            f"{_size(mha['all_layers'])} a token, {mha['numbers'] / mla['numbers']:.1f} "
            f"times the latent cache. After {CONTEXT:,} tokens: {_size(mha['context'])} "
            f"against {_size(mla['context'])}.",
        },
        {
            "title": "Against grouped-query attention",
            "text": f"With {GROUPS[0]} key/value heads: {g8['numbers']:,} numbers a layer, "
            f"{_size(g8['all_layers'])} a token ({g8['numbers'] / mla['numbers']:.2f} times "
            f"the latent's); with one (multi-query attention): {g1['numbers']} numbers, "
            f"{_size(g1['all_layers'])} a token, {fewer} than the latent. The latent costs as "
            f"much as grouped-query attention with {mla['numbers'] / pair:.2f} groups, yet "
            "every head reads a key and a value of its own, up-projected from the latent.",
        },
        {
            "title": "This session: keys and values from a latent",
            "text": f"A toy attention ({len(TOY_TOKENS)} tokens, {TOY_HEADS} heads, d_model "
            f"{TOY_D}) whose W_K and W_V are W_DKV·W_UK and W_DKV·W_UV, with a latent of "
            f"{TOY_RANK} numbers a token (c = X·W_DKV; no rotary part). The K and V stages "
            f"of its {TOY_HEADS} heads hold {toy['numbers']} numbers a token, as a "
            f"multi-head cache would ({toy['mha']}), but they have rank {toy['rank']}: "
            f"c·W_UK and c·W_UV rebuild them to {_within(toy['error'])}. A latent cache stores "
            f"those {TOY_RANK} numbers a token (“{TOY_TOKENS[-1]}”: c = "
            f"[{', '.join(f'{v:.4f}' for v in toy['last_latent'])}]) and the up-projections "
            "once.",
        },
    ]


def latent_document() -> dict:
    """The latent example as a session-file dict: the toy attention, with the notes."""
    m = latent_measures()
    doc = _toy_session(toy_weights())
    doc.update(
        name="What does latent attention store?",
        description=(
            "DeepSeek-V3 caches one compressed latent and one shared rotary key per token "
            "instead of every head's key and value; the notes price its cache per token "
            "against multi-head and grouped-query attention of the same width (ae.cache_size). "
            f"The session is a small attention whose keys and values are rebuilt from a "
            f"{TOY_RANK}-number latent per token."
        ),
        notes=latent_notes(m),
        experiment={
            "group": GROUP,
            "order": 960,
            "question": "How many numbers does a token's cache need, if every head's key and "
            "value come from one latent?",
            "expect": f"The K and V stages of all {TOY_HEADS} heads hold {m['toy']['numbers']} "
            f"numbers a token but only {TOY_RANK} independent ones: the latent.",
        },
    )
    return {"_key": LATENT_KEY, **doc}
