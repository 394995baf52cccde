"""The pieces of an explanation: steps, terms, dot products and why a mask hides a key.

:mod:`attention_explorer.engine.explain` builds explanations out of these.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from attention_explorer.core.numbers import format_number
from attention_explorer.core.stages import stage
from attention_explorer.engine.config import inverse_frequencies
from attention_explorer.kernels import tables


@dataclass(frozen=True)
class MaskReason:
    """Why query ``query`` may or may not look at key ``key``, as data, not words.

    ``kind``: "allowed", "causal" (the key comes after the query), "padding" (the key is
    padding), "window" (the key is ``window`` or more positions back: a sliding-window
    layer) or "custom" (the custom mask hides it). Labels are the tokens as the views
    show them.
    """

    kind: str
    query: int
    key: int
    query_label: str
    key_label: str
    window: int | None = None  #: the sliding window, for kind "window"

    @property
    def blocked(self) -> bool:
        """True when the mask hides the key from the query."""
        return self.kind != "allowed"

    def text(self) -> str:
        """The reason in words, naming the tokens by their labels."""
        q, k = f"“{self.query_label}”", f"“{self.key_label}”"
        return {
            "allowed": f"query {q} may attend to key {k}",
            "causal": f"causal mask: key {k} comes after query {q}",
            "padding": f"key {k} is padding",
            "window": f"sliding window {self.window}: key {k} is {self.query - self.key} "
            f"positions before query {q}, {self.window} or more",
            "custom": f"the custom mask hides key {k} from query {q}",
        }[self.kind]


@dataclass(frozen=True)
class StepLayout:
    """How a :class:`Step` is written: one format string per kind of line."""

    title: str
    formula: str
    term: str  # {label} = {value}
    more: str  # {count}
    result: str


#: Plain text, as ``explain()``'s ``text()`` and the command line print it.
PLAIN_LAYOUT = StepLayout("{}", "  {}", "  {} = {}", "  ... and {} more", "  = {}")


@dataclass
class Step:
    """One step of the arithmetic: a title, its terms as (label, value), and the result."""

    title: str
    terms: list[tuple[str, float]] = field(default_factory=list)
    result: float | None = None
    formula: str = ""
    hidden_terms: int = 0
    reason: MaskReason | None = None

    def lines(self, layout: StepLayout, escape=str) -> list[str]:
        """The step's lines in ``layout``: title, formula, terms, "and N more", result.

        ``escape`` is applied to every text (titles, formulas, term labels), never to numbers,
        which go through the one decimals policy (:func:`format_number`).
        """
        out = [layout.title.format(escape(self.title))]
        if self.formula:
            out.append(layout.formula.format(escape(self.formula)))
        out += [layout.term.format(escape(lb), format_number(v)) for lb, v in self.terms]
        if self.hidden_terms:
            out.append(layout.more.format(self.hidden_terms))
        if self.result is not None:
            out.append(layout.result.format(format_number(self.result)))
        return out

    def text(self) -> str:
        """The step as lines of plain text."""
        return "\n".join(self.lines(PLAIN_LAYOUT))


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
        if not stage(self.stage).per_head:  # shared by every head: no head to name
            return f"{where} = {format_number(self.value)}"
        return f"{where} (head {self.head}) = {format_number(self.value)}"

    def text(self) -> str:
        """The whole explanation as plain text."""
        return "\n".join([self.headline, *(s.text() for s in self.steps)])


def first_terms(label_of, values, limit):
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


def dot_step(title, lhs, rhs, result, limit):
    """One dot product term by term. ``lhs``/``rhs`` are (name, values); a name holds ``{t}``
    where the term's index goes (``"W_Q[{t}, 0]"``), or is plain (``"q"`` -> ``q[t]``)."""
    (left_name, left), (right_name, right) = lhs, rhs
    products = np.asarray(left, dtype=np.float64) * np.asarray(right, dtype=np.float64)

    def name(pattern, t):
        return pattern.format(t=t) if "{t}" in pattern else f"{pattern}[{t}]"

    def label(t):
        product = f"{format_number(left[t])}×{format_number(right[t])}"
        return f"{name(left_name, t)}·{name(right_name, t)} = {product}"

    shown, elided = first_terms(label, products, limit)
    return Step(title, shown, float(result), hidden_terms=elided)


def rotary_steps(name: str):
    """The builder of a rotated stage (``Q_rot``, ``K_rot``): cell (i, j) is one half of the
    pair (p, p + r/2) that RoPE turns by angle = position × frequency of the pair, r the
    turned dimensions (d_k, or its first part under a rotary fraction: the rest pass)."""

    def build(trace, head, i, j, limit):
        config = trace.config
        stem = name.removesuffix("_rot")
        source = f"{stem}_normed" if trace.has(f"{stem}_normed") else stem
        d_k, r = config.head_dim, config.rotary_dims
        x = trace.stage(source, head)[i]  # [d_k], before rotation
        label = trace.row_labels(name)[i]
        if j >= r:  # past the turned part: copied as it is
            return [
                Step(
                    f"dimension {j} does not turn: RoPE turns only dimensions 0–{r - 1} of "
                    f"{d_k} (rotary fraction {config.rotary_fraction:g})",
                    [(f"{source}[{j}]", float(x[j]))],
                    float(trace.stage(name, head)[i, j]),
                )
            ]
        half = r // 2
        pair = j % half
        lo, hi = pair, pair + half
        record = config.rope_scaling_record()
        length = config.rope_length(trace.n_queries, trace.n_keys)
        frequencies = inverse_frequencies(r, config.rope_theta, record, length)  # [r/2]
        freq = float(frequencies[pair])  # of this pair
        position = config.position_offset + i
        angle = position * freq
        factor = tables.attention_factor(record)  # yarn, longrope: cos and sin scaled
        cos, sin = float(np.cos(angle)) * factor, float(np.sin(angle)) * factor
        turn = Step(
            f"angle = position {position} × frequency {format_number(freq, 6)} of pair "
            f"({lo}, {hi}) (θ = {config.rope_theta:g}^(−{2 * pair}/{r}))",
            [("position", float(position)), ("frequency", freq)],
            angle,
            formula="angle = position × frequency",
        )
        trig = Step("cos and sin of the angle", [("cos(angle)", cos), ("sin(angle)", sin)])
        if factor != 1.0:
            trig = Step(
                f"cos and sin of the angle, times the {record.kind} attention factor "
                f"{format_number(factor)}",
                [("cos(angle) × factor", cos), ("sin(angle) × factor", sin)],
            )
        if j < half:  # the first of the pair: x_lo cos − x_hi sin
            formula = f"{name}[{label}, {j}] = {source}[{lo}] × cos − {source}[{hi}] × sin"
            terms = [(f"{source}[{lo}] × cos", float(x[lo]) * cos)]
            terms.append((f"−{source}[{hi}] × sin", -float(x[hi]) * sin))
        else:  # the second: x_hi cos + x_lo sin
            formula = f"{name}[{label}, {j}] = {source}[{hi}] × cos + {source}[{lo}] × sin"
            terms = [(f"{source}[{hi}] × cos", float(x[hi]) * cos)]
            terms.append((f"{source}[{lo}] × sin", float(x[lo]) * sin))
        mix = Step(
            f"rotate the pair ({format_number(float(x[lo]))}, {format_number(float(x[hi]))}) "
            f"of {source} row “{label}” by the angle",
            terms,
            float(trace.stage(name, head)[i, j]),
            formula=formula,
        )
        return [turn, trig, mix]

    return build
