"""explain(): the arithmetic behind one cell of a trace, with the real numbers.

Returns structured steps (for tooltips, the walkthrough and the command line) and a plain
text rendering. Every number in the text is read from the trace, never recomputed by hand.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from attention_explorer.engine.trace import Trace

#: Long rows are shown with this many terms, then "... and N more".
DEFAULT_MAX_TERMS = 8


def format_number(x: float, places: int = 4) -> str:
    """A short, exact-enough rendering: ``0.25``, ``-1.4142``, ``1.2e+31``, ``-inf``."""
    x = float(x)
    if math.isinf(x):
        return "-inf" if x < 0 else "inf"
    if math.isnan(x):
        return "undefined"
    if x != 0 and (abs(x) >= 1e6 or abs(x) < 10**-places):
        return f"{x:.{places - 1}e}"
    text = f"{x:.{places}f}"
    if "." in text:  # strip trailing zeros of the fraction only: 10 stays "10"
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


@dataclass
class Step:
    """One step of the arithmetic: a title, its terms as (label, value), and the result."""

    title: str
    terms: list[tuple[str, float]] = field(default_factory=list)
    result: float | None = None
    formula: str = ""
    hidden_terms: int = 0

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
    """The first ``limit`` (label, value) pairs and how many were left out.

    ``label_of(t)`` is called only for the terms shown, so a 4096-key row costs ``limit``
    labels, not 4096.
    """
    count = len(values)
    shown = [(label_of(t), float(values[t])) for t in range(min(limit, count))]
    return shown, max(0, count - limit)


def _dot_step(title, left_name, left, right_name, right, result, limit, extra_labels=None):
    products = np.asarray(left, dtype=np.float64) * np.asarray(right, dtype=np.float64)

    def label(t):
        product = f"{format_number(left[t])}×{format_number(right[t])}"
        return f"{left_name}[{t}]·{right_name}[{t}] = {product}"

    shown, hidden = _terms(label, products, limit)
    return Step(title, shown, float(result), hidden_terms=hidden)


def explain(
    trace: Trace,
    stage: str,
    head: int = 0,
    i: int = 0,
    j: int = 0,
    max_terms: int = DEFAULT_MAX_TERMS,
) -> CellExplanation:
    """Explain cell ``(i, j)`` of ``stage`` for query head ``head`` of ``trace``.

    Stages: Q, K, V, scores, scaled, mask, masked, weights, head_outputs, concat, output.
    Raises KeyError for a stage that was not computed, IndexError for a cell outside it.
    """
    array = trace.stage(stage, head)
    if not (0 <= i < array.shape[0] and 0 <= j < array.shape[1]):
        raise IndexError(f"cell ({i}, {j}) is outside {stage} of shape {array.shape}")
    rows = trace.row_labels(stage)
    cols = trace.col_labels(stage)
    out = CellExplanation(stage, head, i, j, float(array[i, j]), rows[i], cols[j])
    builder = _BUILDERS.get(stage)
    if builder is not None:
        out.steps = builder(trace, head, i, j, max_terms)
    return out


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
        X = trace["X_kv"] if name != "Q" and trace.has("X_kv") else trace["X"]
        if X is None:
            return [Step(f"{name} = X W_{name} (X was not kept in this trace)")]
        step = _dot_step(
            f"{name}[{i}, {j}] = row {i} of X times column {col} of W_{name}",
            "x", X[i], f"W_{name}[:, {col}]", W[:, col], trace.stage(name, head)[i, j], limit,
        )  # fmt: skip
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
            f"score = q_{i} · k_{j} (query {trace.tokens[i]!r}, key {trace.kv_tokens[j]!r})",
            "q",
            q,
            "k",
            k,
            score,
            limit,
        )  # fmt: skip
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


def _mask_reason(trace: Trace, i, j) -> str:
    config = trace.config
    allowed = bool(trace["mask"][i, j]) if trace.has("mask") else True
    if allowed:
        return f"query {i} may attend to key {j}"
    if config.mask == "causal":
        return f"hidden: causal mask, key {j} comes after query {i}"
    if config.mask == "padding":
        return f"hidden: key {j} is padding"
    return f"hidden by the custom mask at ({i}, {j})"


def _mask_steps(trace: Trace, head, i, j, limit):
    return [Step(f"mask ({trace.config.mask}): {_mask_reason(trace, i, j)}")]


def _masked_steps(trace: Trace, head, i, j, limit):
    steps = _scaled_steps(trace, head, i, j, limit) if trace.has("scaled") else []
    value = trace.stage("masked", head)[i, j]
    steps.append(Step(f"mask: {_mask_reason(trace, i, j)}", [], float(value),
                      formula="hidden keys become -inf, so they get weight 0"))  # fmt: skip
    return steps


def _weights_steps(trace: Trace, head, i, j, limit):
    row = np.asarray(trace.stage("masked", head)[i], dtype=np.float64)  # [m]
    weight = float(trace.stage("weights", head)[i, j])
    labels = trace.kv_tokens
    kind = trace.config.normalizer
    if i in trace.fully_masked_rows:
        return [
            Step(
                f"every key is hidden from query {i}: its weights are all 0 by definition", [], 0.0
            )
        ]
    if kind == "sigmoid":
        return [Step("sigmoid(x) = 1 / (1 + exp(-x)), each score on its own",
                     [("x", float(row[j]))], weight)]  # fmt: skip
    if kind == "sparsemax":
        weights_row = trace.stage("weights", head)[i]
        support = np.flatnonzero(weights_row > 0)
        tau = float(row[support[0]] - weights_row[support[0]]) if support.size else 0.0
        shown, hidden = _terms(lambda t: f"z[{labels[support[t]]}]", row[support], limit)
        return [
            Step(f"sparsemax keeps {support.size} of {row.size} keys (the support)", shown,
                 hidden_terms=hidden, formula="tau makes the kept weights sum to 1"),
            Step("weight = max(z - tau, 0) = "
                 f"max({format_number(row[j])} - {format_number(tau)}, 0)", [], weight),
        ]  # fmt: skip
    allowed = np.isfinite(row)
    row_max = float(row[allowed].max())
    exps = np.where(allowed, np.exp(np.where(allowed, row, row_max) - row_max), 0.0)  # [m]
    total = float(exps.sum())
    shown_exp, hidden_exp = _terms(
        lambda t: f"exp({format_number(row[t])} - {format_number(row_max)})", exps, limit,
    )  # fmt: skip
    return [
        Step(f"softmax of row {i} ({trace.tokens[i]!r}): 1. find the largest score", [], row_max),
        Step("2. subtract it and exponentiate (hidden keys give 0)", shown_exp,
             hidden_terms=hidden_exp),
        Step("3. add them up", [], total),
        Step(f"4. divide the term of key {labels[j]!r} by the sum: "
             f"{format_number(exps[j])} / {format_number(total)}", [], weight),
    ]  # fmt: skip


def _head_output_steps(trace: Trace, head, i, j, limit):
    w = trace.stage("weights", head)[i]  # [m]
    v = trace.stage("V", head)[:, j]  # [m]
    value = trace.stage("head_outputs", head)[i, j]
    return [
        _dot_step(
            f"output[{i}, {j}] = Σ over keys of weight × value (dimension {j} of each value row)",
            "w",
            w,
            f"v[:, {j}]",
            v,
            value,
            limit,
        )  # fmt: skip
    ]


def _concat_steps(trace: Trace, head, i, j, limit):
    dv = trace.config.value_dim
    return [Step(f"column {j} of the concatenation is column {j % dv} of head {j // dv}'s output",
                 [], float(trace["concat"][i, j]))]  # fmt: skip


def _output_steps(trace: Trace, head, i, j, limit):
    W_O = trace.inputs.W_O
    step = _dot_step(
        f"output[{i}, {j}] = row {i} of the concatenation times column {j} of W_O",
        "concat", trace["concat"][i], f"W_O[:, {j}]", W_O[:, j], trace["output"][i, j], limit,
    )  # fmt: skip
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
