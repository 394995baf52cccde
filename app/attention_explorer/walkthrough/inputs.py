"""The first steps: the example's notes, the embeddings, and the Q, K, V rows."""

from __future__ import annotations

import html

from attention_explorer.engine.explain import projected_input
from attention_explorer.walkthrough.context import Context
from attention_explorer.walkthrough.markup import paragraphs, render, row_cells, tok, vec
from attention_explorer.walkthrough.step import WalkStep


def _title_gap(title: str) -> str:
    """What goes between a note's title and its text: nothing, a space after a title that
    ends a sentence, else a colon."""
    if not title:
        return ""
    return " " if title.rstrip()[-1] in ".!?:" else ": "


def about(ctx: Context, name: str, description: str, notes) -> WalkStep:
    """The example's description and notes, and which query the walkthrough follows."""
    items = "".join(
        f"<li><b>{html.escape(t)}</b>{_title_gap(t)}{html.escape(x)}</li>" for t, x in notes
    )
    sizes = ctx.trace.config.summary(ctx.trace.n_queries)  # the settings now, never stale
    text = paragraphs(html.escape(description), f"This session: {html.escape(sizes)}.")
    if items:
        text += f"<p>From the example's notes:</p><ul>{items}</ul>"
    text += paragraphs(
        ctx.why_once(),
        f"Press <b>Next</b> to follow the query {ctx.q_tok} through every stage. Edit any "
        "number at any time: the words and highlights follow the new values at once.",
    )
    return WalkStep(
        "about", f"About this example: {name or 'this session'}", None, ctx.head, (), text
    )


def embeddings(ctx: Context) -> WalkStep:
    """X (and the positions added to it): where every token starts."""
    trace, i = ctx.trace, ctx.row
    config = trace.config
    projected = projected_input(trace, "Q")  # [n, d_model], X + P when positions are on
    intro = (
        f"Each token starts as a row of numbers, its embedding: X has one row per token and "
        f"d_model = {config.d_model} columns. We follow {ctx.q_tok} from here to the end."
    )
    typed = trace.inputs.X if trace.inputs is not None else None
    if config.added_positions and typed is not None:
        kind = (
            "sinusoidal (sine and cosine waves)" if config.positional == "sinusoidal" else "learned"
        )
        rows = (
            f"A {kind} position signal P is added first, so the same word in another place "
            f"gets a different row. Typed row {vec(typed[i])} plus its position becomes "
            f"{vec(projected[i])}: that is the row W_Q, W_K and W_V project."
        )
        title = "Embeddings + positions"
    else:
        none = "No positional encoding is added in this session"
        if config.rotary:
            none = "RoPE adds nothing to X: q and k are turned by position after the projections"
        rows = f"Its row: {vec(projected[i])}. ({none}.)"
        title = "Embeddings"
    rows += " " + ctx.why_once()
    cross = ""
    if config.attention == "cross":
        cross = (
            "This is cross-attention: queries come from these tokens, but keys and values come "
            f"from the second sequence X_kv ({', '.join(map(tok, trace.kv_tokens))})."
        )
    cells = row_cells(i, projected.shape[1])
    return WalkStep(
        "embeddings", title, "X", ctx.head, cells, paragraphs(intro, rows, cross), editor="X"
    )


def _qkv_text(ctx: Context, name: str, row: int) -> str:
    vector = ctx.stage(name)[row]
    token = tok(ctx.trace.row_labels(name)[row])
    line = f"{name}{ctx.head_words} for {token}: {name.lower()} = {vec(vector)}."
    if ctx.direct:
        return paragraphs(
            line, "It is typed directly in this session, so there is nothing to work out."
        )
    worked = ctx.explain(name, row, 0).steps[0]
    return paragraphs(line, f"Its first number, worked out:<br>{render(worked)}")


def _pair(ctx: Context) -> str:
    """Names the query and key the views frame, so every highlighted cell is in the words."""
    return f"The views mark the pair we follow: query {ctx.q_tok} and key {ctx.k_tok}."


def _editor(ctx: Context, name: str) -> str:
    return name if ctx.direct else f"W_{name}"


def query(ctx: Context) -> WalkStep:
    """The followed token's query row."""
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
    text = paragraphs(intro, ctx.why_once()) + _qkv_text(ctx, "Q", i) + paragraphs(_pair(ctx))
    return WalkStep(
        "Q", title, "Q", ctx.head, row_cells(i, Q.shape[1]), text, editor=_editor(ctx, "Q")
    )


def key(ctx: Context) -> WalkStep:
    """The followed key's key row."""
    j, K, config = ctx.col, ctx.stage("K"), ctx.trace.config
    intro = "A key says what a token offers to the queries that look at it."
    if not ctx.direct:
        intro += " Keys are embedding rows times W_K."
    if config.grouped:
        intro += (
            f" Here {config.kv_group} query heads share each key/value head (grouped-query "
            f"attention): head {ctx.head} uses key/value head {config.kv_head_of(ctx.head)}."
        )
    title = "Keys: K = X W_K" if not ctx.direct else "Keys K (given directly)"
    text = paragraphs(intro) + _qkv_text(ctx, "K", j) + paragraphs(_pair(ctx))
    return WalkStep(
        "K", title, "K", ctx.head, row_cells(j, K.shape[1]), text, editor=_editor(ctx, "K")
    )


def value(ctx: Context) -> WalkStep:
    """The followed key's value row."""
    j, V = ctx.col, ctx.stage("V")
    intro = "A value is what a token hands over when a query attends to it."
    if not ctx.direct:
        intro += " Values are embedding rows times W_V."
    title = "Values: V = X W_V" if not ctx.direct else "Values V (given directly)"
    text = paragraphs(intro) + _qkv_text(ctx, "V", j) + paragraphs(_pair(ctx))
    return WalkStep(
        "V", title, "V", ctx.head, row_cells(j, V.shape[1]), text, editor=_editor(ctx, "V")
    )
