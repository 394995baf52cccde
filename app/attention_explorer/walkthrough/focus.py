"""Choosing the query the walkthrough follows, and saying why.

The default is an *informative* query: one whose row the mask changes (some keys hidden, at
least two still visible) and whose weights are not near-uniform, so the mask and softmax
steps both have something to show; among those, the one that still sees the most keys.
The last token of a causal mask, which sees every key, is exactly the row that teaches
nothing about masking.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from attention_explorer.engine import Trace
from attention_explorer.walkthrough.markup import num, tok

#: Tokens a tokenizer adds around the text ([CLS], [SEP], <s>, </s>, <|endoftext|>, <bos>) and
#: chat / reserved tokens (<|begin_of_text|>, <|im_start|>, <|reserved_special_token_0|>).
SPECIAL_TOKEN = re.compile(r"^(\[[A-Za-z_]+\]|<\|?/?[A-Za-z0-9_]*\|?>)$")

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
    blocked: int = 0
    visible: int = 0
    lowest: float = 0.0
    highest: float = 0.0

    @property
    def spread(self) -> float:
        """How far apart the row's smallest and largest visible weights are."""
        return self.highest - self.lowest


_last_counts: tuple[np.ndarray, np.ndarray] | None = None


def _visible_keys(allowed: np.ndarray) -> np.ndarray:
    """Keys each query may see, ``[n]``; remembered for the engine's shared read-only mask,
    which edits of numbers leave alone (6 ms at n = 4096)."""
    global _last_counts
    if _last_counts is not None and _last_counts[0] is allowed:
        return _last_counts[1]
    counts = allowed.sum(axis=1)  # [n]
    if not allowed.flags.writeable:
        _last_counts = (allowed, counts)
    return counts


def _row_ranges(trace: Trace, head: int):
    """(visible keys, lowest, highest visible weight) of every query row: ``[n]`` each.

    A pass that made previews found each row's range while computing (no [n, m] reads)."""
    weights = trace.stage("weights", head)  # [n, m]: an array, or rows recomputed when read
    n, m = weights.shape
    allowed = trace["mask"] if trace.has("mask") else None  # [n, m]
    counts = _visible_keys(allowed) if allowed is not None else np.full(n, m)  # [n]
    preview = trace.preview("weights")
    if preview is not None and preview.row_low is not None:
        index = trace.head_index(head)
        lowest, highest = preview.row_low[index], preview.row_high[index]  # [n], [n]
    elif allowed is not None:  # per-row reductions: no Python loop over 4096 rows
        lowest = np.min(weights, axis=1, where=allowed, initial=np.inf)  # [n]
        highest = np.max(weights, axis=1, where=allowed, initial=-np.inf)  # [n]
    else:
        lowest, highest = weights.min(axis=1), weights.max(axis=1)  # [n], [n]
    return counts, np.asarray(lowest, np.float64), np.asarray(highest, np.float64)


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
    return focus.blocked > 0 and focus.visible >= 2 and focus.spread >= NEAR_UNIFORM


def is_content(token: str) -> bool:
    """True for a word or word piece; False for a special token ([CLS], [SEP], BOS, <s>…)
    and for punctuation alone, which the walkthrough never follows unless chosen."""
    token = token.strip()
    return not SPECIAL_TOKEN.match(token) and any(ch.isalnum() for ch in token)


def content_rows(tokens) -> np.ndarray:
    """``[n]`` bool: which query tokens are content tokens (see :func:`is_content`)."""
    return np.array([is_content(t) for t in tokens], dtype=bool)


def choose_focus(trace: Trace, head: int) -> Focus:
    """The informative query of ``head`` and the key it attends to most (see module doc);
    only content tokens are considered while there is one."""
    counts, lowest, highest = _row_ranges(trace, head)  # [n] each
    n, m = trace.n_queries, trace.n_keys
    usable = counts > 0  # [n]
    usable[list(trace.fully_masked_rows)] = False
    content = usable & content_rows(trace.tokens)  # [n]
    if content.any():
        usable = content
    if not usable.any():
        return Focus(n - 1, 0, "only")
    spread = highest - lowest  # [n]
    rows = np.arange(n)
    informative = usable & (counts < m) & (counts >= 2) & (spread >= NEAR_UNIFORM)
    if informative.any():  # most keys still visible, then the widest spread, then the first
        pick = np.flatnonzero(informative)
        row = int(pick[np.lexsort((-rows[pick], spread[pick], counts[pick]))[-1]])
        kind = "informative"
    else:  # the widest spread, then the last
        pick = np.flatnonzero(usable)
        row = int(pick[np.lexsort((rows[pick], spread[pick]))[-1]])
        kind = "uneven" if pick.size > 1 else "only"
    col = int(np.argmax(trace.stage("weights", head)[row]))
    count = int(counts[row])
    return Focus(row, col, kind, m - count, count, float(lowest[row]), float(highest[row]))


def why_text(trace: Trace, focus: Focus) -> str:
    """One sentence (HTML) on why the walkthrough follows this query."""
    name = tok(trace.tokens[focus.row])
    if focus.kind == "chosen":
        return f"We follow {name}, the query you selected."
    if focus.kind == "example":
        return f"We follow {name}, the query this example is about."
    reasons = (
        f"the mask hides {focus.blocked} of its {focus.blocked + focus.visible} keys, so masking "
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
