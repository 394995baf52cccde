"""Experiments: why scale ("Self-attention mechanism explained", and 2.6 of "How Transformers
Think"), masks (section 6 of "The Heart of Transformers") and the checkpoints (part 6 of "How
Transformers Think")."""

from __future__ import annotations

import numpy as np
from example_kit import (
    CHECKPOINTS,
    EXPLAINED,
    FIRST_PRINCIPLES,
    HEART,
    MASKS,
    WHY_SCALE,
    cite,
    doc,
    f64,
    note,
    projection,
    trace_of,
    vec,
)
from examples_basic import K3, Q3, V3

# -- Self-attention mechanism explained, and How Transformers Think 2.6: why scale -----------------
SAT = ["the", "cat", "sat", "on", "a", "mat"]


def why_scale(scaled: bool) -> dict:
    """Self-attention mechanism explained: one 64-number query against six keys,
    np.random.seed(0)."""
    rs = np.random.RandomState(0)  # the tutorial's legacy stream
    q = rs.randn(64)  # [d_k]
    k = rs.randn(6, 64)  # [m, d_k]
    key = "why-scale-scaled" if scaled else "why-scale-unscaled"
    d = doc(
        key,
        title=(
            "Why scale: 64 dimensions, scores divided by 8"
            if scaled
            else "Why scale: 64 dimensions, raw scores"
        ),
        group=WHY_SCALE,
        order=100 if not scaled else 110,
        source=cite(EXPLAINED, "“What would happen if we didn't divide it?”"),
        description=(
            (
                "One 64-number query against six keys, its scores divided by sqrt(64) = 8 "
                "before the softmax. "
                if scaled
                else "One 64-number query against six keys, its raw scores (spread over tens) "
                "fed straight to the softmax. "
            )
            + "The query of 'sat' and the keys of 'the cat sat on a mat' are random normal "
            "numbers drawn as in the tutorial (NumPy seed 0). Each value is a one-hot marker, "
            "so the output row repeats the weights."
        ),
        tokens=["sat"],
        kv_tokens=SAT,
        config={
            "heads": 1,
            "d_model": 6,
            "attention": "cross",
            "scale": "sqrt_dk" if scaled else "none",
        },
        inputs={"mode": "direct", "Q": [[f64(q)]], "K": [f64(k)], "V": [np.eye(6).tolist()]},
        try_={"scale": "none"} if scaled else {"scale": "sqrt_dk"},
        question=(
            "What happens if the division by sqrt(d_k) is left out?"
            if scaled
            else "What does dividing the scores by sqrt(64) = 8 change?"
        ),
        expect=(
            "Almost all the weight piles onto one key and the others nearly vanish."
            if scaled
            else "The row spreads out: several keys keep a real share."
        ),
    )
    raw = trace_of(d, scale="none").stage("weights", 0)[0]
    soft = trace_of(d, scale="sqrt_dk").stage("weights", 0)[0]
    note(
        d,
        "The two rows side by side.",
        f"Raw scores give {vec(raw, 3)}; divided by 8 they give {vec(soft, 3)}. The "
        f"tutorial shows no numbers here; these are what its code computes with seed 0.",
    )
    return d


