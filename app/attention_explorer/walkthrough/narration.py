"""steps_for(): one query followed through every stage, narrated from the trace.

Every number in the narration is read from the trace, directly or through the engine's
:func:`~attention_explorer.engine.explain`, and printed with the one number formatter;
nothing here does arithmetic of its own, so the words can never disagree with the views.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from attention_explorer.engine import Trace
from attention_explorer.walkthrough import attention, heads, inputs, rotary, variants
from attention_explorer.walkthrough.context import Context
from attention_explorer.walkthrough.focus import Focus, choose_focus, describe_focus
from attention_explorer.walkthrough.step import WalkStep

#: Who chose a given focus row -> the Focus kind that says so.
CHOSEN_BY = {"you": "chosen", "example": "example", "walkthrough": "kept"}


def resolve_focus(
    trace: Trace,
    head: int | None,
    focus_row: int | None,
    focus_col: int | None,
    chosen_by: str = "you",
) -> tuple[int, Focus]:
    """The head and the query/key to follow: the given row when valid (chosen by ``you``,
    the ``example`` or earlier by the ``walkthrough``), else :func:`choose_focus`."""
    head = head if head in trace.heads else trace.heads[0]
    focus = choose_focus(trace, head)
    if focus_row is not None and 0 <= focus_row < trace.n_queries:
        col = int(np.argmax(trace.stage("weights", head)[focus_row]))
        focus = describe_focus(trace, head, focus_row, col, CHOSEN_BY.get(chosen_by, "chosen"))
    if focus_col is not None and 0 <= focus_col < trace.n_keys:
        focus = replace(focus, col=focus_col)
    return head, focus


def steps_for(
    trace: Trace,
    focus_row: int | None = None,
    focus_col: int | None = None,
    *,
    head: int | None = None,
    name: str = "",
    description: str = "",
    notes: Sequence[tuple[str, str]] = (),
    chosen_by: str = "you",
) -> list[WalkStep]:
    """The walkthrough of ``trace``: query ``focus_row`` and key ``focus_col`` of ``head``.

    Defaults: the first computed head; the informative query (:func:`choose_focus`) and the
    key it attends to most. ``name``/``description``/``notes`` (from an example session) give
    an opening "About this example" step. ``chosen_by`` says who chose ``focus_row``: "you",
    "example" or "walkthrough" (kept from an earlier build); the narration says so. Steps
    that do not apply are left out: embeddings in direct mode, concatenation and other heads
    with one head, W_O without an output projection.
    """
    if not trace.heads or not trace.has("weights"):
        return []
    h, focus = resolve_focus(trace, head, focus_row, focus_col, chosen_by)
    ctx = Context(trace, h, focus.row, focus.col, focus)
    steps: list[WalkStep] = []
    if description or notes:
        steps.append(inputs.about(ctx, name, description, notes))
    if trace.has("X"):
        steps.append(inputs.embeddings(ctx))
    steps += [inputs.query(ctx), inputs.key(ctx), inputs.value(ctx)]
    normed = variants.has_qk_norm(ctx)
    if normed:  # QK-norm: q and k RMS-normalised with their own weights, before RoPE
        steps.append(variants.qk_norm(ctx))
    rope = rotary.applies(ctx)
    if rope:  # RoPE: q and k turn by position before the scores read them
        steps.append(rotary.rotation(ctx))
    score = attention.scores(ctx)
    if rope:
        score = rotary.reads_rotated(score)
    elif normed:
        score = rotary.reads_rotated(score, {"Q": "Q_normed", "K": "K_normed"})
    steps += [score, attention.scale(ctx)]
    if variants.has_softcap(ctx):  # the soft cap comes between the scaled scores and the mask
        steps.append(variants.softcap(ctx))
    # a sliding window (a local layer) has its own mask step: which keys are too far back
    steps.append(variants.window_mask(ctx) if variants.has_window(ctx) else attention.mask(ctx))
    steps.append(attention.weights(ctx))
    if variants.has_sinks(ctx):  # gpt-oss: the weight each row gives its head's sink logit
        steps.append(variants.sink(ctx))
    steps.append(attention.weighted_sum(ctx))
    if trace.config.heads > 1:
        steps += heads.other_heads(ctx)
        if trace.has("concat"):
            steps.append(heads.concat(ctx))
    if trace.has("output"):
        steps.append(heads.output(ctx))
    followed = (focus.row, focus.col)
    return [s if s.selection else replace(s, selection=followed) for s in steps]
