"""Attention sinks (gpt-oss): a learned logit per head that joins every row's softmax.

Each head h has one number, its sink logit ``s_h`` (``inputs.sinks [heads]``). The softmax of
query row i runs over the row's masked scores and the sink together, and the sink's share is
then dropped:

    M_i          = max(max_j masked_ij, s_h)
    Z_i          = Σ_j exp(masked_ij − M_i) + exp(s_h − M_i)
    weight_ij    = exp(masked_ij − M_i) / Z_i
    sink_weight_i = exp(s_h − M_i) / Z_i

so each row's weights sum to 1 − sink_weight_i: the head may attend to nothing (a row whose
keys all score far below the sink puts almost no weight anywhere and adds almost nothing of
V). The sink logit is a logit beside the scaled scores: the scale, the temperature and the
soft cap do not touch it; hidden keys still get exactly 0, and a row with every key hidden
gives its whole weight to the sink. Written once against the array API, so the engine, the
model run (``pretrained/kernel.py``) and the cached decode step (``generation/step.py``) run
the same lines on numpy and on torch.
"""

from __future__ import annotations

import numpy as np
from array_api_compat import array_namespace

from attention_explorer.core.numbers import format_number
from attention_explorer.engine.explain_parts import Step, first_terms


def sink_softmax(masked, logits, out=None):
    """The softmax of each row of ``masked [c, r, m]`` (−inf at hidden keys) with head c's
    sink logit ``logits [c]`` in its denominator: ``(weights [c, r, m], sink_weight
    [c, r, 1])``, in ``masked``'s library and dtype. ``out`` (numpy): where the weights go."""
    xp = array_namespace(masked)
    sink = xp.reshape(xp.astype(logits, masked.dtype), (-1, 1, 1))  # [c, 1, 1]
    top = xp.maximum(xp.max(masked, axis=-1, keepdims=True), sink)  # [c, r, 1], finite
    terms = xp.exp(masked - top)  # [c, r, m]: 0 at hidden keys
    share = xp.exp(sink - top)  # [c, r, 1]
    total = xp.sum(terms, axis=-1, keepdims=True) + share  # [c, r, 1], at least 1
    if out is not None and isinstance(masked, np.ndarray):
        np.divide(terms, total, out=out)  # [c, r, m]
        return out, share / total
    return terms / total, share / total


def sink_weight_steps(trace, head, i, j, limit):
    """The explain builder of ``sink_weight``: the row's largest logit, the exponentials, the
    sum with the sink's term, and the sink's share of it."""
    return _softmax_steps(trace, head, i, None, limit)


def weights_with_sink_steps(trace, head, i, j, limit):
    """The explain builder of ``weights`` under attention sinks: the same softmax with the
    head's sink logit in the denominator, so the row sums to 1 − the sink's weight."""
    return _softmax_steps(trace, head, i, j, limit)


def _softmax_steps(trace, head, i, j, limit):
    row = np.asarray(trace.stage("masked", head)[i], dtype=np.float64)  # [m]
    sink = float(np.asarray(trace.inputs.sinks, dtype=np.float64)[head])
    labels, token = trace.kv_tokens, trace.tokens[i]
    allowed = np.isfinite(row)  # [m]
    top = max(float(row[allowed].max()) if allowed.any() else sink, sink)
    exps = np.where(allowed, np.exp(np.where(allowed, row, top) - top), 0.0)  # [m]
    sink_term = float(np.exp(sink - top))
    total = float(exps.sum()) + sink_term
    shown, hidden = first_terms(
        lambda t: f"exp({format_number(row[t])} - {format_number(top)})", exps, limit
    )
    sink_weight = float(trace.stage("sink_weight", head)[i, 0])
    steps = [
        Step(
            f"softmax of row “{token}” with head {head}'s sink logit {format_number(sink)}: "
            "1. find the largest of the scores and the sink",
            [("sink logit", sink)],
            top,
        ),
        Step(
            "2. subtract it and exponentiate (hidden keys give 0)",
            shown,
            hidden_terms=hidden,
        ),
        Step(
            "3. add them up, with the sink's term",
            [
                ("keys' sum", float(exps.sum())),
                (f"sink: exp({format_number(sink)} - {format_number(top)})", sink_term),
            ],
            total,
        ),
    ]
    if j is None:
        steps.append(
            Step(
                f"4. the sink's share: {format_number(sink_term)} / {format_number(total)}",
                [],
                sink_weight,
                formula=f"the keys' weights of this row sum to 1 − {format_number(sink_weight)}",
            )
        )
        return steps
    steps.append(
        Step(
            f"4. divide the term of key “{labels[j]}” by the sum: "
            f"{format_number(exps[j])} / {format_number(total)}",
            [],
            float(trace.stage("weights", head)[i, j]),
            formula=f"the row sums to 1 − sink weight {format_number(sink_weight)}, not 1",
        )
    )
    return steps


def fitted_sinks(sinks: np.ndarray | None, old, new) -> np.ndarray | None:
    """``sinks`` (one logit per head of config ``old``) for config ``new``'s heads: kept where
    the heads overlap, a new head's logit −30 (its sink takes about nothing: e^−30 beside a
    score near 0); None while ``new`` has sinks off and there were none."""
    if sinks is None and not new.attention_sinks:
        return None
    out = np.full(new.heads, NEUTRAL_SINK)  # [heads]
    if sinks is not None:
        kept = np.asarray(sinks, dtype=np.float64).reshape(-1)[: new.heads]
        out[: kept.size] = kept
    return out


#: The logit a new sink starts at: its weight beside a score near 0 is e^−30 ≈ 1e−13.
NEUTRAL_SINK = -30.0