def scale_pair(dk: int) -> dict:
    """How Transformers Think, 2.6: score 8 at d_k = 4 and score 32 at d_k = 64 both scale to 4."""
    if dk == 4:
        q = [2, 2, 2, 2]
        keys = [[1, 1, 1, 1], [1, 1, 0, 0], [1, -1, 1, -1]]  # scores 8, 4, 0
    else:
        half = [0.5] * 32 + [0.0] * 32
        q = [1] * 64
        keys = [[0.5] * 64, half, [0.5, -0.5] * 32]  # scores 32, 16, 0
    top = 4 * dk**0.5
    d = doc(
        f"scale-dk-{dk}",
        title=f"Score {top:g} at d_k = {dk}: scaled it becomes 4",
        group=WHY_SCALE,
        order=120 if dk == 4 else 130,
        source=cite(FIRST_PRINCIPLES, "2.6 Why divide by √d_k?"),
        description=(
            f"One query against three keys in {dk} dimensions, with raw scores {top:g}, "
            f"{top / 2:g} and 0. Divided by sqrt({dk}) = {dk**0.5:g} they become 4, 2 and 0, "
            f"the same as in the other d_k example, so both rows get the same weights. Each "
            f"value is a one-hot marker, so the output repeats the weights."
        ),
        tokens=["query"],
        kv_tokens=["full match", "half match", "no match"],
        config={"heads": 1, "d_model": 3, "attention": "cross"},
        inputs={"mode": "direct", "Q": [[q]], "K": [keys], "V": [np.eye(3).tolist()]},
        try_={"scale": "none"},
        question="What if the raw score went into the softmax unscaled?",
        expect=(
            "At d_k = 4 the top key takes most of the row; at d_k = 64 it takes "
            "practically all of it. Scaling is what keeps the two comparable."
        ),
    )
    return d


# -- The Heart of Transformers, section 6: masks ---------------------------------------------------
def causal_mask() -> dict:
    """The Heart of Transformers, section 6 with section 4's numbers: a causal mask hides the keys
    above the diagonal."""
    return doc(
        "causal-mask",
        title="Causal mask on the three-token example",
        group=MASKS,
        order=140,
        source=cite(HEART, "6. Causal Masking and Padding Masks"),
        description=(
            "The three tokens of the d_k = 2 example, now as a decoder sees them: each token "
            "may look at itself and earlier tokens only. The hidden scores become -inf, "
            "so their weights are exactly 0."
        ),
        tokens=["t1", "t2", "t3"],
        config={"heads": 1, "d_model": 2, "mask": "causal"},
        inputs={"mode": "direct", "Q": [Q3], "K": [K3], "V": [V3]},
        try_={"mask": "none"},
        question="What changes when the mask is removed?",
        expect="Weight appears above the diagonal: t1 and t2 start drawing on later tokens.",
    )


def padding_mask() -> dict:
    """The Heart of Transformers, section 6: a padding mask hides a pad token added only for
    batching."""
    pad_q = Q3 + [[0, 0]]
    pad_k = K3 + [[0, 0]]
    pad_v = V3 + [[0, 0]]
    return doc(
        "padding-mask",
        title="Padding mask: a <pad> token nobody may attend to",
        group=MASKS,
        order=150,
        source=cite(HEART, "6. Causal Masking and Padding Masks"),
        description=(
            "The three-token example with a fourth, artificial <pad> token (all zeros) added "
            "to fill a batch. The padding mask hides it as a key from every query, so the "
            "real tokens' weights and outputs are exactly those without it."
        ),
        tokens=["t1", "t2", "t3", "<pad>"],
        config={"heads": 1, "d_model": 2, "mask": "padding", "padded_keys": [3]},
        inputs={"mode": "direct", "Q": [pad_q], "K": [pad_k], "V": [pad_v]},
        try_={"mask": "none"},
        question="What if the padding were not masked?",
        expect=(
            "The <pad> column takes a share of every row, and since its value is zero "
            "the real tokens' outputs shrink."
        ),
    )


#: The questions of "How Transformers Think", part 6, by checkpoint number.
CHECKPOINT_QUESTIONS = {
    1: "What happens if two tokens have nearly identical keys?",
    2: "What happens if one score in a row becomes much larger than the rest?",
    5: "What happens if all scores in one row are equal?",
    7: "What happens when a mask blocks a token?",
    9: "What happens if two tokens have identical embeddings and there is no positional "
    "information?",
    11: "What happens if a query vector is close to zero?",
}


def _checkpoint(number: int) -> str:
    """Where a checkpoint experiment comes from: the tutorial, its part 6, the question."""
    question = CHECKPOINT_QUESTIONS[number]
    return cite(FIRST_PRINCIPLES, f"Part 6, Checkpoint {number}: {question}")


