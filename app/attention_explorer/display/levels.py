"""Colour levels from the catalogue's value kind, and the colour scales of weights.

* ``unit`` stages (weights, mask) use the fixed range 0..1, so heads and edits compare.
* ``signed`` stages (scores) are symmetric about 0, the diverging map's neutral middle.
* ``free`` stages span their finite min..max; a flat range is padded so low < high.

Weights can also be drawn on a per-row scale (each row against its own maximum: the shape of
every query's distribution, even at n = 4096 where weights are near 1/n) or a log scale
(orders of magnitude); :func:`apply_scale` gives the image, levels and colour-bar ticks.
"""

from __future__ import annotations

import numpy as np

from attention_explorer.core.numbers import format_number
from attention_explorer.core.stages import stage
from attention_explorer.display.ticks import nice_ticks, tick_text

#: The value kinds (see :mod:`attention_explorer.core.stages`): they decide the colour levels.
KINDS = ("signed", "unit", "free")
#: Colour scales a unit stage may use: linear 0..1, per-row maximum, log10.
SCALES = ("linear", "row", "log")
#: The smallest weight the log scale tells apart from zero.
LOG_FLOOR = 1e-4


def levels_for(name: str, values: np.ndarray) -> tuple[float, float]:
    """Colour levels (low, high) for ``values`` of stage ``name``; finite with low < high.

    ``values`` may hold −∞ (masked cells); only finite values count.
    """
    return levels_of_kind(stage(name).kind, values)


def levels_of_kind(kind: str, values: np.ndarray) -> tuple[float, float]:
    """Colour levels (low, high) for ``values`` of value ``kind`` ("signed", "unit" or
    "free"; see :mod:`attention_explorer.core.stages`): any array, a stage or a difference map."""
    fixed = fixed_levels(kind)
    if fixed is not None:
        return fixed
    values = np.asarray(values)
    low, high = (float(values.min()), float(values.max())) if values.size else (0.0, 0.0)
    if not (values.size and np.isfinite(low) and np.isfinite(high)):  # else: no temporary
        finite = np.isfinite(values)  # [r, c]
        if not finite.any():
            return range_levels(kind, np.inf, -np.inf)
        low = float(np.min(values, where=finite, initial=np.inf))
        high = float(np.max(values, where=finite, initial=-np.inf))
    return range_levels(kind, low, high)


def fixed_levels(kind: str) -> tuple[float, float] | None:
    """(0, 1) for the ``unit`` kind; None where levels follow the data. ValueError names an
    unknown kind."""
    if kind not in KINDS:
        raise ValueError(f"unknown value kind {kind!r}; choose from {', '.join(KINDS)}")
    return (0.0, 1.0) if kind == "unit" else None


def levels_from_range(name: str, low: float, high: float) -> tuple[float, float]:
    """Colour levels of stage ``name`` whose finite cells span ``low .. high`` (low > high:
    no finite cell); what :func:`levels_for` gives for such values."""
    return range_levels(stage(name).kind, low, high)


def range_levels(kind: str, low: float, high: float) -> tuple[float, float]:
    """Colour levels of value ``kind`` for finite cells spanning ``low .. high`` (low > high:
    none): symmetric about 0 when signed, padded when flat."""
    fixed = fixed_levels(kind)
    if fixed is not None:
        return fixed
    low, high = float(low), float(high)
    if not (np.isfinite(low) and np.isfinite(high)) or low > high:
        return (-1.0, 1.0) if kind == "signed" else (0.0, 1.0)
    if kind == "signed":
        bound = max(abs(low), abs(high))
        return (-bound, bound) if bound > 0 else (-1.0, 1.0)
    if high - low <= 1e-12 * max(1.0, abs(low)):
        pad = max(0.5, 1e-6 * abs(low))  # ±0.5 vanishes in rounding beyond about 1e15
        return low - pad, high + pad
    return low, high


def colorbar_ticks(levels: tuple[float, float]) -> list[tuple[float, str]]:
    """Round (position, label) ticks for a linear colour bar over ``levels``."""
    ticks = nice_ticks(*levels)
    return [(t, tick_text(t, ticks)) for t in ticks]


def apply_scale(name: str, image: np.ndarray, scale: str = "linear"):
    """``(image, levels, ticks, caption)`` of ``image`` drawn on ``scale``.

    Only scalable stages (the weights) take ``row`` or ``log``; others are always linear. ``row``
    divides each row by its maximum (levels 0..1, "÷ row max"); ``log`` draws log10 of the
    values clipped at :data:`LOG_FLOOR` (ticks read as the weights themselves: 0.001, 0.1, 1).
    ``ticks`` are (position in the returned image's units, label) for the colour bar.
    """
    if scale not in SCALES:
        raise ValueError(f"unknown colour scale {scale!r}; choose from {', '.join(SCALES)}")
    if not stage(name).scalable or scale == "linear":
        levels = levels_for(name, image)
        return image, levels, colorbar_ticks(levels), ""
    if scale == "row":
        top = image.max(axis=1, keepdims=True)  # [r, 1]
        scaled = image / np.where(top > 0, top, 1.0)  # [r, c]
        ticks = [(t, tick_text(t, [0, 0.25])) for t in (0.0, 0.25, 0.5, 0.75, 1.0)]
        return scaled.astype(image.dtype, copy=False), (0.0, 1.0), ticks, "÷ row max"
    low = np.log10(LOG_FLOOR)
    scaled = np.log10(np.maximum(image, LOG_FLOOR))  # [r, c]
    ticks = [(float(e), format_number(10.0**e, 4, display=True)) for e in range(int(low), 1)]
    return scaled.astype(image.dtype, copy=False), (float(low), 0.0), ticks, "log scale"
