"""Which parts of a heatmap a new DisplayFrame changes, so a view redraws only those.

pyqtgraph re-renders an ImageItem on every ``setImage`` and redraws an axis (its ticks and
labels laid out again) on every ``setTicks``, ``setLabel`` or range change, even when nothing
differs. After an edit most stages change their numbers but keep their shape, levels and
colour-bar ticks, so most of that work is skipped.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class ChangedParts(NamedTuple):
    """What differs between the frame drawn and the new one (True: set it again)."""

    image: bool  # the image, its levels or the cells it covers
    bar_levels: bool
    bar_ticks: bool
    bar_label: bool


def changed_parts(old, new) -> ChangedParts:
    """The parts of DisplayFrame ``new`` that differ from ``old`` (None: all of them)."""
    if old is None:
        return ChangedParts(True, True, True, True)
    image = (
        old.region != new.region
        or old.levels != new.levels
        or old.image.dtype != new.image.dtype
        or not np.array_equal(old.image, new.image)
    )
    return ChangedParts(
        image=image,
        bar_levels=old.levels != new.levels,
        bar_ticks=old.ticks != new.ticks,
        bar_label=old.scale_caption != new.scale_caption,
    )
