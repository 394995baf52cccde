"""How a stage's cells are coloured: the colour maps of each value kind and the masked cell.

Value kinds (a stage's ``kind`` in :mod:`attention_explorer.core.stages`) decide colour levels:

* ``signed``: symmetric about 0 (the diverging map's neutral middle is 0): raw, scaled and
  masked scores.
* ``unit``: fixed 0..1, so heads and edits compare at a glance: weights, mask.
* ``free``: the finite min..max of what is shown (a flat range is padded).

A masked cell (−∞ in ``masked``) is drawn in :data:`MASKED_RGB`, a grey no colour map uses,
with the text :data:`MASKED_TEXT` when numbers are shown: on screen and in exports alike.
Qt-free: the maps are named here (pyqtgraph names), looked up by whoever draws.
"""

from __future__ import annotations

#: The colour of a masked (−∞) cell, everywhere.
MASKED_RGB = (105, 105, 105)
#: The text drawn in a masked cell when numbers are shown.
MASKED_TEXT = "\u2212∞"
#: Default colour maps per value kind (pyqtgraph names).
SEQUENTIAL_MAPS = ("viridis", "cividis", "magma", "inferno", "plasma", "CET-L1")
DIVERGING_MAPS = ("CET-D1", "CET-D1A", "CET-D3", "PAL-relaxed_bright")
DEFAULT_SEQUENTIAL = "viridis"
DEFAULT_DIVERGING = "CET-D1"


def kind_cmap(kind: str) -> str:
    """The colour map a stage of value ``kind`` uses when the user picked none: the diverging
    default for ``signed``, the sequential one otherwise."""
    return DEFAULT_DIVERGING if kind == "signed" else DEFAULT_SEQUENTIAL


def kind_levels(kind: str) -> tuple[float, float] | None:
    """The fixed colour levels of value ``kind``: (0, 1) for ``unit``; None where levels
    follow the data."""
    return (0.0, 1.0) if kind == "unit" else None
