"""The middle steps: scores, scaling, the mask, the weights and the weighted sum."""

from __future__ import annotations

import html

import numpy as np

from attention_explorer.engine.explain import MaskReason
from attention_explorer.walkthrough.context import Context
from attention_explorer.walkthrough.markup import num, paragraphs, render, row_cells, tok, vec
from attention_explorer.walkthrough.step import WalkStep

#: Keys listed in the worked softmax table.
SOFTMAX_KEYS = 10
#: Hidden keys named one by one in the mask step; the rest are counted.
MAX_NAMED_KEYS = 12

_MASK_WORDS = {
    "causal": "a causal mask: each token may only look at itself and the tokens before it",
    "padding": "a padding mask: the padding keys are hidden from every query",
    "custom": "a custom mask: a table of which query may look at which key",
}


def scores(ctx: Context) -> WalkStep:
    """One score worked out as a dot product, then the whole row."""
    i, j = ctx.row, ctx.col
    worked = ctx.explain("scores", i, j).steps[0]
    text = paragraphs(
        f"How well does the query of {ctx.q_tok} match the key of {ctx.k_tok}? Multiply the two "
        "vectors number by number and add the products (a dot product):",
        render(worked),
        f"Doing this for every key gives the row of scores of {ctx.q_tok}: "
        f"{vec(ctx.stage('scores')[i])}.",
    )
    related = (
        ("Q", row_cells(i, ctx.stage("Q").shape[1])),
        ("K", row_cells(j, ctx.stage("K").shape[1])),
    )
    return WalkStep("scores", "Scores: q · k", "scores", ctx.head, ((i, j),), text, related)


def scale(ctx: Context) -> WalkStep:
    """The scale factor (and temperature) applied to the followed score."""
    i, j, config = ctx.row, ctx.col, ctx.trace.config
    worked = ctx.explain("scaled", i, j).steps[-1]
    if config.scale == "sqrt_dk":
        title = "Scale by 1/√d_k"
        why = (
            f"Why: a dot product of {config.head_dim} numbers grows with their count; dividing by "
            "√d_k keeps the scores in a range where softmax still spreads attention."
        )
    elif config.scale == "none":
        title = "Scale (switched off)"
        why = "Scaling is off here, so large d_k gives peaky weights."
    else:
        title, why = "Scale (custom factor)", "This session uses its own scale factor."
    text = paragraphs(
        f"Every score is multiplied by the same factor. For {ctx.q_tok} and {ctx.k_tok}:",
        render(worked),
        why,
        f"The scaled row of {ctx.q_tok}: {vec(ctx.stage('scaled')[i])}.",
    )
    return WalkStep("scale", title, "scaled", ctx.head, ((i, j),), text)


def reason_words(reason: MaskReason) -> str:
    """Why a key is hidden, from explain's structured reason, tokens named as the views do."""
    q, k = tok(reason.query_label), tok(reason.key_label)
    return {
        "allowed": f"query {q} may look at key {k}",
        "causal": f"{k} comes after {q}",
        "padding": f"{k} is padding",
        "window": f"{k} is {reason.window} or more positions before {q}",
        "custom": f"the custom mask hides {k} from {q}",
    }[reason.kind]


def _reason(ctx: Context, row: int, col: int) -> MaskReason:
    return ctx.explain("masked", row, col).steps[-1].reason


def mask(ctx: Context) -> WalkStep:
    """Which keys the mask hides from the followed query, and why."""
    trace, i, j = ctx.trace, ctx.row, ctx.col
    kind = trace.config.mask
    masked = ctx.stage("masked")
    if kind == "none" or not trace.has("mask"):
        text = paragraphs(
            "There is no mask in this session: every query may look at every key, so the masked "
            "scores are the scaled scores unchanged."
        )
        return WalkStep("mask", "Mask: none", "masked", ctx.head, ((i, j),), text)
    allowed = trace.stage("mask")
    blocked = [int(c) for c in np.flatnonzero(~allowed[i])]
    named = blocked[:MAX_NAMED_KEYS]  # a causal row of 4096 keys is not read token by token
    parts = [
        f"This session uses {_MASK_WORDS.get(kind, kind)}. A hidden key's score becomes "
        "-inf, which the next step turns into a weight of exactly 0."
    ]
    cells: list[tuple[int, int]] = [(i, j)] + [(i, c) for c in named if c != j]
    if blocked:
        names = ", ".join(tok(trace.kv_tokens[c]) for c in named)
        if len(blocked) > len(named):
            names += f" and {len(blocked) - len(named)} more"
        parts.append(
            f"For {ctx.q_tok} it hides {names}: {reason_words(_reason(ctx, i, blocked[0]))}."
        )
    else:
        parts.append(f"{ctx.q_tok} may look at every key: nothing is hidden in its row.")
        rows_hiding = np.flatnonzero(~allowed.all(axis=1))  # queries with a hidden key
        if rows_hiding.size:
            r = int(rows_hiding[0])
            c = int(np.flatnonzero(~allowed[r])[0])
            reason = _reason(ctx, r, c)
            parts.append(
                f"Other queries do have hidden keys (framed): {tok(reason.query_label)} may not "
                f"look at {tok(reason.key_label)}, because {reason_words(reason)}."
            )
            cells.append((r, c))
    parts.append(f"The masked row of {ctx.q_tok}: {vec(masked[i])}.")
    if trace.fully_masked_rows:
        names = ", ".join(tok(trace.tokens[r]) for r in trace.fully_masked_rows)
        parts.append(
            f"Every key is hidden from {names}: such a row gets weights of all 0 "
            "(not 0/0), so its output is all zeros."
        )
    return WalkStep("mask", f"Mask: {kind}", "masked", ctx.head, tuple(cells), paragraphs(*parts))


