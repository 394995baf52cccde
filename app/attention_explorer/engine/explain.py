"""explain(): the arithmetic behind one cell of a trace, with the real numbers.

Returns structured steps (for tooltips, the walkthrough and the command line) and a plain
text rendering. Every number in the text is read from the trace, never recomputed by hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from attention_explorer.engine.trace import Trace
from attention_explorer.numbers import format_number

#: Long rows are shown with this many terms, then "... and N more".
DEFAULT_MAX_TERMS = 8

__all__ = ["CellExplanation", "MaskReason", "Step", "explain", "format_number"]


@dataclass(frozen=True)
class MaskReason:
    """Why query ``query`` may or may not look at key ``key``, as data, not words.

    ``kind``: "allowed", "causal" (the key comes after the query), "padding" (the key is
    padding) or "custom" (the custom mask hides it). Labels are the tokens as the views
    show them.
    """

    kind: str
    query: int
    key: int
    query_label: str
    key_label: str

    @property
    def hidden(self) -> bool:
        """True when the mask hides the key from the query."""
        return self.kind != "allowed"

    def text(self) -> str:
        """The reason in words, naming the tokens by their labels."""
        q, k = f"“{self.query_label}”", f"“{self.key_label}”"
        return {
            "allowed": f"query {q} may attend to key {k}",
            "causal": f"causal mask: key {k} comes after query {q}",
            "padding": f"key {k} is padding",
            "custom": f"the custom mask hides key {k} from query {q}",
        }[self.kind]


@dataclass
class Step:
    """One step of the arithmetic: a title, its terms as (label, value), and the result."""

    title: str
    terms: list[tuple[str, float]] = field(default_factory=list)
    result: float | None = None
    formula: str = ""
    hidden_terms: int = 0
    reason: MaskReason | None = None

    def text(self) -> str:
        """The step as lines of plain text."""
        lines = [self.title]
        if self.formula:
            lines.append(f"  {self.formula}")
        for label, value in self.terms:
            lines.append(f"  {label} = {format_number(value)}")
        if self.hidden_terms:
            lines.append(f"  ... and {self.hidden_terms} more")
        if self.result is not None:
            lines.append(f"  = {format_number(self.result)}")
        return "\n".join(lines)


@dataclass
class CellExplanation:
    """How the value at (row, col) of ``stage`` for ``head`` came about."""

    stage: str
    head: int
    row: int
    col: int
    value: float
    row_label: str
    col_label: str
    steps: list[Step] = field(default_factory=list)

    @property
    def headline(self) -> str:
        """One line: which cell and its value."""
        where = f"{self.stage}[{self.row_label}, {self.col_label}]"
        return f"{where} (head {self.head}) = {format_number(self.value)}"

    def text(self) -> str:
        """The whole explanation as plain text."""
        return "\n".join([self.headline, *(s.text() for s in self.steps)])


def _terms(label_of, values, limit):
    """The first ``limit`` (label, value) pairs and how many were left out; ``limit`` may
    also be a sequence of the term indices to show.

    ``label_of(t)`` is called only for the terms shown, so a 4096-key row costs ``limit``
    labels, not 4096.
    """
    count = len(values)
    if isinstance(limit, int):
        chosen = range(min(limit, count))
    else:
        chosen = [t for t in limit if 0 <= t < count]
    shown = [(label_of(t), float(values[t])) for t in chosen]
    return shown, max(0, count - len(shown))


def _dot_step(title, lhs, rhs, result, limit):
    """One dot product term by term. ``lhs``/``rhs`` are (name, values); a name holds ``{t}``
    where the term's index goes (``"W_Q[{t}, 0]"``), or is plain (``"q"`` -> ``q[t]``)."""
    (left_name, left), (right_name, right) = lhs, rhs
    products = np.asarray(left, dtype=np.float64) * np.asarray(right, dtype=np.float64)

    def name(pattern, t):
        return pattern.format(t=t) if "{t}" in pattern else f"{pattern}[{t}]"

    def label(t):
        product = f"{format_number(left[t])}×{format_number(right[t])}"
        return f"{name(left_name, t)}·{name(right_name, t)} = {product}"

    shown, hidden = _terms(label, products, limit)
    return Step(title, shown, float(result), hidden_terms=hidden)


