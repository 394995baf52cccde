"""The step-through walkthrough: one query followed through every stage, narrated from the trace.

:func:`steps_for` turns a :class:`~attention_explorer.engine.Trace` into a list of
:class:`WalkStep` (which stage view to highlight, which cells, and what to say). Every number
in the narration is read from the trace, either directly or through the engine's
:func:`~attention_explorer.engine.explain`, and printed with ``format_number``; nothing here
does arithmetic of its own, so the words can never disagree with the views. No Qt.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from attention_explorer.engine import Trace, explain
from attention_explorer.engine.explain import Step, format_number

Cells = tuple[tuple[int, int], ...]
#: Rows longer than this are shown with their first values and "… N more".
ROW_LIMIT = 8
#: Products shown when one number is worked out term by term.
TERM_LIMIT = 6
#: Keys listed in the worked softmax table.
SOFTMAX_KEYS = 10
#: Up to this many heads, each other head gets its own step; above it, one summary step.
PER_HEAD_STEPS_UP_TO = 4


@dataclass(frozen=True)
class WalkStep:
    """One stop of the walkthrough.

    ``stage`` is the stage view to highlight (None for a text-only step), ``head`` the head
    to show, ``cells`` the ``(row, col)`` cells of that stage involved (the focus cell first),
    ``text`` the narration as simple HTML. ``related`` names other stage views and their cells
    that take part (e.g. the query row of Q and the key row of K for one score).
    """

    key: str
    title: str
    stage: str | None
    head: int
    cells: Cells
    text: str
    related: tuple[tuple[str, Cells], ...] = ()

    def plain(self) -> str:
        """The narration without markup, for tests, the command line and screen readers."""
        text = re.sub(r"<br\s*/?>|</p>|</tr>|</li>", "\n", self.text)
        text = re.sub(r"</t[dh]>", " ", text)
        return html.unescape(re.sub(r"<[^>]+>", "", text))


# -- small formatting helpers (they print numbers, never compute them) ---------------------
def _n(x: float) -> str:
    return format_number(x)


def _tok(label: str) -> str:
    return f"“<b>{html.escape(str(label))}</b>”"


def _vec(values: Sequence[float] | np.ndarray, limit: int = ROW_LIMIT) -> str:
    values = list(np.asarray(values).ravel())
    shown = ", ".join(_n(v) for v in values[:limit])
    more = f", … {len(values) - limit} more" if len(values) > limit else ""
    return f"<tt>[{shown}{more}]</tt>"


def _render(step: Step) -> str:
    """One explain() step as HTML: title, formula, the terms, then the result."""
    lines = [html.escape(step.title)]
    if step.formula:
        lines.append(f"&nbsp;&nbsp;<tt>{html.escape(step.formula)}</tt>")
    for label, value in step.terms:
        lines.append(f"&nbsp;&nbsp;<tt>{html.escape(label)} = {_n(value)}</tt>")
    if step.hidden_terms:
        lines.append(f"&nbsp;&nbsp;<tt>… and {step.hidden_terms} more</tt>")
    if step.result is not None:
        lines.append(f"&nbsp;&nbsp;<tt>= <b>{_n(step.result)}</b></tt>")
    return "<br>".join(lines)


def _row_cells(row: int, width: int, first: int | None = None) -> Cells:
    cells = [(row, c) for c in range(width)]
    if first is not None and 0 <= first < width:
        cells.insert(0, cells.pop(first))
    return tuple(cells)


def _p(*parts: str) -> str:
    return "".join(f"<p>{part}</p>" for part in parts if part)


# -- focus ---------------------------------------------------------------------------------
def default_focus(trace: Trace, head: int) -> tuple[int, int]:
    """The last query that can see at least one key, and the key it attends to most."""
    n = trace.n_queries
    rows = [r for r in range(n - 1, -1, -1) if r not in trace.fully_masked_rows]
    row = rows[0] if rows else n - 1
    weights = trace.stage("weights", head)[row] if trace.has("weights") else None
    col = int(np.argmax(weights)) if weights is not None and weights.size else 0
    return row, col


def _resolve(trace: Trace, head, focus_row, focus_col) -> tuple[int, int, int]:
    head = head if head in trace.heads else trace.heads[0]
    row, col = default_focus(trace, head)
    if focus_row is not None and 0 <= focus_row < trace.n_queries:
        row = focus_row
        if focus_col is None and trace.has("weights"):
            col = int(np.argmax(trace.stage("weights", head)[row]))
    if focus_col is not None and 0 <= focus_col < trace.n_keys:
        col = focus_col
    return head, row, col


# -- the steps -----------------------------------------------------------------------------
def steps_for(
    trace: Trace,
    focus_row: int | None = None,
    focus_col: int | None = None,
    *,
    head: int | None = None,
    name: str = "",
    description: str = "",
    notes: Sequence[tuple[str, str]] = (),
) -> list[WalkStep]:
    """The walkthrough of ``trace``: query ``focus_row`` and key ``focus_col`` of ``head``.

    Defaults: the selected head is the first computed one; the focus is
    :func:`default_focus`. ``name``/``description``/``notes`` (from an example session) give
    an opening "About this example" step. Steps that do not apply are left out: embeddings in
    direct mode, concatenation and other heads with one head, W_O without an output projection.
    """
    if not trace.heads or not trace.has("weights"):
        return []
    h, i, j = _resolve(trace, head, focus_row, focus_col)
    ctx = _Context(trace, h, i, j)
    steps: list[WalkStep] = []
    if description or notes:
        steps.append(_about(ctx, name, description, notes))
    if trace.has("X"):
        steps.append(_embeddings(ctx))
    steps += [_query(ctx), _key(ctx), _value(ctx), _scores(ctx), _scale(ctx), _mask(ctx)]
    steps += [_weights(ctx), _weighted_sum(ctx)]
    if trace.config.heads > 1:
        steps += _other_heads(ctx)
        if trace.has("concat"):
            steps.append(_concat(ctx))
    if trace.has("output"):
        steps.append(_output(ctx))
    return steps


@dataclass
class _Context:
    trace: Trace
    head: int
    row: int
    col: int

    @property
    def q_tok(self) -> str:
        return _tok(self.trace.tokens[self.row])

    @property
    def k_tok(self) -> str:
        return _tok(self.trace.kv_tokens[self.col])

    def stage(self, name: str, head: int | None = None) -> np.ndarray:
        return self.trace.stage(name, self.head if head is None else head)

    def explain(self, stage: str, i: int, j: int, head: int | None = None, terms=TERM_LIMIT):
        return explain(self.trace, stage, self.head if head is None else head, i, j, terms)

    @property
    def direct(self) -> bool:
        return self.trace.config.mode == "direct"

    @property
    def head_words(self) -> str:
        return f" of head {self.head}" if self.trace.config.heads > 1 else ""


def _title_gap(title: str) -> str:
    """What goes between a note's title and its text: nothing, a space after a title that
    ends a sentence, else a colon."""
    if not title:
        return ""
    return " " if title.rstrip()[-1] in ".!?:" else ": "


def _about(ctx: _Context, name: str, description: str, notes) -> WalkStep:
    items = "".join(
        f"<li><b>{html.escape(t)}</b>{_title_gap(t)}{html.escape(x)}</li>" for t, x in notes
    )
    text = _p(html.escape(description))
    if items:
        text += f"<p>From the example's notes:</p><ul>{items}</ul>"
    text += _p(
        f"Press <b>Next</b> to follow the query {ctx.q_tok} through every stage. Edit any "
        "number at any time: the words and highlights follow the new values at once."
    )
    return WalkStep(
        "about", f"About this example: {name or 'this session'}", None, ctx.head, (), text
    )


def _embeddings(ctx: _Context) -> WalkStep:
    trace, i = ctx.trace, ctx.row
    X = trace.stage("X")
    config = trace.config
    intro = (
        f"Each token starts as a row of numbers, its embedding: X has one row per token and "
        f"d_model = {config.d_model} columns. We follow {ctx.q_tok} (row {i}) from here to the end."
    )
    if config.positional != "none" and trace.inputs is not None and trace.inputs.X is not None:
        sinusoidal = config.positional == "sinusoidal"
        kind = "sinusoidal (sine and cosine waves)" if sinusoidal else "learned"
        rows = (
            f"A {kind} position signal is added first, so the same word in another place "
            f"gets a different row. Typed row {_vec(trace.inputs.X[i])} plus its position "
            f"becomes {_vec(X[i])}."
        )
        title = "Embeddings + positions"
    else:
        rows = f"Its row: {_vec(X[i])}. (No positional encoding is added in this session.)"
        title = "Embeddings"
    cross = ""
    if config.attention == "cross":
        cross = (
            "This is cross-attention: queries come from these tokens, but keys and values come "
            f"from the second sequence X_kv ({', '.join(map(_tok, trace.kv_tokens))})."
        )
    return WalkStep(
        "embeddings", title, "X", ctx.head, _row_cells(i, X.shape[1]), _p(intro, rows, cross)
    )


def _qkv_text(ctx: _Context, name: str, row: int) -> str:
    vector = ctx.stage(name)[row]
    lower = name.lower()
    token = _tok(ctx.trace.row_labels(name)[row])
    line = f"{name}{ctx.head_words} for {token}: {lower} = {_vec(vector)}."
    if ctx.direct:
        return _p(line, "It is typed directly in this session, so there is nothing to work out.")
    worked = ctx.explain(name, row, 0).steps[0]
    return _p(line, f"Its first number, worked out:<br>{_render(worked)}")


def _query(ctx: _Context) -> WalkStep:
    i, Q = ctx.row, ctx.stage("Q")
    if ctx.direct:
        intro = (
            "This session gives Q, K and V directly (no embeddings). A query row says what a "
            "token is looking for."
        )
        title = "Queries Q (given directly)"
    else:
        intro = (
            "A query says what a token is looking for: its embedding row times W_Q. Each head "
            "has its own slice of W_Q."
        )
        title = "Queries: Q = X W_Q"
    return WalkStep(
        "Q", title, "Q", ctx.head, _row_cells(i, Q.shape[1]), _p(intro) + _qkv_text(ctx, "Q", i)
    )


def _key(ctx: _Context) -> WalkStep:
    j, K, config = ctx.col, ctx.stage("K"), ctx.trace.config
    intro = "A key says what a token offers to the queries that look at it."
    if not ctx.direct:
        intro += " Keys are embedding rows times W_K."
    if config.n_kv_heads < config.heads:
        group = config.heads // config.n_kv_heads
        intro += (
            f" Here {group} query heads share each key/value head (grouped-query attention): "
            f"head {ctx.head} uses key/value head {ctx.head // group}."
        )
    title = "Keys: K = X W_K" if not ctx.direct else "Keys K (given directly)"
    return WalkStep(
        "K", title, "K", ctx.head, _row_cells(j, K.shape[1]), _p(intro) + _qkv_text(ctx, "K", j)
    )


def _value(ctx: _Context) -> WalkStep:
    j, V = ctx.col, ctx.stage("V")
    intro = "A value is what a token hands over when a query attends to it."
    if not ctx.direct:
        intro += " Values are embedding rows times W_V."
    title = "Values: V = X W_V" if not ctx.direct else "Values V (given directly)"
    return WalkStep(
        "V", title, "V", ctx.head, _row_cells(j, V.shape[1]), _p(intro) + _qkv_text(ctx, "V", j)
    )


def _scores(ctx: _Context) -> WalkStep:
    i, j = ctx.row, ctx.col
    worked = ctx.explain("scores", i, j).steps[0]
    text = _p(
        f"How well does the query of {ctx.q_tok} match the key of {ctx.k_tok}? Multiply the two "
        "vectors number by number and add the products (a dot product):",
        _render(worked),
        f"Doing this for every key gives the row of scores of {ctx.q_tok}: "
        f"{_vec(ctx.stage('scores')[i])}.",
    )
    related = (
        ("Q", _row_cells(i, ctx.stage("Q").shape[1])),
        ("K", _row_cells(j, ctx.stage("K").shape[1])),
    )
    return WalkStep("scores", "Scores: q · k", "scores", ctx.head, ((i, j),), text, related)


def _scale(ctx: _Context) -> WalkStep:
    i, j, config = ctx.row, ctx.col, ctx.trace.config
    worked = ctx.explain("scaled", i, j).steps[-1]
    if config.scale == "sqrt_dk":
        title = "Scale by 1/√d_k"
        why = (
            f"Why: a dot product of {config.head_dim} numbers grows with their count; dividing by "
            "√d_k keeps the scores in a range where softmax still spreads attention."
        )
    elif config.scale == "none":
        title, why = (
            "Scale (switched off)",
            "Scaling is off here, so large d_k gives peaky weights.",
        )
    else:
        title, why = "Scale (custom factor)", "This session uses its own scale factor."
    text = _p(
        f"Every score is multiplied by the same factor. For {ctx.q_tok} and {ctx.k_tok}:",
        _render(worked),
        why,
        f"The scaled row of {ctx.q_tok}: {_vec(ctx.stage('scaled')[i])}.",
    )
    return WalkStep("scale", title, "scaled", ctx.head, ((i, j),), text)


_MASK_WORDS = {
    "causal": "a causal mask: each token may only look at itself and the tokens before it",
    "padding": "a padding mask: the padding keys are hidden from every query",
    "custom": "a custom mask: a table of which query may look at which key",
}


def _reason(ctx: _Context, row: int, col: int) -> str:
    """Why the mask hides key ``col`` from query ``row``, in the engine's words."""
    title = ctx.explain("masked", row, col).steps[-1].title
    return title.removeprefix("mask: ").removeprefix("hidden: ")


