"""The last steps: the other heads, the concatenation and the output projection W_O."""

from __future__ import annotations

import html

from attention_explorer.walkthrough.context import Context
from attention_explorer.walkthrough.markup import (
    ROW_LIMIT,
    num,
    paragraphs,
    render,
    row_cells,
    tok,
    vec,
)
from attention_explorer.walkthrough.step import WalkStep

#: Up to this many heads, each other head gets its own step; above it, one summary step.
PER_HEAD_STEPS_UP_TO = 4


def _top(ctx: Context, head: int) -> tuple[int, float]:
    row = ctx.stage("weights", head)[ctx.row]
    best = int(row.argmax())
    return best, float(row[best])


def _compare(ctx: Context, k: int, best: int, weight: float, mine: int, mine_w: float) -> str:
    """One sentence: where head ``k`` looks most, next to where the followed head looked."""
    keys = ctx.trace.kv_tokens
    if best == mine:
        return (
            f"Head {k} also looks most at {tok(keys[best])} ({num(weight)}), as head "
            f"{ctx.head} did ({num(mine_w)})."
        )
    return (
        f"Head {k} looks most at {tok(keys[best])} ({num(weight)}), while head {ctx.head} "
        f"looked most at {tok(keys[mine])} ({num(mine_w)})."
    )


def other_heads(ctx: Context) -> list[WalkStep]:
    """One step per other head (or one table for many heads): where each one looks."""
    trace, i = ctx.trace, ctx.row
    others = [k for k in trace.heads if k != ctx.head]
    if not others:
        return []
    mine, mine_w = _top(ctx, ctx.head)
    source = "Q, K and V" if ctx.direct else "slices of W_Q, W_K and W_V"
    if len(trace.heads) <= PER_HEAD_STEPS_UP_TO:
        steps = []
        for k in others:
            best, weight = _top(ctx, k)
            text = paragraphs(
                f"Head {k} runs the same steps with its own {source}, so it can look elsewhere. "
                f"Its weights for {ctx.q_tok}: {vec(ctx.stage('weights', k)[i])}.",
                _compare(ctx, k, best, weight, mine, mine_w),
                f"Head {k}'s output for {ctx.q_tok}: {vec(ctx.stage('head_outputs', k)[i])}.",
            )
            cells = row_cells(i, trace.n_keys, first=best)
            steps.append(
                WalkStep(f"head_{k}", f"Head {k}", "weights", k, cells, text, selection=(i, best))
            )
        return steps
    rows = "".join(
        f"<tr><td>{k}</td><td>{html.escape(trace.kv_tokens[_top(ctx, k)[0]])}</td>"
        f"<td><tt>{num(_top(ctx, k)[1])}</tt></td></tr>"
        for k in trace.heads
    )
    text = paragraphs(
        f"Every head runs the same steps with its own {source}. Where each head's query for "
        f"{ctx.q_tok} looks most:"
    ) + (
        "<table cellspacing='0' cellpadding='3' border='1'><tr><th>head</th><th>top key</th>"
        f"<th>weight</th></tr>{rows}</table>"
    )
    cells = row_cells(i, trace.n_keys, first=mine)
    return [WalkStep("heads", "Every head", "weights", ctx.head, cells, text)]


def concat(ctx: Context) -> WalkStep:
    """The head outputs of the followed query side by side."""
    trace, i = ctx.trace, ctx.row
    joined = trace.stage("concat")
    dv, heads = trace.config.value_dim, trace.config.heads
    pieces = " | ".join(
        f"head {k} {vec(joined[i, k * dv : (k + 1) * dv], 4)}" for k in range(heads)[:ROW_LIMIT]
    )
    example = ctx.explain("concat", i, dv if heads > 1 else 0).steps[0]
    text = paragraphs(
        f"The {heads} head outputs for {ctx.q_tok} are put side by side into one row of "
        f"{joined.shape[1]} numbers:",
        pieces + (" | …" if heads > ROW_LIMIT else ""),
        f"For example: {html.escape(example.title)} = {num(example.result)}.",
    )
    cells = row_cells(i, joined.shape[1])
    return WalkStep("concat", "Concatenate the heads", "concat", ctx.head, cells, text)


def output(ctx: Context) -> WalkStep:
    """W_O mixing the heads into the layer's output row."""
    trace, i = ctx.trace, ctx.row
    out = trace.stage("output")
    worked = ctx.explain("output", i, 0).steps[0]
    one = ""
    if trace.config.heads == 1:
        one = " With one head the “concatenation” is simply that head's output."
    text = paragraphs(
        f"Last, W_O mixes the heads' numbers into {out.shape[1]} output numbers per token.{one} "
        f"The first number for {ctx.q_tok}:",
        render(worked),
        f"The output row of {ctx.q_tok}: {vec(out[i])}. This is what the layer hands on.",
    )
    cells = row_cells(i, out.shape[1])
    return WalkStep(
        "output", "Output projection: W_O", "output", ctx.head, cells, text, editor="W_O"
    )