def weights(ctx: Context) -> WalkStep:
    """The followed row turned into weights (softmax worked out as a table)."""
    trace, i, j = ctx.trace, ctx.row, ctx.col
    W = ctx.stage("weights")
    cells = row_cells(i, W.shape[1], first=j)
    kind = trace.config.normalizer
    if i in trace.fully_masked_rows:
        text = paragraphs(
            f"Every key is hidden from {ctx.q_tok}, so there is nothing to share out: its "
            f"weights are all 0 by definition. Its weight row is {vec(W[i])}, and its output "
            "will be all zeros."
        )
        return WalkStep("weights", "Weights: a fully masked row", "weights", ctx.head, cells, text)
    if kind != "softmax":
        steps = ctx.explain("weights", i, j).steps
        what = {
            "sparsemax": "Sparsemax is like softmax but gives exact zeros to low scores.",
            "sigmoid": "Sigmoid squashes each score on its own (per cell): the row need not "
            "add up to 1.",
        }.get(kind, "")
        text = paragraphs(
            what, *(render(s) for s in steps), f"The weight row of {ctx.q_tok}: {vec(W[i])}."
        )
        return WalkStep("weights", f"Weights: {kind}", "weights", ctx.head, cells, text)
    return WalkStep(
        "weights", "Softmax, one row worked out", "weights", ctx.head, cells, _softmax_text(ctx)
    )


def _softmax_keys(m: int, j: int) -> list[int]:
    keys = list(range(min(m, SOFTMAX_KEYS)))
    if j not in keys:
        keys[-1] = j
    return keys


def _softmax_text(ctx: Context) -> str:
    trace, i, j = ctx.trace, ctx.row, ctx.col
    m = trace.n_keys
    keys = _softmax_keys(m, j)
    full = ctx.explain("weights", i, j, terms=keys).steps  # max, exps (of keys), sum, divide
    row_max, exps, total = full[0].result, full[1].terms, full[2].result
    rows = []
    for c, (label, value) in zip(keys, exps):
        divide = ctx.explain("weights", i, c, terms=0).steps[3]
        mark = " style='background-color:#fff3b0; color:#000000'" if c == j else ""
        rows.append(
            f"<tr{mark}><td>{html.escape(trace.kv_tokens[c])}</td>"
            f"<td><tt>{html.escape(label)} = {num(value)}</tt></td>"
            f"<td><tt>{num(value)} / {num(total)} = <b>{num(divide.result)}</b></tt></td></tr>"
        )
    more = f"<p>… and {m - len(rows)} more keys.</p>" if m > len(rows) else ""
    table = (
        "<table cellspacing='0' cellpadding='3' border='1'>"
        "<tr><th>key</th><th>2. exp(score − max)</th><th>4. ÷ sum = weight</th></tr>"
        f"{''.join(rows)}</table>{more}"
    )
    return (
        paragraphs(
            f"Softmax turns the row of {ctx.q_tok} into weights that are positive and add up to 1.",
            f"1. Find the largest score in the row: <b>{num(row_max)}</b>.",
            "2. Subtract it from every score and exponentiate (the largest gives exp(0) = 1; a "
            "hidden key's -inf gives 0). Subtracting first keeps exp() from overflowing.",
            f"3. Add them all up: sum = <b>{num(total)}</b>.",
            "4. Divide each by the sum:",
        )
        + table
        + paragraphs(
            f"{ctx.q_tok} attends to {ctx.k_tok} with weight "
            f"<b>{num(ctx.stage('weights')[i, j])}</b>."
        )
    )


def weighted_sum(ctx: Context) -> WalkStep:
    """The followed query's output: the values weighted and added up."""
    i = ctx.row
    out = ctx.stage("head_outputs")
    worked = ctx.explain("head_outputs", i, 0).steps[0]
    parts = [
        f"Now {ctx.q_tok} collects what it attended to: every value row, multiplied by its "
        "weight, all added up. The first number:",
        render(worked),
        f"The whole output{ctx.head_words} for {ctx.q_tok}: {vec(out[i])}.",
    ]
    if i in ctx.trace.fully_masked_rows:
        parts.insert(
            0,
            f"{ctx.q_tok} may look at no key, so all its weights are 0: every product below is 0 "
            "and its output is all zeros.",
        )
    related = (
        ("weights", row_cells(i, ctx.trace.n_keys)),
        ("V", tuple((r, 0) for r in range(ctx.trace.n_keys))),
    )
    return WalkStep(
        "weighted_sum",
        "Weighted sum of the values",
        "head_outputs",
        ctx.head,
        row_cells(i, out.shape[1]),
        paragraphs(*parts),
        related,
        editor="V" if ctx.direct else "W_V",
    )
