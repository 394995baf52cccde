"""What an edit changed in a matrix editor's slice: the cells to tell the table about.

A cell edit replaces the whole session input array, and every editor hears of it. Telling
a table that all of its cells changed makes it ask its model for every visible cell in every
role and repaint the whole table before the new trace arrives; this finds the few that did.
"""

from __future__ import annotations

import numpy as np


def changed_box(old: np.ndarray | None, new: np.ndarray) -> tuple[int, int, int, int] | None:
    """(first row, last row, first column, last column) of the smallest box holding every
    cell where ``new [r, c]`` differs from ``old [r, c]``; None when none differs.

    A missing ``old`` or one of another shape counts as every cell changed.
    """
    rows, cols = new.shape
    if old is None or old.shape != new.shape:
        return (0, rows - 1, 0, cols - 1) if rows and cols else None
    differs = old != new  # [r, c]
    changed_rows = np.flatnonzero(differs.any(axis=1))
    if changed_rows.size == 0:
        return None
    changed_cols = np.flatnonzero(differs.any(axis=0))
    return (
        int(changed_rows[0]),
        int(changed_rows[-1]),
        int(changed_cols[0]),
        int(changed_cols[-1]),
    )


#: How far past the middle half of the values the tints still reach, in interquartile ranges.
TINT_FENCE = 3.0
#: The quartiles of larger arrays are read from an even sample of this many values.
QUARTILE_SAMPLE = 16384


def value_range(array: np.ndarray | None) -> tuple[float, float] | None:
    """(lowest, highest) of the scale the editor's tints are drawn on (None when empty or
    unset): the values' range, without the outliers past ``TINT_FENCE`` interquartile ranges
    of the middle half. One cell typed far out (a 5 among weights of 0.05) then shows at the
    end of the scale while the other cells keep their colours."""
    if array is None or np.size(array) == 0:
        return None
    values = np.asarray(array, dtype=np.float64).ravel()  # [size]
    low, high = float(np.min(values)), float(np.max(values))
    sample = values[:: max(1, values.size // QUARTILE_SAMPLE)]  # [<= 2 * QUARTILE_SAMPLE]
    q1, q3 = (float(q) for q in np.percentile(sample, [25.0, 75.0]))
    spread = TINT_FENCE * (q3 - q1)
    fenced = max(low, q1 - spread), min(high, q3 + spread)
    return fenced if fenced[1] > fenced[0] else (low, high)