def explain(
    trace: Trace,
    stage: str,
    head: int = 0,
    i: int = 0,
    j: int = 0,
    max_terms: int | Sequence[int] = DEFAULT_MAX_TERMS,
) -> CellExplanation:
    """Explain cell ``(i, j)`` of ``stage`` for query head ``head`` of ``trace``.

    Stages: Q, K, V, scores, scaled, mask, masked, weights, head_outputs, concat, output.
    ``max_terms`` is how many terms of a sum are written out (the first ones), or which.
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
    builder = _BUILDERS.get(stage)
    if builder is not None:
        out.steps = builder(trace, head, i, j, max_terms)
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
        group = config.heads // config.n_kv_heads
        source_head = head if name == "Q" else head // group
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
        step = _dot_step(
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
    q = trace.stage("Q", head)[i]
    k = trace.stage("K", head)[j]
    score = trace.stage("scores", head)[i, j]
    return [
        _dot_step(
            f"score = q · k for query “{trace.tokens[i]}” and key “{trace.kv_tokens[j]}”",
            ("q", q),
            ("k", k),
            score,
            limit,
        )
    ]


def _scale_text(trace: Trace) -> str:
    config = trace.config
    if config.scale == "sqrt_dk":
        text = f"scale = 1/sqrt(d_k) = 1/sqrt({config.head_dim}) = {format_number(trace.scale)}"
    elif config.scale == "none":
        text = "scale = 1 (no scaling)"
    else:
        text = f"scale = {format_number(trace.scale)} (custom)"
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


def mask_reason(trace: Trace, i: int, j: int) -> MaskReason:
    """Why the mask of ``trace`` lets query ``i`` see key ``j``, or hides it."""
    allowed = bool(trace["mask"][i, j]) if trace.has("mask") else True
    kind = "allowed" if allowed else trace.config.mask
    if kind not in ("allowed", "causal", "padding"):
        kind = "custom"
    return MaskReason(kind, i, j, trace.tokens[i], trace.kv_tokens[j])


def _mask_steps(trace: Trace, head, i, j, limit):
    reason = mask_reason(trace, i, j)
    return [Step(f"mask ({trace.config.mask}): {reason.text()}", reason=reason)]


def _masked_steps(trace: Trace, head, i, j, limit):
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
        hidden = f"every key is hidden from query “{trace.tokens[i]}”: its weights are all 0"
        return [Step(hidden + " by definition", [], 0.0)]
    if kind == "sigmoid":
        title = "sigmoid(x) = 1 / (1 + exp(-x)), each cell on its own"
        return [Step(title, [("x", float(row[j]))], weight)]
    if kind == "sparsemax":
        weights_row = trace.stage("weights", head)[i]
        support = np.flatnonzero(weights_row > 0)
        tau = float(row[support[0]] - weights_row[support[0]]) if support.size else 0.0
        shown, hidden = _terms(lambda t: f"z[{labels[support[t]]}]", row[support], limit)
        return [
            Step(
                f"sparsemax keeps {support.size} of {row.size} keys (the support)",
                shown,
                hidden_terms=hidden,
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
    shown_exp, hidden_exp = _terms(
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
        _dot_step(
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
    step = _dot_step(
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


_BUILDERS = {
    "Q": _qkv_steps("Q"),
    "K": _qkv_steps("K"),
    "V": _qkv_steps("V"),
    "scores": _scores_steps,
    "scaled": _scaled_steps,
    "mask": _mask_steps,
    "masked": _masked_steps,
    "weights": _weights_steps,
    "head_outputs": _head_output_steps,
    "concat": _concat_steps,
    "output": _output_steps,
}
