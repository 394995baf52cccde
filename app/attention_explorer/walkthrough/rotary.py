"""The rotation step (RoPE): the followed query and key turned by their positions.

Shown after Q, K and V when the session's positions are rotary. Every number comes from the
engine's explanation of a rotated cell (:func:`~attention_explorer.engine.explain`), so the
angle, its cos and sin and the pair it mixes are the ones the views show.
"""

from __future__ import annotations

from dataclasses import replace

from attention_explorer.walkthrough.context import Context
from attention_explorer.walkthrough.markup import paragraphs, render, row_cells, vec
from attention_explorer.walkthrough.step import WalkStep

#: The views the scores read under RoPE, in place of Q and K.
ROTATED = {"Q": "Q_rot", "K": "K_rot"}


def applies(ctx: Context) -> bool:
    """True when the trace rotates q and k (RoPE) and kept both rotated stages."""
    return ctx.trace.has("Q_rot") and ctx.trace.has("K_rot")


def rotation(ctx: Context) -> WalkStep:
    """q and k turned pair by pair by position × frequency, worked out for one pair."""
    i, j, config = ctx.row, ctx.col, ctx.trace.config
    r = config.rotary_dims  # the turned dimensions: all of d_k, or its first part
    half = r // 2
    Q_rot, K_rot = ctx.stage("Q_rot"), ctx.stage("K_rot")  # [n, d_k], [m, d_k]
    worked = ctx.explain("Q_rot", i, 0).steps  # pair (0, r/2): the fastest turn
    start = config.position_offset
    which = (
        f"its {config.head_dim} numbers form {half} pairs (number t with number t + {half})"
        if r == config.head_dim
        else f"only its first {r} of {config.head_dim} numbers turn (rotary fraction "
        f"{config.rotary_fraction:g}, as in GPT-NeoX/Pythia and Phi): they form {half} "
        f"pair{'s' if half != 1 else ''} "
        f"(number t with number t + {half}); numbers {r} to {config.head_dim - 1} pass "
        "unchanged and carry no position at all"
    )
    text = paragraphs(
        "Rotary position embedding (RoPE) adds nothing to X. Instead each query and key is "
        f"turned by its position: {which}, and pair t turns by the angle position × "
        f"frequency_t, with frequency_t = θ^(−2t/{r}) and θ = {config.rope_theta:g}. Early "
        "pairs turn fast, late pairs slowly, like the hands of a clock.",
        f"The query of {ctx.q_tok} sits at position {start + i}. Its first pair, worked out:",
        "<br>".join(render(step) for step in worked),
        f"Turned, q = {vec(Q_rot[i])}; the key of {ctx.k_tok} at position {start + j} turns "
        f"by its own angles: k = {vec(K_rot[j])}.",
        "Why it works: turning both vectors leaves their dot product depending only on the "
        f"angle between them, so a score depends on how far apart the two tokens are "
        f"({i - j} positions here), not on where they sit. Shift every position by the same "
        "amount and every score stays the same; a sinusoidal P added to X has no such rule.",
    )
    normed = "_normed" if ctx.trace.has("Q_normed") else ""  # QK-norm: RoPE turns the normed
    related = (
        (f"Q{normed}", row_cells(i, Q_rot.shape[1])),
        ("K_rot", row_cells(j, K_rot.shape[1])),
        (f"K{normed}", row_cells(j, K_rot.shape[1])),
    )
    cells = row_cells(i, Q_rot.shape[1])
    return WalkStep("rotation", "Rotate q and k by position (RoPE)", "Q_rot", ctx.head, cells,
                    text, related)  # fmt: skip


def reads_rotated(step: WalkStep, names=ROTATED) -> WalkStep:
    """``step`` with its Q and K operands pointed at the rotated views (what the scores
    read under RoPE; ``names`` maps Q and K to other views, the normed ones under QK-norm
    alone); other operands unchanged."""
    related = tuple((names.get(name, name), cells) for name, cells in step.related)
    return replace(step, related=related)
