"""Colour maps (pyqtgraph's), colour levels per stage, and readable text colours."""

from __future__ import annotations

import functools

import numpy as np

from attention_explorer.export.errors import ExportError

#: Perceptually uniform sequential maps, offered for weights and values.
SEQUENTIAL_MAPS = ("viridis", "cividis", "magma", "inferno", "plasma", "CET-L1")
#: Diverging maps centred on 0, offered for signed stages (scores).
DIVERGING_MAPS = ("CET-D1", "CET-D1A", "CET-D3", "PAL-relaxed_bright")
#: The default map for unsigned stages and for signed ones.
DEFAULT_CMAP = "viridis"
DEFAULT_DIVERGING_CMAP = "CET-D1"
#: Stages whose colour levels are symmetric about 0.
SIGNED_STAGES = ("scores", "scaled", "masked")
#: Stages whose colour levels are fixed to 0..1.
UNIT_STAGES = ("weights", "mask")


def colormap_names() -> tuple[str, ...]:
    """The colour map names offered to the user: sequential ones, then diverging ones.

    Any other name pyqtgraph knows (``pyqtgraph.colormap.listMaps()``) is accepted too.
    """
    return SEQUENTIAL_MAPS + DIVERGING_MAPS


def default_cmap(stage: str) -> str:
    """The colour map used when none is chosen: diverging for scores, else viridis."""
    return DEFAULT_DIVERGING_CMAP if stage in SIGNED_STAGES else DEFAULT_CMAP


@functools.lru_cache(maxsize=32)
def lookup_table(name: str) -> np.ndarray:
    """The colour map ``name`` as a ``[256, 3]`` uint8 RGB table (read-only)."""
    import pyqtgraph as pg

    try:
        cmap = pg.colormap.get(name)
    except Exception:
        cmap = None
    if cmap is None:
        raise ExportError(f"unknown colour map {name!r}; choose from {', '.join(colormap_names())}")
    table = np.ascontiguousarray(cmap.getLookupTable(nPts=256, mode="byte", alpha=False))
    table = table[:, :3].astype(np.uint8)
    table.setflags(write=False)
    return table


def color_levels(stage: str, values: np.ndarray) -> tuple[float, float]:
    """The (low, high) values mapped to the ends of the colour map.

    weights and mask: 0..1; scores/scaled/masked: symmetric about 0 (± the largest finite
    magnitude); other stages: finite min..max. Never returns low == high.
    """
    if stage in UNIT_STAGES:
        return 0.0, 1.0
    finite = np.asarray(values, dtype=np.float64)
    finite = finite[np.isfinite(finite)]
    if finite.size == 0:
        return (-1.0, 1.0) if stage in SIGNED_STAGES else (0.0, 1.0)
    if stage in SIGNED_STAGES:
        top = float(np.max(np.abs(finite)))
        top = top if top > 0 else 1.0
        return -top, top
    low, high = float(np.min(finite)), float(np.max(finite))
    if high <= low:
        pad = abs(low) * 0.5 or 1.0
        return low - pad, high + pad
    return low, high


def map_colors(values: np.ndarray, levels: tuple[float, float], name: str) -> np.ndarray:
    """RGB bytes ``[..., 3]`` for ``values``; non-finite cells get index 0 (callers grey them)."""
    low, high = levels
    data = np.asarray(values, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        scaled = (data - low) / (high - low)
    scaled = np.where(np.isfinite(scaled), scaled, 0.0)
    index = np.clip(np.rint(scaled * 255.0), 0, 255).astype(np.intp)
    return lookup_table(name)[index]


def text_color_for(rgb: np.ndarray) -> np.ndarray:
    """Per cell, True when dark text reads better than white on the background ``rgb``.

    Uses the WCAG relative luminance; the threshold (0.179) balances contrast with black and
    with white.
    """
    channel = np.asarray(rgb, dtype=np.float64) / 255.0
    linear = np.where(channel <= 0.04045, channel / 12.92, ((channel + 0.055) / 1.055) ** 2.4)
    luminance = linear @ np.array([0.2126, 0.7152, 0.0722])
    return luminance > 0.179