# -- How Transformers Think, part 6: checkpoint experiments ----------------------------------------
def checkpoint(key, order, title, description, question, expect, tokens, Q, K, V, **kw):
    """A small direct-mode self-attention example for one checkpoint question."""
    cfg = {"heads": 1, "d_model": len(V[0])}
    cfg.update(kw.pop("config", {}))
    return doc(
        key,
        title=title,
        group=CHECKPOINTS,
        order=order,
        description=description,
        tokens=tokens,
        config=cfg,
        inputs={"mode": "direct", "Q": [Q], "K": [K], "V": [V]},
        question=question,
        expect=expect,
        **kw,
    )


def checkpoints() -> list[dict]:
    """How Transformers Think, part 6, checkpoints 1, 2, 5, 7 and 11 (9 and 10 have their own
    builders)."""
    return [
        checkpoint(
            "checkpoint-similar-keys",
            160,
            "Two tokens with nearly identical keys",
            "'cat' and 'kitten' have keys that differ only in the second decimal.",
            "What happens if two tokens have nearly identical keys?",
            "In every row the 'cat' and 'kitten' columns get almost the same weight.",
            ["cat", "kitten", "car", "the"],
            Q=[[2, 1], [0.5, 1.5], [-1, 2], [1, -1]],
            K=[[1.0, 0.2], [1.02, 0.19], [-0.5, 1.0], [0.1, -0.8]],
            V=[[1, 0], [0, 1], [2, 2], [-1, 1]],
            source=_checkpoint(1),
        ),
        checkpoint(
            "checkpoint-dominant-score",
            161,
            "One score far larger than the rest",
            "The query of 'it' matches the key of 'animal' far better than any other key.",
            "What happens if one score in a row is much larger than the rest?",
            "The 'it' row puts nearly all its weight on 'animal', and its output is almost "
            "exactly animal's value. Try a temperature of 5 to soften the row.",
            ["it", "animal", "street", "tired"],
            Q=[[6, 0], [1, 1], [0, 1], [1, 0]],
            K=[[0.2, 0.1], [2, 0], [0.1, 0.3], [-0.2, 0.4]],
            V=[[0, 0], [1, 2], [3, -1], [-2, 1]],
            source=_checkpoint(2),
            try_={"temperature": 5.0},
            focus=(0, 1),
        ),
        checkpoint(
            "checkpoint-equal-scores",
            162,
            "All scores in a row equal",
            "The first query scores exactly 1.5 against every key, so nothing stands out.",
            "What happens if all scores in one row are equal?",
            "Row 'a' is 1/4 everywhere and its output is the plain average of the four values.",
            ["a", "b", "c", "d"],
            Q=[[0, 1.5], [1, 0], [-1, 1], [2, 1]],
            K=[[1, 1], [2, 1], [-1, 1], [0.5, 1]],
            V=[[4, 0], [0, 4], [2, 2], [-2, 2]],
            source=_checkpoint(5),
            focus=(0, 0),
        ),
        checkpoint(
            "checkpoint-masked-token",
            163,
            "A masked token",
            "'secret' would win every row, but a mask hides it from all queries.",
            "What happens when a mask blocks a token?",
            "The 'secret' column is exactly 0 and the other weights share the whole row. "
            "Remove the mask and 'secret' takes most of each row.",
            ["we", "keep", "secret", "things"],
            Q=[[1, 1], [1, 0], [0, 1], [1, 2]],
            K=[[0.5, 0], [0, 0.5], [2, 2], [0.3, 0.3]],
            V=[[1, 0], [0, 1], [5, 5], [1, 1]],
            source=_checkpoint(7),
            config={"mask": "padding", "padded_keys": [2]},
            try_={"mask": "none"},
        ),
        checkpoint(
            "checkpoint-near-zero-query",
            164,
            "A query close to zero",
            "The first query is almost the zero vector, so all its scores are almost 0.",
            "What happens if a query vector is close to zero?",
            "The first row is nearly uniform and its output is close to the average value. "
            "Try temperature 0.01: even tiny differences then decide.",
            ["um", "the", "big", "dog"],
            Q=[[0.01, -0.02], [2, 0], [0, 2], [1, 1]],
            K=[[1, 0], [0, 1], [1, 1], [-1, 0.5]],
            V=[[1, 0], [0, 1], [1, 1], [-1, 0]],
            source=_checkpoint(11),
            try_={"temperature": 0.01},
            focus=(0, 0),
        ),
    ]


