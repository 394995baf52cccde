"""The steps of the newer attention stages: QK-norm (each head's q and k RMS-normalised with
their own weights before RoPE) and the soft cap (cap · tanh(scaled / cap) before the mask).

Shown where the trace has the stage. Every number comes from the engine's explanation of a
cell (:func:`~attention_explorer.engine.explain`) or from the trace, so the mean square, the
root, the weights and the capped score are the ones the views show.
"""

from __future__ import annotations

import html

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


#: Hidden keys named one by one in the window step, at most.
MAX_NAMED = 8


def has_window(ctx: Context) -> bool:
    """True when the session's mask has a sliding window (a local layer)."""
    return ctx.trace.config.window is not None and ctx.trace.has("mask")


def window_mask(ctx: Context) -> WalkStep:
    """The mask of a sliding-window (local) layer: which keys the followed query may not see,
    the ones after it and the ones ``window`` or more positions back, each with its reason."""
    trace, i, j, config = ctx.trace, ctx.row, ctx.col, ctx.trace.config
    window = int(config.window)
    allowed = trace.stage("mask")  # [n, m]
    blocked = [int(c) for c in np.flatnonzero(~allowed[i])]
    named = blocked[:MAX_NAMED]
    kind = "a causal mask" if config.mask == "causal" else f"the {config.mask} mask"
    parts = [
        f"This session uses {kind} with a sliding window of {window}: each query may look at "
        f"itself and the {window - 1} token{'s' if window != 2 else ''} before it, no further "
        "back (a local layer, as in Gemma 2 and 3, Mistral and Qwen2). A hidden key's score "
        "becomes -inf, which the next step turns into a weight of exactly 0."
    ]
    if blocked:
        back = [c for c in named if i - c >= window]  # too far back: the window
        ahead = [c for c in named if c > i]  # after the query: the causal mask
        other = [c for c in named if c not in back and c not in ahead]
        words = []
        if back:
            keys = ", ".join(tok(trace.kv_tokens[c]) for c in back)
            gaps = ", ".join(str(i - c) for c in back)
            words.append(f"{keys} lie {window} or more positions back ({gaps})")
        if ahead:
            words.append(", ".join(tok(trace.kv_tokens[c]) for c in ahead) + " come after it")
        for c in other:  # hidden by the mask's own rule (padding, custom)
            reason = ctx.explain("masked", i, c).steps[-1].reason.text()
            words.append(html.escape(reason))
        more = f" and {len(blocked) - len(named)} more" if len(blocked) > len(named) else ""
        parts.append(f"For {ctx.q_tok} it hides {len(blocked)} keys: {'; '.join(words)}{more}.")
    else:
        parts.append(f"{ctx.q_tok} may look at every key: nothing is hidden in its row.")
    parts.append(f"The masked row of {ctx.q_tok}: {vec(ctx.stage('masked')[i])}.")
    cells = ((i, j), *((i, c) for c in named if c != j))
    return WalkStep(
        "mask", f"Mask: {config.mask}, window {window}", "masked", ctx.head, cells,
        paragraphs(*parts), (("mask", cells),),
    )  # fmt: skip


def has_sinks(ctx: Context) -> bool:
    """True when the trace put a sink logit in each softmax row and kept its weight."""
    return ctx.trace.has("sink_weight") and ctx.trace.has("weights")


def sink(ctx: Context) -> WalkStep:
    """The weight the head's sink logit takes from the followed query's softmax row, worked
    out, and what is left for the keys (their weights sum to 1 − it)."""
    i, j = ctx.row, ctx.col
    weights, share = ctx.stage("weights")[i], float(ctx.stage("sink_weight")[i, 0])  # [m], 1
    logit = float(np.asarray(ctx.trace.inputs.sinks, dtype=np.float64)[ctx.head])
    worked = ctx.explain("sink_weight", i, 0).steps
    kept = float(np.sum(np.asarray(weights, dtype=np.float64)))
    text = paragraphs(
        f"Attention sink: head {ctx.head} has a learned sink logit, "
        f"{format_number(logit)}, that joins every row's softmax as if it were one more key "
        "with no value. The sink's share is then dropped, so the weights of the real keys sum "
        "to less than 1: a head that finds nothing worth reading can give its weight to the "
        "sink and add almost nothing to the token (gpt-oss learns one such logit per head).",
        f"The row of {ctx.q_tok}, worked out:",
        "<br>".join(render(step) for step in worked),
        f"The sink takes {format_number(share)}; the keys' weights {vec(weights)} sum to "
        f"{format_number(kept)} = 1 − {format_number(share)}, and {ctx.k_tok} gets "
        f"{format_number(float(weights[j]))} of it.",
    )
    return WalkStep(
        "sink",
        "The sink's share of the softmax (attention sinks)",
        "sink_weight",
        ctx.head,
        ((i, 0),),
        text,
        (("weights", row_cells(i, weights.shape[0], j)),),
        editor="sinks",
        selection=(i, j),
    )
