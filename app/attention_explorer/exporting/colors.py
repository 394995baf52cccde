"""Colour maps for pictures: the catalogue's map names as pyqtgraph lookup tables.

Which map a stage uses by default, and the lists offered, come from
:mod:`attention_explorer.core.stages`; levels and text contrast from
:mod:`attention_explorer.display`.
"""

from __future__ import annotations

import functools

import numpy as np

from attention_explorer.core.stage_colours import DIVERGING_MAPS, SEQUENTIAL_MAPS
from attention_explorer.core.stages import stage
from attention_explorer.writing.export_errors import ExportError

__all__ = ["DIVERGING_MAPS", "SEQUENTIAL_MAPS", "colormap_names", "default_cmap", "lookup_table"]


def colormap_names() -> tuple[str, ...]:
    """The colour map names offered to the user: sequential ones, then diverging ones.

    Any other name pyqtgraph knows (``pyqtgraph.colormap.listMaps()``) is accepted too.
    """
    return SEQUENTIAL_MAPS + DIVERGING_MAPS


def default_cmap(name: str) -> str:
    """The colour map used when none is chosen (the catalogue's, as on screen)."""
    return stage(name).default_cmap


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
