"""Colour maps and colour levels for the stage views.

Weights use the sequential map on the fixed range 0..1 (so heads and edits compare at a
glance); signed score stages use the diverging map, symmetric about 0 (0 is always the
neutral middle colour); every other stage spans its own finite min..max.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pyqtgraph as pg

#: Stages that hold signed scores and use the diverging map centred on 0.
DIVERGING_STAGES = ("scores", "scaled", "masked")
#: Stages whose values are probabilities-like weights in 0..1.
UNIT_STAGES = ("weights",)
#: Colour of a masked (-inf) cell: a neutral grey that no colour map uses for a value.
MASKED_RGBA = (105, 105, 105, 255)
#: Fallback when a preference names a map pyqtgraph does not have.
FALLBACK_SEQUENTIAL = "viridis"
FALLBACK_DIVERGING = "CET-D1"


@lru_cache(maxsize=32)
def colormap_by_name(name: str, fallback: str = FALLBACK_SEQUENTIAL) -> pg.ColorMap:
    """The pyqtgraph colour map called ``name``, or ``fallback`` when it does not exist."""
    try:
        return pg.colormap.get(name)
    except Exception:  # unknown name or missing data file: never break the view
        return pg.colormap.get(fallback)


def colormap_for(stage: str, prefs) -> pg.ColorMap:
    """The colour map of ``stage`` under the view preferences ``prefs``."""
    if stage in DIVERGING_STAGES:
        return colormap_by_name(prefs.diverging_colormap, FALLBACK_DIVERGING)
    return colormap_by_name(prefs.colormap, FALLBACK_SEQUENTIAL)


def levels_for(stage: str, data: np.ndarray) -> tuple[float, float]:
    """Colour levels (low, high) for ``data`` of ``stage``; always finite with low < high.

    ``data`` may hold -inf (masked cells); only finite values count.
    """
    if stage in UNIT_STAGES:
        return 0.0, 1.0
    finite = np.isfinite(data)  # [r, c]; no copy of the values (a 4096x4096 copy costs 30 ms)
    if not finite.any():
        return (-1.0, 1.0) if stage in DIVERGING_STAGES else (0.0, 1.0)
    if finite.all():
        low, high = float(data.min()), float(data.max())
    else:
        low = float(np.min(data, where=finite, initial=np.inf))
        high = float(np.max(data, where=finite, initial=-np.inf))
    if stage in DIVERGING_STAGES:
        bound = max(abs(low), abs(high))
        bound = bound if bound > 0 else 1.0
        return -bound, bound
    if high - low <= 1e-12 * max(1.0, abs(low)):
        pad = max(0.5, 1e-6 * abs(low))  # ±0.5 vanishes in rounding beyond about 1e15
        return low - pad, high + pad
    return low, high


def text_colors_for(values: np.ndarray, levels: tuple[float, float], cmap: pg.ColorMap) -> list:
    """Black or white per value, whichever reads better on the cell colour under ``cmap``."""
    low, high = levels
    position = np.clip((values - low) / (high - low), 0.0, 1.0)  # [k]
    rgba = np.atleast_2d(cmap.map(position, mode="float"))  # [k, 4]
    luminance = rgba[:, :3] @ np.array([0.2126, 0.7152, 0.0722])  # [k]
    return ["#000000" if y > 0.5 else "#ffffff" for y in luminance]
