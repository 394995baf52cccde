"""Colour maps for the stage views: the catalogue's map names, looked up in pyqtgraph.

Which map a stage uses follows its value kind in :mod:`attention_explorer.core.stages` (signed
stages take the diverging preference, every other stage the sequential one); colour levels
and text contrast live in :mod:`attention_explorer.display`, shared with the exports.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pyqtgraph as pg

from attention_explorer.core.stage_colours import DEFAULT_DIVERGING, DEFAULT_SEQUENTIAL
from attention_explorer.core.stages import stage


@lru_cache(maxsize=32)
def colormap_by_name(name: str, fallback: str = DEFAULT_SEQUENTIAL) -> pg.ColorMap:
    """The pyqtgraph colour map called ``name``, or ``fallback`` when it does not exist."""
    try:
        return pg.colormap.get(name)
    except Exception:  # unknown name or missing data file: never break the view
        return pg.colormap.get(fallback)


def colormap_name_for(name: str, prefs) -> str:
    """The map name stage ``name`` uses under the view preferences ``prefs``."""
    return prefs.diverging_colormap if stage(name).kind == "signed" else prefs.colormap


def colormap_for(name: str, prefs) -> pg.ColorMap:
    """The colour map of stage ``name`` under the view preferences ``prefs``."""
    signed = stage(name).kind == "signed"
    fallback = DEFAULT_DIVERGING if signed else DEFAULT_SEQUENTIAL
    return colormap_by_name(colormap_name_for(name, prefs), fallback)


def table_for(name: str, prefs) -> np.ndarray:
    """Stage ``name``'s colour map under ``prefs`` as a ``[256, 3]`` uint8 RGB table."""
    fallback = DEFAULT_DIVERGING if stage(name).kind == "signed" else DEFAULT_SEQUENTIAL
    return _table(colormap_name_for(name, prefs), fallback)


@lru_cache(maxsize=32)
def _table(name: str, fallback: str) -> np.ndarray:
    cmap = colormap_by_name(name, fallback)
    table = np.ascontiguousarray(cmap.getLookupTable(nPts=256, mode="byte", alpha=False))
    table = table[:, :3].astype(np.uint8)
    table.setflags(write=False)
    return table
