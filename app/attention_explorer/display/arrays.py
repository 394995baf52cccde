"""Any array as a view draws it: a difference map (edited − original) or a stage alike.

:func:`frame_for_array` builds the same :class:`~attention_explorer.display.frame.DisplayFrame`
as :func:`~attention_explorer.display.frame.build_frame`, from a matrix and its value kind
instead of a stage name, so the window's views and every export draw comparisons through the
one path: the kind decides the levels ("signed" is symmetric about 0, "unit" is 0..1,
"free" spans the finite range), long sides shrink by the kind's rule, masked (−∞) cells are
drawn grey, and cell texts come from the one number formatter.
"""

from __future__ import annotations

import numpy as np

from attention_explorer.core.numbers import DEFAULT_DECIMALS
from attention_explorer.display.cells import texts_of
from attention_explorer.display.frame import MAX_TEXT_CELLS, DisplayFrame, shrink_note
from attention_explorer.display.levels import colorbar_ticks, fixed_levels, levels_of_kind
from attention_explorer.display.shrink import DISPLAY_LIMIT, shrink


def shrink_rule(kind: str) -> str:
    """How a long side of an array of ``kind`` shrinks: "max" keeps a single peak of unit
    values (weights) visible; every other kind averages blocks (as the catalogue's stages)."""
    fixed_levels(kind)  # ValueError naming an unknown kind
    return "max" if kind == "unit" else "mean"


def _checked(values, row_labels, col_labels) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)  # [rows, cols]
    if array.ndim != 2 or 0 in array.shape:
        raise ValueError(f"a map needs a non-empty 2-D array, got shape {array.shape}")
    rows, cols = array.shape
    if len(row_labels) != rows or len(col_labels) != cols:
        raise ValueError(
            f"{len(row_labels)} row and {len(col_labels)} column labels for a {rows}×{cols} array"
        )
    # A NaN (−∞ minus −∞: masked on both sides) is drawn as a masked cell, never as NaN.
    return np.where(np.isnan(array), -np.inf, array)


def frame_for_array(
    values,
    kind: str,
    title: str,
    row_labels,
    col_labels,
    *,
    decimals: int = DEFAULT_DECIMALS,
    limit: int = DISPLAY_LIMIT,
) -> DisplayFrame:
    """The frame of any ``values [rows, cols]`` of value ``kind`` ("signed", "unit" or
    "free"), titled ``title`` (plus how it was shrunk), labelled by ``row_labels`` and
    ``col_labels``. ValueError names a bad kind, shape or label count.
    """
    row_labels, col_labels = tuple(map(str, row_labels)), tuple(map(str, col_labels))
    array = _checked(values, row_labels, col_labels)  # [rows, cols], NaN -> −∞
    rows, cols = array.shape
    shrunk = shrink(array, shrink_rule(kind), limit)
    levels = levels_of_kind(kind, array)
    small = rows <= MAX_TEXT_CELLS and cols <= MAX_TEXT_CELLS
    note = shrink_note((rows, cols), shrunk)
    return DisplayFrame(
        stage="",
        head=None,
        heading=" · ".join(p for p in (title, note) if p),
        shape=(rows, cols),
        region=(0, rows, 0, cols),
        image=shrunk.image,
        masked_cells=shrunk.masked_cells,
        block=shrunk.block,
        levels=levels,
        ticks=colorbar_ticks(levels),
        scale_caption="",
        row_labels=row_labels,
        col_labels=col_labels,
        texts=texts_of(array, int(decimals)) if small and not shrunk.shrunk else [],
        decimals=int(decimals),
    )


def difference_frame(before, after, title: str, row_labels, col_labels, **options):
    """The frame of ``after − before`` (a signed map: 0 is the neutral middle), e.g. an edited
    stage (``after``) against the original (``before``); cells masked on either side stay
    masked."""
    before, after = np.asarray(before, dtype=np.float64), np.asarray(after, dtype=np.float64)
    if after.shape != before.shape:
        raise ValueError(f"cannot subtract a {before.shape} array from a {after.shape} one")
    with np.errstate(invalid="ignore"):
        delta = np.where(np.isfinite(after) & np.isfinite(before), after - before, -np.inf)
    return frame_for_array(delta, "signed", title, row_labels, col_labels, **options)