#: Hidden keys named one by one in the mask step; the rest are counted.
MAX_NAMED_KEYS = 12


def _mask(ctx: _Context) -> WalkStep:
    trace, i, j = ctx.trace, ctx.row, ctx.col
    kind = trace.config.mask
    masked = ctx.stage("masked")
    if kind == "none" or not trace.has("mask"):
        text = _p(
            "There is no mask in this session: every query may look at every key, so the masked "
            "scores are the scaled scores unchanged."
        )
        return WalkStep("mask", "Mask: none", "masked", ctx.head, ((i, j),), text)
    allowed = trace.stage("mask")
    hidden = [int(c) for c in np.flatnonzero(~allowed[i])]
    named = hidden[:MAX_NAMED_KEYS]  # a causal row of 4096 keys is not read token by token
    parts = [
        f"This session uses {_MASK_WORDS.get(kind, kind)}. A hidden key's score becomes "
        "-inf, which the next step turns into a weight of exactly 0."
    ]
    cells: list[tuple[int, int]] = [(i, j)] + [(i, c) for c in named if c != j]
    if hidden:
        names = ", ".join(_tok(trace.kv_tokens[c]) for c in named)
        if len(hidden) > len(named):
            names += f" and {len(hidden) - len(named)} more"
        reason = _reason(ctx, i, hidden[0])
        parts.append(f"For {ctx.q_tok} it hides {names} ({html.escape(reason)}).")
    else:
        parts.append(f"{ctx.q_tok} may look at every key: nothing is hidden in its row.")
        rows_hiding = np.flatnonzero(~allowed.all(axis=1))  # queries with a hidden key
        if rows_hiding.size:
            r = int(rows_hiding[0])
            c = int(np.flatnonzero(~allowed[r])[0])
            reason = _reason(ctx, r, c)
            parts.append(
                f"Elsewhere it does, e.g. query {_tok(trace.tokens[r])} and key "
                f"{_tok(trace.kv_tokens[c])}: {html.escape(reason)}."
            )
            cells.append((r, c))
    parts.append(f"The masked row of {ctx.q_tok}: {_vec(masked[i])}.")
    if trace.fully_masked_rows:
        names = ", ".join(_tok(trace.tokens[r]) for r in trace.fully_masked_rows)
        parts.append(
            f"Every key is hidden from {names}: such a row gets weights of all 0 "
            "(not 0/0), so its output is all zeros."
        )
    return WalkStep("mask", f"Mask: {kind}", "masked", ctx.head, tuple(cells), _p(*parts))


