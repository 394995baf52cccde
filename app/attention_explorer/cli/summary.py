"""The text ``attention-explorer compute`` prints: bounded in size whatever the session.

At most :data:`MAX_CELLS` rows and columns per head and :data:`MAX_HEADS` heads are shown,
and a line says what was left out, so 2,000 tokens print a screenful, not 40 MB. Token names
are written with control characters escaped, so a name never drives the terminal.
"""

from __future__ import annotations

import numpy as np

from attention_explorer.cli.terminal_text import counted
from attention_explorer.core.numbers import format_number
from attention_explorer.engine import Trace

#: Rows and columns shown per head (the first ones).
MAX_CELLS = 16
#: Heads shown (the first ones).
MAX_HEADS = 8
#: Width of one number column (and of a shortened key name).
COLUMN = 9


def plain(name: str) -> str:
    """``name`` with control and other unprintable characters escaped (``\\x1b``, ``\\n``)."""
    if name.isprintable():
        return name
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in name)


def _left_out(shown: int, total: int, what: str) -> str | None:
    return None if shown >= total else f"{total - shown} more {what} not shown"


def weights_table(trace: Trace, head: int) -> list[str]:
    """One head's weights: the first rows and columns, and what was left out."""
    weights = trace.stage("weights", head)  # [n, m]
    rows, cols = min(trace.n_queries, MAX_CELLS), min(trace.n_keys, MAX_CELLS)
    queries = [plain(t) for t in trace.tokens[:rows]]
    keys = [plain(t) for t in trace.kv_tokens[:cols]]
    width = min(max(len(t) for t in queries) + 1, 2 * COLUMN)
    lines = [f"\nweights, head {head} (rows: queries, columns: keys)"]
    lines.append(" " * width + " ".join(f"{k:>{COLUMN}.{COLUMN}}" for k in keys))
    for label, row in zip(queries, weights[:rows, :cols]):
        cells = " ".join(f"{format_number(x):>{COLUMN}}" for x in row)
        lines.append(f"{label:<{width}.{width}}{cells}")
    gaps = [_left_out(rows, trace.n_queries, "queries"), _left_out(cols, trace.n_keys, "keys")]
    gaps = [g for g in gaps if g]
    if gaps:
        lines.append(f"({', '.join(gaps)}; compute --out FILE.npz writes every number)")
    return lines


def row_sums_line(trace: Trace) -> str:
    """What the weights' rows add up to, in words: softmax and sparsemax rows add up to 1
    (checked on every row of every computed head, the largest difference given); sigmoid
    weights need not, so their range of row sums is given."""
    sums = np.concatenate([np.sum(trace.stage("weights", h), axis=1) for h in trace.heads])
    # sums: [heads * n], a fully masked row sums to 0 by design
    masked = np.zeros(trace.n_queries, dtype=bool)  # [n]
    masked[list(trace.fully_masked_rows)] = True
    kept = sums[~np.tile(masked, len(trace.heads))]
    if trace.config.normalizer == "sigmoid":
        if not kept.size:
            return "every row is fully masked: its weights are 0"
        low, high = format_number(float(kept.min())), format_number(float(kept.max()))
        return f"sigmoid weights need not add up to 1: row sums from {low} to {high}"
    rows = f"{counted(kept.size, 'row')} of {counted(len(trace.heads), 'head')}"
    gap = float(np.max(np.abs(kept - 1.0))) if kept.size else 0.0
    text = f"each query's weights add up to 1 (largest difference from 1 over {rows}: {gap:.1e})"
    if masked.any():
        text += "; fully masked rows are 0"
    return text


def summary(trace: Trace, name: str) -> str:
    """The whole printout: one header line, notes, each shown head's weights, what the weights'
    rows add up to, and the output's size."""
    config = trace.config
    lines = [
        f"{plain(name)}: {trace.n_queries} queries x {trace.n_keys} keys, "
        f"{counted(config.heads, 'head')}, d_k {config.head_dim}, mask {config.mask}, "
        f"{config.normalizer}, {trace.backend.label} {trace.dtype}",
    ]
    lines += [f"note: {note}" for note in trace.notes]
    if trace.fully_masked_rows:
        shown = list(trace.fully_masked_rows[:MAX_CELLS])
        more = len(trace.fully_masked_rows) - len(shown)
        lines.append(
            f"fully masked rows (weights 0): {shown}" + (f" and {more} more" if more else "")
        )
    heads = trace.heads[:MAX_HEADS]
    for head in heads:
        lines += weights_table(trace, head)
    if len(trace.heads) > len(heads):
        lines.append(f"\n({len(trace.heads) - len(heads)} more heads not shown)")
    if trace.has("weights"):
        lines.append("\n" + row_sums_line(trace))
    if trace.has("output"):
        out = trace["output"]  # [n, d_out]
        lines.append(
            f"output: {counted(out.shape[0], 'row')} (one per query) of "
            f"{counted(out.shape[1], 'number')} each; compute --out FILE.npz writes them all"
        )
    return "\n".join(lines)
