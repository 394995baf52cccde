"""Choosing the query the walkthrough follows, and saying why.

The default is an *informative* query: one whose row the mask changes (some keys hidden, at
least two still visible) and whose weights are not near-uniform, so the mask and softmax
steps both have something to show; among those, the one that still sees the most keys.
The last token of a causal mask, which sees every key, is exactly the row that teaches
nothing about masking.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_explorer.engine import Trace
from attention_explorer.walkthrough.markup import num, tok

#: Weights whose largest and smallest (over the visible keys) differ by less are "near-uniform".
NEAR_UNIFORM = 0.05


@dataclass(frozen=True)
class Focus:
    """The query row and key column followed, and what made that row the choice.

    ``kind``: "chosen" (the learner picked it), "example" (the example names it), "kept"
    (the walkthrough chose it earlier and keeps it while numbers change), "informative" (the
    mask changes the row and its weights are uneven), "uneven" (no row fits both; the most
    uneven weights) or "only" (one query, or nothing better).
    """

    row: int
    col: int
    kind: str
    hidden: int = 0
    visible: int = 0
    lowest: float = 0.0
    highest: float = 0.0

    @property
    def spread(self) -> float:
        """How far apart the row's smallest and largest visible weights are."""
        return self.highest - self.lowest


def _rows(trace: Trace, head: int):
    """(row, hidden keys, visible keys, lowest, highest visible weight) per usable row."""
    weights = trace.stage("weights", head)  # [n, m]
    n, m = weights.shape
    if trace.has("mask"):  # per-row reductions: no Python loop over 4096 rows
        allowed = trace["mask"]  # [n, m]
        counts = allowed.sum(axis=1)  # [n]
        lowest = np.min(weights, axis=1, where=allowed, initial=np.inf)  # [n]
        highest = np.max(weights, axis=1, where=allowed, initial=-np.inf)  # [n]
    else:
        counts = np.full(n, m)  # [n]
        lowest, highest = weights.min(axis=1), weights.max(axis=1)  # [n], [n]
    skipped = set(trace.fully_masked_rows)
    for r in np.flatnonzero(counts).tolist():
        if r not in skipped:
            count = int(counts[r])
            yield r, m - count, count, float(lowest[r]), float(highest[r])


def describe_focus(trace: Trace, head: int, row: int, col: int, kind: str) -> Focus:
    """A Focus on ``row``/``col`` chosen for ``kind``'s reason, with that row's numbers now."""
    weights = trace.stage("weights", head)  # [n, m]
    n, m = weights.shape
    if not 0 <= row < n or row in trace.fully_masked_rows:
        return Focus(row, col, kind)
    visible = trace["mask"][row] if trace.has("mask") else np.ones(m, dtype=bool)  # [m]
    count = int(visible.sum())
    if count == 0:
        return Focus(row, col, kind)
    shown = weights[row][visible]  # [count]
    return Focus(row, col, kind, m - count, count, float(shown.min()), float(shown.max()))


def _informative(focus: Focus) -> bool:
    return focus.hidden > 0 and focus.visible >= 2 and focus.spread >= NEAR_UNIFORM


def choose_focus(trace: Trace, head: int) -> Focus:
    """The informative query of ``head`` and the key it attends to most (see module doc)."""
    rows = list(_rows(trace, head))
    if not rows:
        return Focus(trace.n_queries - 1, 0, "only")

    def spread(r):
        return r[4] - r[3]

    informative = [r for r in rows if r[1] > 0 and r[2] >= 2 and spread(r) >= NEAR_UNIFORM]
    if informative:
        best = max(informative, key=lambda r: (r[2], spread(r)))  # most keys still visible
        kind = "informative"
    else:
        best = max(rows, key=lambda r: (spread(r), r[0]))
        kind = "uneven" if len(rows) > 1 else "only"
    row = best[0]
    col = int(np.argmax(trace.stage("weights", head)[row]))
    return Focus(row, col, kind, *best[1:])


def why_text(trace: Trace, focus: Focus) -> str:
    """One sentence (HTML) on why the walkthrough follows this query."""
    name = tok(trace.tokens[focus.row])
    if focus.kind == "chosen":
        return f"We follow {name}, the query you selected."
    if focus.kind == "example":
        return f"We follow {name}, the query this example is about."
    reasons = (
        f"the mask hides {focus.hidden} of its {focus.hidden + focus.visible} keys, so masking "
        f"changes its row, and its weights are far from even (from {num(focus.lowest)} to "
        f"{num(focus.highest)})"
    )
    if focus.kind == "kept":
        if _informative(focus):
            return f"We keep following {name}: {reasons}."
        return f"We keep following {name}, the query the walkthrough started with."
    if focus.kind == "informative":
        return f"We follow {name}: {reasons}. Select another cell to follow another query."
    if focus.kind == "uneven":
        what = (
            "no query's row is both changed by the mask and uneven"
            if trace.has("mask")
            else "there is no mask"
        )
        return (
            f"We follow {name}: {what}, so this is the query whose weights differ most "
            f"(from {num(focus.lowest)} to {num(focus.highest)})."
        )
    return f"We follow {name}."
