"""The text ``attention-explorer compute`` prints: bounded in size whatever the session.

At most :data:`MAX_CELLS` rows and columns per head and :data:`MAX_HEADS` heads are shown,
and a line says what was left out, so 2,000 tokens print a screenful, not 40 MB. Token names
are written with control characters escaped, so a name never drives the terminal.
"""

from __future__ import annotations

import numpy as np

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


def summary(trace: Trace, name: str) -> str:
    """The whole printout: one header line, notes, each shown head's weights, output row sums."""
    config = trace.config
    lines = [
        f"{plain(name)}: {trace.n_queries} queries x {trace.n_keys} keys, "
        f"{config.heads} head(s), d_k {config.head_dim}, mask {config.mask}, "
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
    if trace.has("output"):
        out = trace["output"]  # [n, d_out]
        sums = np.sum(out[:MAX_CELLS], axis=1)  # [min(n, 16)]
        more = f" (first {MAX_CELLS} of {out.shape[0]})" if out.shape[0] > MAX_CELLS else ""
        lines.append(
            f"\noutput {out.shape[0]}x{out.shape[1]}: row sums{more} "
            f"{[format_number(x) for x in sums]}"
        )
    return "\n".join(lines)
