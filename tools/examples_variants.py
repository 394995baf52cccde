"""Worked examples of the newer attention stages, each a question: QK-norm's
effect on a head's sharpness, Gemma 2's soft cap cutting a head's top score, and which
dimensions a Pythia-style partial rotary turns. Seeded inputs; every number quoted in a note
is computed by the engine (float64), so the notes never disagree with the views."""

from __future__ import annotations

import numpy as np
from example_kit import doc, f64, note, num, projection, trace_of, vec

VARIANTS = "Today's attention: QK-norm, soft cap, partial RoPE"
TOKENS = ["the", "cat", "sat", "on", "the", "mat", "and", "slept"]


def _inputs(seed: int, spread: float, d_model: int = 8):
    """Seeded X and projections (two decimals), queries and keys at ``spread``."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(len(TOKENS), d_model)), 2)  # [n, d_model]
    W_Q, W_K = (np.round(rng.normal(scale=spread, size=(d_model, d_model)), 2) for _ in "qk")
    W_V = np.round(rng.normal(scale=0.5, size=(d_model, d_model)), 2)
    return X, W_Q, W_K, W_V


def _top(trace, head: int, row: int) -> float:
    return float(np.max(trace.stage("weights", head)[row]))


def qk_norm_sharpness() -> dict:
    """Large projections make a head peaked; QK-norm fixes q's and k's size by its weights."""
    X, W_Q, W_K, W_V = _inputs(28, spread=1.6)
    d = doc(
        "variants-qk-norm-sharpness",
        title="QK-norm: what does it do to a head's sharpness?",
        group=VARIANTS,
        order=300,
        description=(
            "Qwen3, OLMo 2 and Gemma 3 RMS-normalise each head's q and k with their own "
            "weights (q_norm, k_norm) before RoPE. Here the projections are large, so without "
            "QK-norm every query puts almost all its weight on one key. The one-click "
            "experiment turns QK-norm on with weights 1."
        ),
        tokens=TOKENS,
        config={"heads": 2, "d_model": 8, "mask": "causal", "positional": "rope"},
        inputs={**projection(f64, X, W_Q, W_K, W_V), "q_norm": [1.0] * 4, "k_norm": [1.0] * 4},
        question="What does QK-norm do to how sharp a head's weights are?",
        expect=(
            "The rows' largest weights fall from near 1 to well below: each q and k now has "
            "length √d_k × its weights, whatever X and the projections are. Type larger "
            "q_norm weights to sharpen the head again: the norm's weights, not the input, "
            "set the sharpness."
        ),
        try_={"qk_norm": "rms"},
        focus=(7, 0),
    )
    before, after = trace_of(d), trace_of(d, qk_norm="rms")
    rows = range(1, len(TOKENS))
    mean_before = np.mean([_top(before, 0, r) for r in rows])
    mean_after = np.mean([_top(after, 0, r) for r in rows])
    q = before.stage("Q", 0)[7]
    qn = after.stage("Q_normed", 0)[7]
    note(
        d,
        "Head 0's largest weight per row (rows 1-7), without and with QK-norm.",
        f"Without: mean {num(mean_before)}; with QK-norm (weights 1): mean {num(mean_after)}. "
        f"The query of 'slept' has length {num(np.linalg.norm(q))} before the norm and "
        f"{num(np.linalg.norm(qn))} after it (√4 = 2 with weights 1).",
    )
    return d


def softcap_cuts_the_top() -> dict:
    """A head whose top score the cap cuts: the weights with and without Gemma 2's cap."""
    X, W_Q, W_K, W_V = _inputs(50, spread=0.55)
    d = doc(
        "variants-softcap-top-score",
        title="Why does Gemma 2 cap its scores?",
        group=VARIANTS,
        order=310,
        description=(
            "Gemma 2 squashes every scaled score s to cap · tanh(s / cap) before the mask "
            "(cap 50 in the real model; 2 here, at this toy's scale). A score far above the "
            "others is cut down to just under the cap, while small ones barely move. The "
            "one-click experiment turns the cap off."
        ),
        tokens=TOKENS,
        config={"heads": 2, "d_model": 8, "mask": "causal", "softcap": 2.0},
        inputs=projection(f64, X, W_Q, W_K, W_V),
        question="What does the soft cap do to a head whose top score stands far above the rest?",
        expect=(
            "Without the cap the top score is several times the cap and its key takes nearly "
            "all the weight; with it, that score is held just under 2 and the weight is shared."
        ),
        try_={"softcap": None},
    )
    capped, plain = trace_of(d), trace_of(d, softcap=None)
    scaled = capped.stage("scaled", 0)  # [n, n]
    masked = np.where(capped["mask"], scaled, -np.inf)
    row = int(np.argmax(masked.max(axis=1)))  # the query with the largest visible score
    key = int(np.argmax(masked[row]))
    d["experiment"]["focus"] = {"row": row, "col": key}
    note(
        d,
        f"Query '{TOKENS[row]}', key '{TOKENS[key]}' (head 0): its top score, with and "
        "without the cap.",
        f"Scaled score {num(scaled[row, key])}; capped: 2 · tanh({num(scaled[row, key])} / 2) "
        f"= {num(capped.stage('capped', 0)[row, key])}. Its weight: "
        f"{num(plain.stage('weights', 0)[row, key])} without the cap, "
        f"{num(capped.stage('weights', 0)[row, key])} with it.",
    )
    return d


def partial_rotary_dims() -> dict:
    """Pythia turns only the first quarter of each head's dimensions."""
    X, W_Q, W_K, W_V = _inputs(70, spread=0.6, d_model=16)
    d = doc(
        "variants-partial-rotary",
        title="Which dimensions does Pythia rotate?",
        group=VARIANTS,
        order=320,
        description=(
            "GPT-NeoX and Pythia (rotary_pct 0.25) and Phi (partial_rotary_factor) turn only "
            "the first part of each head's q and k by position; the other dimensions carry no "
            "position at all. Here each head has d_k = 8 and RoPE turns its first 2. The "
            "one-click experiment turns every dimension."
        ),
        tokens=TOKENS,
        config={
            "heads": 2,
            "d_model": 16,
            "mask": "causal",
            "positional": "rope",
            "rotary_fraction": 0.25,
        },  # fmt: skip
        inputs=projection(f64, X, W_Q, W_K, W_V),
        question="Which of a head's dimensions does Pythia's RoPE turn, and what of the rest?",
        expect=(
            "In Q′ only columns 0 and 1 differ from Q; columns 2-7 are copied from it. With "
            "every dimension turning, all 8 columns change and so do the weights."
        ),
        try_={"rotary_fraction": 1.0},
        focus=(5, 1),
    )
    part, whole = trace_of(d), trace_of(d, rotary_fraction=1.0)
    q, q_rot = part.stage("Q", 0)[5], part.stage("Q_rot", 0)[5]
    changed = [int(c) for c in np.flatnonzero(~np.isclose(q, q_rot, rtol=0, atol=1e-15))]
    shift = float(np.abs(part.stage("weights", 0) - whole.stage("weights", 0)).max())
    note(
        d,
        "The query of 'mat' (head 0, position 5) before and after RoPE.",
        f"Q = {vec(q)}; Q′ = {vec(q_rot)}: dimensions {changed} turned, the rest are copied. "
        f"Turning all 8 moves head 0's weights by up to {num(shift)}.",
    )
    return d


def documents() -> list[dict]:
    """Every example of this module."""
    return [qk_norm_sharpness(), softcap_cuts_the_top(), partial_rotary_dims()]
