"""explain(): the arithmetic behind one cell of a trace, with the real numbers.

Returns structured steps (for tooltips, the walkthrough and the command line) and a plain
text rendering. Every number in the text is read from the trace, never recomputed by hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType

import numpy as np

from attention_explorer.core.numbers import format_number
from attention_explorer.core.stages import stage as catalogue_stage
from attention_explorer.engine.explain_parts import (
    CellExplanation,
    MaskReason,
    Step,
    dot_step,
    first_terms,
    rotary_steps,
)
from attention_explorer.engine.trace import Trace
from attention_explorer.engine.variants.explain_steps import (
    qk_norm_steps,
    scored_stage,
    softcap_steps,
)
from attention_explorer.engine.variants.sink_logit import (
    sink_weight_steps,
    weights_with_sink_steps,
)

#: Long rows are shown with this many terms, then "... and N more".
DEFAULT_MAX_TERMS = 8

__all__ = ["CellExplanation", "MaskReason", "Step", "explain", "format_number"]


def explain(
    trace: Trace,
    stage: str,
    head: int = 0,
    i: int = 0,
    j: int = 0,
    max_terms: int | Sequence[int] = DEFAULT_MAX_TERMS,
) -> CellExplanation:
    """Explain cell ``(i, j)`` of ``stage`` for query head ``head`` of ``trace``.

    Every stage whose catalogue entry names an ``explain`` builder has steps (the others,
    inputs such as X, have a headline only). ``max_terms`` is how many terms of a sum are
    written out (the first ones), or which.
    Raises KeyError for a stage that was not computed, IndexError for a cell outside it.
    """
    array = trace.stage(stage, head)
    rows = trace.row_labels(stage)
    cols = trace.col_labels(stage)
    if not (0 <= i < array.shape[0] and 0 <= j < array.shape[1]):
        raise IndexError(
            f"cell ({i}, {j}) is outside {stage}, which has rows {_span(rows)} "
            f"and columns {_span(cols)}"
        )
    out = CellExplanation(stage, head, i, j, float(array[i, j]), rows[i], cols[j])
    builder = _BUILDERS.get(catalogue_stage(stage).explain)
    if builder is not None:
        out.steps = builder(stage)(trace, head, i, j, max_terms)
    return out


def _span(labels) -> str:
    """``“t1” to “t3”`` (or ``none``): the labels a cell index may name."""
    labels = list(labels)
    if not labels:
        return "none"
    return f"“{labels[0]}”" if len(labels) == 1 else f"“{labels[0]}” to “{labels[-1]}”"


def projected_input(trace: Trace, name: str):
    """The rows that W_Q (name "Q") or W_K/W_V project: X + P when positions were added
    (``X_pos``), the key/value sequence in cross-attention, else X. None when not kept."""
    if name != "Q" and trace.has("X_kv"):
        return trace["X_kv"]
    for stage in ("X_pos", "X"):
        if trace.has(stage):
            return trace[stage]
    return None


def _qkv_steps(name):
    def build(trace: Trace, head, i, j, limit):
        config, inputs = trace.config, trace.inputs
        if config.mode == "direct" or inputs is None:
            return [Step(f"{name} is typed directly: this number is an input.")]
        d = config.head_dim if name != "V" else config.value_dim
        source_head = head if name == "Q" else config.kv_head_of(head)
        col = source_head * d + j
        W = getattr(inputs, f"W_{name}")
        bias = getattr(inputs, f"b_{name}")
        X = projected_input(trace, name)
        if X is None:
            return [Step(f"{name} = X W_{name} (X was not kept in this trace)")]
        source = "X_kv" if name != "Q" and trace.has("X_kv") else "X"
        if source == "X" and trace.has("X_pos"):
            source = "(X + P)"
        label = trace.row_labels(name)[i]
        step = dot_step(
            f"{name}[{label}, {j}] = row “{label}” of {source} times column {col} of W_{name}",
            (source + "[" + label.replace("{", "{{").replace("}", "}}") + ", {t}]", X[i]),
            (f"W_{name}[{{t}}, {col}]", W[:, col]),
            trace.stage(name, head)[i, j],
            limit,
        )
        if bias is not None:
            step.terms.append((f"bias b_{name}[{col}]", float(bias[col])))
        return [step]

    return build


def _scores_steps(trace: Trace, head, i, j, limit):
    # RoPE: the scores read q′ and k′; QK-norm: the normed q and k
    q = trace.stage(scored_stage(trace, "Q"), head)[i]
    k = trace.stage(scored_stage(trace, "K"), head)[j]
    score = trace.stage("scores", head)[i, j]
    return [
        dot_step(
            f"score = q · k for query “{trace.tokens[i]}” and key “{trace.kv_tokens[j]}”",
            ("q", q),
            ("k", k),
            score,
            limit,
        )
    ]


#: The scale rule in words, by ``config.scale``; anything else is a custom value.
_SCALE_WORDS = MappingProxyType(
    {
        "sqrt_dk": "scale = 1/sqrt(d_k) = 1/sqrt({d_k}) = {value}",
        "none": "scale = 1 (no scaling)",
    }
)


def _scale_text(trace: Trace) -> str:
    config = trace.config
    words = _SCALE_WORDS.get(config.scale, "scale = {value} (custom)")
    text = words.format(d_k=config.head_dim, value=format_number(trace.scale))
    if config.temperature != 1:
        text += f", then divided by temperature {format_number(config.temperature)}"
    return text


def _scaled_steps(trace: Trace, head, i, j, limit):
    steps = _scores_steps(trace, head, i, j, limit) if trace.has("Q") else []
    score = trace.stage("scores", head)[i, j]
    scaled = trace.stage("scaled", head)[i, j]
    steps.append(
        Step(
            "scaled = score × scale / temperature",
            [("score", float(score))],
            float(scaled),
            formula=_scale_text(trace),
        )
    )
    return steps


_capped_steps = softcap_steps(_scaled_steps)


def mask_reason(trace: Trace, i: int, j: int) -> MaskReason:
    """Why the mask of ``trace`` lets query ``i`` see key ``j``, or hides it."""
    allowed = bool(trace["mask"][i, j]) if trace.has("mask") else True
    kind = "allowed" if allowed else trace.config.mask
    window = trace.config.window
    if kind == "causal" and j > i:
        pass
    elif not allowed and window is not None and i - j >= window:
        kind = "window"
    if kind not in ("allowed", "causal", "padding", "window"):
        kind = "custom"
    if kind == "window":
        return MaskReason(kind, i, j, trace.tokens[i], trace.kv_tokens[j], window)
    return MaskReason(kind, i, j, trace.tokens[i], trace.kv_tokens[j])


def _mask_steps(trace: Trace, head, i, j, limit):
    reason = mask_reason(trace, i, j)
    return [Step(f"mask ({trace.config.mask}): {reason.text()}", reason=reason)]


def _masked_steps(trace: Trace, head, i, j, limit):
    if trace.has("capped"):  # a soft cap comes between the scaled scores and the mask
        steps = _capped_steps(trace, head, i, j, limit)
    else:
        steps = _scaled_steps(trace, head, i, j, limit) if trace.has("scaled") else []
    value = trace.stage("masked", head)[i, j]
    reason = mask_reason(trace, i, j)
    steps.append(
        Step(
            f"mask: {reason.text()}",
            [],
            float(value),
            formula="hidden keys become -inf, so they get weight 0",
            reason=reason,
        )
    )
    return steps


def _weights_steps(trace: Trace, head, i, j, limit):
    row = np.asarray(trace.stage("masked", head)[i], dtype=np.float64)  # [m]
    weight = float(trace.stage("weights", head)[i, j])
    labels = trace.kv_tokens
    kind = trace.config.normalizer
    if i in trace.fully_masked_rows:
        why = f"every key is hidden from query “{trace.tokens[i]}”: its weights are all 0"
        return [Step(why + " by definition", [], 0.0)]
    if trace.config.attention_sinks:  # the sink logit joins the softmax's denominator
        return weights_with_sink_steps(trace, head, i, j, limit)
    if kind == "sigmoid":
        title = "sigmoid(x) = 1 / (1 + exp(-x)), each cell on its own"
        return [Step(title, [("x", float(row[j]))], weight)]
    if kind == "sparsemax":
        weights_row = trace.stage("weights", head)[i]
        support = np.flatnonzero(weights_row > 0)
        tau = float(row[support[0]] - weights_row[support[0]]) if support.size else 0.0
        shown, elided = first_terms(lambda t: f"z[{labels[support[t]]}]", row[support], limit)
        return [
            Step(
                f"sparsemax keeps {support.size} of {row.size} keys (the support)",
                shown,
                hidden_terms=elided,
                formula="tau makes the kept weights sum to 1",
            ),
            Step(
                "weight = max(z - tau, 0) = "
                f"max({format_number(row[j])} - {format_number(tau)}, 0)",
                [],
                weight,
            ),
        ]
    allowed = np.isfinite(row)
    row_max = float(row[allowed].max())
    exps = np.where(allowed, np.exp(np.where(allowed, row, row_max) - row_max), 0.0)  # [m]
    total = float(exps.sum())
    shown_exp, hidden_exp = first_terms(
        lambda t: f"exp({format_number(row[t])} - {format_number(row_max)})",
        exps,
        limit,
    )
    return [
        Step(f"softmax of row “{trace.tokens[i]}”: 1. find the largest score", [], row_max),
        Step(
            "2. subtract it and exponentiate (hidden keys give 0)",
            shown_exp,
            hidden_terms=hidden_exp,
        ),
        Step("3. add them up", [], total),
        Step(
            f"4. divide the term of key “{labels[j]}” by the sum: "
            f"{format_number(exps[j])} / {format_number(total)}",
            [],
            weight,
        ),
    ]


def _head_output_steps(trace: Trace, head, i, j, limit):
    w = trace.stage("weights", head)[i]  # [m]
    v = trace.stage("V", head)[:, j]  # [m]
    value = trace.stage("head_outputs", head)[i, j]
    return [
        dot_step(
            f"output[{trace.tokens[i]}, {j}] = Σ over keys of weight × value "
            f"(dimension {j} of each value row)",
            ("w", w),
            (f"V[{{t}}, {j}]", v),
            value,
            limit,
        )
    ]


def _concat_steps(trace: Trace, head, i, j, limit):
    dv = trace.config.value_dim
    return [
        Step(
            f"column {j} of the concatenation is column {j % dv} of head {j // dv}'s output",
            [],
            float(trace["concat"][i, j]),
        )
    ]


def _output_steps(trace: Trace, head, i, j, limit):
    W_O = trace.inputs.W_O
    step = dot_step(
        f"output[{trace.tokens[i]}, {j}] = row “{trace.tokens[i]}” of the concatenation "
        f"times column {j} of W_O",
        ("concat", trace["concat"][i]),
        (f"W_O[{{t}}, {j}]", W_O[:, j]),
        trace["output"][i, j],
        limit,
    )
    if trace.inputs.b_O is not None:
        step.terms.append((f"bias b_O[{j}]", float(trace.inputs.b_O[j])))
    return [step]


def _typed_steps(name):
    def build(trace: Trace, head, i, j, limit):
        return [Step(f"{name} is an input: this number is given, not computed from others.")]

    return build


def _same(build):
    """A builder that works the same for every stage naming it."""
    return lambda name: build


#: The catalogue's ``explain`` names -> a factory of (trace, head, i, j, limit) -> steps for
#: the stage named (the projection builder reads W_Q, W_K or W_V after the stage's name).
_BUILDERS = {
    "typed": _typed_steps,
    "projection": _qkv_steps,
    "rotary": rotary_steps,
    "qk_norm": qk_norm_steps,
    "softcap": lambda name: _capped_steps,
    "scores": _same(_scores_steps),
    "scaled": _same(_scaled_steps),
    "mask": _same(_mask_steps),
    "masked": _same(_masked_steps),
    "normalizer": _same(_weights_steps),
    "sink_weight": _same(sink_weight_steps),
    "weighted_sum": _same(_head_output_steps),
    "concat": _same(_concat_steps),
    "output_projection": _same(_output_steps),
}


def builder_names() -> tuple[str, ...]:
    """The ``explain`` builders the catalogue may name."""
    return tuple(_BUILDERS)