def _weights(ctx: _Context) -> WalkStep:
    trace, i, j = ctx.trace, ctx.row, ctx.col
    W = ctx.stage("weights")
    cells = _row_cells(i, W.shape[1], first=j)
    kind = trace.config.normalizer
    if i in trace.fully_masked_rows:
        note = ctx.explain("weights", i, j).steps[0].title
        text = _p(
            f"Every key is hidden from {ctx.q_tok}, so there is nothing to share out: "
            f"{html.escape(note)}. Its weight row is {_vec(W[i])}, and its output will be "
            "all zeros."
        )
        return WalkStep("weights", "Weights: a fully masked row", "weights", ctx.head, cells, text)
    if kind != "softmax":
        steps = ctx.explain("weights", i, j).steps
        what = {
            "sparsemax": "Sparsemax is like softmax but gives exact zeros to low scores.",
            "sigmoid": "Sigmoid squashes each score on its own: the row need not add up to 1.",
        }.get(kind, "")
        text = _p(
            what, *(_render(s) for s in steps), f"The weight row of {ctx.q_tok}: {_vec(W[i])}."
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


def _softmax_text(ctx: _Context) -> str:
    trace, i, j = ctx.trace, ctx.row, ctx.col
    m = trace.n_keys
    full = ctx.explain("weights", i, j, terms=m).steps  # max, exps, sum, divide
    row_max, exps, total = full[0].result, full[1].terms, full[2].result
    rows = []
    for c in _softmax_keys(m, j):
        divide = ctx.explain("weights", i, c, terms=0).steps[3]
        label, value = exps[c]
        mark = " style='background-color:#fff3b0; color:#000000'" if c == j else ""
        rows.append(
            f"<tr{mark}><td>{html.escape(trace.kv_tokens[c])}</td>"
            f"<td><tt>{html.escape(label)} = {_n(value)}</tt></td>"
            f"<td><tt>{_n(value)} / {_n(total)} = <b>{_n(divide.result)}</b></tt></td></tr>"
        )
    more = f"<p>… and {m - len(rows)} more keys.</p>" if m > len(rows) else ""
    table = (
        "<table cellspacing='0' cellpadding='3' border='1'>"
        "<tr><th>key</th><th>2. exp(score − max)</th><th>4. ÷ sum = weight</th></tr>"
        f"{''.join(rows)}</table>{more}"
    )
    return (
        _p(
            f"Softmax turns the row of {ctx.q_tok} into weights that are positive and add up to 1.",
            f"1. Find the largest score in the row: <b>{_n(row_max)}</b>.",
            "2. Subtract it from every score and exponentiate (the largest gives exp(0) = 1; a "
            "hidden key's -inf gives 0). Subtracting first keeps exp() from overflowing.",
            f"3. Add them all up: sum = <b>{_n(total)}</b>.",
            "4. Divide each by the sum:",
        )
        + table
        + _p(
            f"{ctx.q_tok} attends to {ctx.k_tok} with weight "
            f"<b>{_n(ctx.stage('weights')[i, j])}</b>."
        )
    )


def _weighted_sum(ctx: _Context) -> WalkStep:
    i = ctx.row
    out = ctx.stage("head_outputs")
    worked = ctx.explain("head_outputs", i, 0).steps[0]
    parts = [
        f"Now {ctx.q_tok} collects what it attended to: every value row, multiplied by its "
        "weight, all added up. The first number:",
        _render(worked),
        f"The whole output{ctx.head_words} for {ctx.q_tok}: {_vec(out[i])}.",
    ]
    if i in ctx.trace.fully_masked_rows:
        parts.insert(
            0,
            f"{ctx.q_tok} may look at no key, so all its weights are 0: every product below is 0 "
            "and its output is all zeros.",
        )
    related = (
        ("weights", _row_cells(i, ctx.trace.n_keys)),
        ("V", tuple((r, 0) for r in range(ctx.trace.n_keys))),
    )
    return WalkStep(
        "weighted_sum",
        "Weighted sum of the values",
        "head_outputs",
        ctx.head,
        _row_cells(i, out.shape[1]),
        _p(*parts),
        related,
    )


def _top(ctx: _Context, head: int) -> tuple[int, float]:
    row = ctx.stage("weights", head)[ctx.row]
    best = int(np.argmax(row))
    return best, float(row[best])


def _compare(ctx: _Context, k: int, best: int, weight: float, mine: int, mine_w: float) -> str:
    """One sentence: where head ``k`` looks most, next to where the followed head looked."""
    keys = ctx.trace.kv_tokens
    if best == mine:
        return (
            f"Head {k} also looks most at {_tok(keys[best])} ({_n(weight)}), as head "
            f"{ctx.head} did ({_n(mine_w)})."
        )
    return (
        f"Head {k} looks most at {_tok(keys[best])} ({_n(weight)}), while head {ctx.head} "
        f"looked most at {_tok(keys[mine])} ({_n(mine_w)})."
    )


def _other_heads(ctx: _Context) -> list[WalkStep]:
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
            text = _p(
                f"Head {k} runs the same steps with its own {source}, so it can look elsewhere. "
                f"Its weights for {ctx.q_tok}: {_vec(ctx.stage('weights', k)[i])}.",
                _compare(ctx, k, best, weight, mine, mine_w),
                f"Head {k}'s output for {ctx.q_tok}: {_vec(ctx.stage('head_outputs', k)[i])}.",
            )
            steps.append(
                WalkStep(
                    f"head_{k}",
                    f"Head {k}",
                    "weights",
                    k,
                    _row_cells(i, trace.n_keys, first=best),
                    text,
                )
            )
        return steps
    rows = "".join(
        f"<tr><td>{k}</td><td>{html.escape(trace.kv_tokens[_top(ctx, k)[0]])}</td>"
        f"<td><tt>{_n(_top(ctx, k)[1])}</tt></td></tr>"
        for k in trace.heads
    )
    text = _p(
        f"Every head runs the same steps with its own {source}. Where each head's query for "
        f"{ctx.q_tok} looks most:"
    ) + (
        "<table cellspacing='0' cellpadding='3' border='1'><tr><th>head</th><th>top key</th>"
        f"<th>weight</th></tr>{rows}</table>"
    )
    return [
        WalkStep(
            "heads",
            "Every head",
            "weights",
            ctx.head,
            _row_cells(i, trace.n_keys, first=mine),
            text,
        )
    ]


def _concat(ctx: _Context) -> WalkStep:
    trace, i = ctx.trace, ctx.row
    concat = trace.stage("concat")
    dv, heads = trace.config.value_dim, trace.config.heads
    pieces = " | ".join(
        f"head {k} {_vec(concat[i, k * dv : (k + 1) * dv], 4)}" for k in range(heads)[:ROW_LIMIT]
    )
    example = ctx.explain("concat", i, dv if heads > 1 else 0).steps[0]
    text = _p(
        f"The {heads} head outputs for {ctx.q_tok} are put side by side into one row of "
        f"{concat.shape[1]} numbers:",
        pieces + (" | …" if heads > ROW_LIMIT else ""),
        f"For example: {html.escape(example.title)} = {_n(example.result)}.",
    )
    return WalkStep(
        "concat", "Concatenate the heads", "concat", ctx.head, _row_cells(i, concat.shape[1]), text
    )


def _output(ctx: _Context) -> WalkStep:
    trace, i = ctx.trace, ctx.row
    out = trace.stage("output")
    worked = ctx.explain("output", i, 0).steps[0]
    one = ""
    if trace.config.heads == 1:
        one = " With one head the “concatenation” is simply that head's output."
    text = _p(
        f"Last, W_O mixes the heads' numbers into {out.shape[1]} output numbers per token.{one} "
        f"The first number for {ctx.q_tok}:",
        _render(worked),
        f"The output row of {ctx.q_tok}: {_vec(out[i])}. This is what the layer hands on.",
    )
    return WalkStep(
        "output", "Output projection: W_O", "output", ctx.head, _row_cells(i, out.shape[1]), text
    )
