"""The steps of the newer attention stages: QK-norm (each head's q and k RMS-normalised with
their own weights before RoPE) and the soft cap (cap · tanh(scaled / cap) before the mask).

Shown where the trace has the stage. Every number comes from the engine's explanation of a
cell (:func:`~attention_explorer.engine.explain`) or from the trace, so the mean square, the
root, the weights and the capped score are the ones the views show.
"""

from __future__ import annotations

import numpy as np

from attention_explorer.core.numbers import format_number
from attention_explorer.walkthrough.context import Context
from attention_explorer.walkthrough.markup import paragraphs, render, row_cells, tok, vec
from attention_explorer.walkthrough.step import WalkStep


def has_qk_norm(ctx: Context) -> bool:
    """True when the trace QK-normed q and k and kept both normed stages."""
    return ctx.trace.has("Q_normed") and ctx.trace.has("K_normed")


def has_softcap(ctx: Context) -> bool:
    """True when the trace soft-capped its scores and kept them."""
    return ctx.trace.has("capped")


def _sharpness(values: np.ndarray) -> float:
    """The length of a vector (how strongly its dot products can grow)."""
    return float(np.sqrt(np.sum(np.asarray(values, dtype=np.float64) ** 2)))


def qk_norm(ctx: Context) -> WalkStep:
    """q and k divided by their root mean square, then scaled dimension by dimension by the
    norm's weights: worked out for the followed query's largest number."""
    i, j, config = ctx.row, ctx.col, ctx.trace.config
    Q, Qn, Kn = ctx.stage("Q"), ctx.stage("Q_normed"), ctx.stage("K_normed")  # [n, d_k] ...
    dim = int(np.argmax(np.abs(Q[i])))
    worked = ctx.explain("Q_normed", i, dim).steps
    factor = "1 + w" if config.qk_norm == "rms_one_plus" else "w"
    over = (
        f"its own {config.head_dim} numbers"
        if config.qk_norm_width == "head"
        else "the numbers of every head of its token together"
    )
    text = paragraphs(
        "QK-norm: before any score, each query and key is divided by its root mean square "
        f"(over {over}) and then multiplied, dimension by dimension, by learned weights "
        f"({factor}). However large the projections make q and k, their size is set by the "
        "weights, not by the input, so no head can grow arbitrarily sharp.",
        f"The query of {ctx.q_tok}, dimension {dim} (its largest), worked out:",
        "<br>".join(render(step) for step in worked),
        f"Normed, q = {vec(Qn[i])} (length {format_number(_sharpness(Qn[i]))}, was "
        f"{format_number(_sharpness(Q[i]))}); the key of {ctx.k_tok} normed the same way with "
        f"the k weights: k = {vec(Kn[j])}.",
    )
    related = (
        ("Q", row_cells(i, Q.shape[1])),
        ("K_normed", row_cells(j, Kn.shape[1])),
        ("K", row_cells(j, Kn.shape[1])),
    )
    return WalkStep(
        "qk_norm",
        "Normalise q and k (QK-norm)",
        "Q_normed",
        ctx.head,
        row_cells(i, Qn.shape[1]),
        text,
        related,
        editor="q_norm",
    )


def softcap(ctx: Context) -> WalkStep:
    """The followed score squashed by cap · tanh(scaled / cap), and the row's largest one."""
    i, j, config = ctx.row, ctx.col, ctx.trace.config
    scaled, capped = ctx.stage("scaled")[i], ctx.stage("capped")[i]  # [m] each
    cap = float(config.softcap)
    worked = ctx.explain("capped", i, j).steps[-1]
    top = int(np.argmax(scaled))
    text = paragraphs(
        f"Soft cap: every scaled score s becomes {format_number(cap)} · tanh(s / "
        f"{format_number(cap)}). Small scores pass almost unchanged (tanh(x) ≈ x near 0); "
        f"large ones level off just under ±{format_number(cap)}, so one key cannot take all "
        "the weight however large its score grows (Gemma 2 caps its scores at 50).",
        f"The score of {ctx.q_tok} for {ctx.k_tok}:",
        render(worked),
        f"The row's largest scaled score, {format_number(float(scaled[top]))} (key "
        f"{tok(ctx.trace.kv_tokens[top])}), is capped to {format_number(float(capped[top]))}.",
    )
    cells = ((i, j), *((i, c) for c in range(scaled.shape[0]) if c != j))
    return WalkStep(
        "softcap",
        "Cap the scores (soft cap)",
        "capped",
        ctx.head,
        cells,
        text,
        (("scaled", cells),),
    )
