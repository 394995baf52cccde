"""The frames of the compare view: one stage of one head as the original, the edited and
their difference (edited − original), each a :class:`~attention_explorer.display.DisplayFrame`
built by the display model, so the view and a picture of it agree.

The original and the edited frame come from :func:`~attention_explorer.display.build_frame`
and share their colour levels (so a colour means the same number in both). The difference
is a signed array drawn by :func:`attention_explorer.display.arrays.difference_frame`
(symmetric levels about 0, cells masked on either side hidden). Qt-free: no drawing here.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from attention_explorer.core.stages import stage
from attention_explorer.display import DisplayFrame, build_frame, levels_for
from attention_explorer.display.arrays import difference_frame as array_difference
from attention_explorer.display.frame import stage_heading
from attention_explorer.display.levels import colorbar_ticks
from attention_explorer.display.shrink import DISPLAY_LIMIT

#: Above this many cells a compare view does not read the full stage (it would take seconds).
MAX_COMPARE_CELLS = 2048 * 2048


def stage_values(trace, name: str, head: int | None) -> np.ndarray:
    """Stage ``name`` of ``head`` at full resolution ``[rows, cols]`` (float64)."""
    entry = stage(name)
    return np.asarray(trace.stage(name, head if entry.per_head else None), dtype=np.float64)


def shared_levels(name: str, first: DisplayFrame, second: DisplayFrame, values) -> DisplayFrame:
    """``second`` on the levels that cover both frames' stages (``values``: the two full
    arrays); fixed-level stages (weights) keep theirs."""
    if stage(name).fixed_levels is not None or first.scale_caption or second.scale_caption:
        return second
    levels = levels_for(name, np.concatenate([np.ravel(v) for v in values]))
    return replace(second, levels=levels, ticks=colorbar_ticks(levels))


def side_frames(original, edited, name: str, head: int, scale: str = "linear"):
    """(original frame, edited frame) of stage ``name``, head ``head``, on shared levels."""
    before = build_frame(original, name, head, scale=scale)
    after = build_frame(edited, name, head, scale=scale)
    values = (stage_values(original, name, head), stage_values(edited, name, head))
    return shared_levels(name, after, before, values), shared_levels(name, before, after, values)


def difference_frame(before, after, name: str, head: int, limit: int = DISPLAY_LIMIT):
    """The frame of ``after − before`` (the edited trace against the original one) for stage
    ``name`` and ``head`` (the display model's signed array frame); None (with the reason)
    when the two have different shapes (tokens added, say)."""
    old, new = stage_values(before, name, head), stage_values(after, name, head)
    if old.shape != new.shape:
        return None, (
            f"the shapes differ (original {old.shape[0]}×{old.shape[1]}, edited "
            f"{new.shape[0]}×{new.shape[1]}): there is no cell-by-cell difference"
        )
    entry = stage(name)
    shown_head = head if entry.per_head else None
    frame = array_difference(
        old,
        new,
        f"edited − original: {stage_heading(after, name, shown_head)}",
        after.row_labels(name),
        after.col_labels(name),
        decimals=entry.decimals,
        limit=limit,
    )
    return replace(frame, stage=name, head=shown_head), ""  # the stage names its axes


def too_large(trace, name: str, head: int) -> bool:
    """True when stage ``name`` is too large to compare cell by cell here."""
    rows, cols = trace.stage(name, head if stage(name).per_head else None).shape
    return rows * cols > MAX_COMPARE_CELLS