def identical_embeddings() -> dict:
    """How Transformers Think, checkpoint 9: a repeated word, projection mode, no positions."""
    rng = np.random.default_rng(9)
    words = {w: np.round(rng.normal(size=4), 2) for w in ("the", "cat", "chased", "dog")}
    tokens = ["the", "cat", "chased", "the", "dog"]
    X = np.stack([words[w] for w in tokens])  # [5, 4]
    W = [np.round(rng.normal(scale=0.7, size=(4, 4)), 2) for _ in range(3)]  # [4, 4] each
    return doc(
        "checkpoint-identical-embeddings",
        title="The same word twice, with no positional information",
        group=CHECKPOINTS,
        order=165,
        source=_checkpoint(9),
        description=(
            "'the' appears at positions 0 and 3 with the same embedding. Nothing tells the "
            "two apart: no positional encoding is added before the projections."
        ),
        tokens=tokens,
        config={"heads": 1, "d_model": 4},
        inputs=projection(f64, X, *W),
        question="What happens if two tokens have identical embeddings and no positions?",
        expect=(
            "Both 'the' rows are identical, and so are both 'the' columns. Add "
            "sinusoidal positions and the two copies start to differ."
        ),
        try_={"positional": "sinusoidal"},
    )


# -- Positions: RoPE's relative-position property, against sinusoidal positions added to X ---------
POSITIONS = "Positions"


def shifted_positions(positional: str) -> dict:
    """Shift every position by 5: RoPE's scores stay, sinusoidal ones (added to X) change."""
    rng = np.random.default_rng(19)
    tokens = ["the", "cat", "sat", "on", "mat"]
    X = np.round(rng.normal(size=(5, 8)), 2)  # [n, d_model]
    W = [np.round(rng.normal(scale=0.5, size=(8, 8)), 2) for _ in range(3)]  # [8, 8] each
    rope = positional == "rope"
    d = doc(
        "positions-rope-shift" if rope else "positions-sinusoidal-shift",
        title=(
            "RoPE: shift every position, the scores stay"
            if rope
            else "Sinusoidal: shift every position, the scores change"
        ),
        group=POSITIONS,
        order=180 if rope else 185,
        description=(
            "Rotary positions (RoPE, θ = 10000): each head's q and k are turned by their "
            "position, so a score depends only on how far apart two tokens are."
            if rope
            else "Sinusoidal positions P are added to X before the projections, so each "
            "token's q and k carry where it sits, not only how far apart two tokens are."
        )
        + " The one-click experiment starts every position at 5 instead of 0.",
        tokens=tokens,
        config={"heads": 2, "d_model": 8, "mask": "causal", "positional": positional},
        inputs=projection(f64, X, *W),
        question="What happens to the scores if every position is shifted by 5?",
        expect=(
            "Q′ and K′ change (every vector turns further) but every score stays the same: "
            "both turn by the same extra angle."
            if rope
            else "The scores change: P added to X moves each q and k by a different amount, "
            "unlike RoPE (see the RoPE example beside this one)."
        ),
        try_={"position_offset": 5},
    )
    before = trace_of(d).stage("scores", 0)[4]
    after = trace_of(d, position_offset=5).stage("scores", 0)[4]
    note(
        d,
        "The scores of 'mat' (head 0), positions from 0 and from 5.",
        f"From 0: {vec(before, 4)}; from 5: {vec(after, 4)}.",
    )
    return d
