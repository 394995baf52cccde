"""Shrinking a stage to display resolution by the catalogue's rule: block max or block mean.

Weights and the mask shrink by block MAXIMUM, so a single peak (one key a query attends to)
stays visible in a 4096×4096 matrix; the other stages average their blocks. Masked cells
(−∞) are left out of each block; a block with no finite cell is True in ``masked_cells``
(drawn as masked).

Signed stages (raw, scaled and masked scores) shown as block means would be a flat pale
square under levels spanning the whole stage (±80: means of both signs cancel toward 0), so
their colour levels come from the shown means instead (:func:`signed_levels`: ±their 99th
percentile of magnitude) and the title says so (:func:`rule_words`). The pass's preview
already holds those means: nothing is recomputed at full resolution.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_explorer.core.blocks import DISPLAY_LIMIT, block_factors, fits_float32, reduce_blocks
from attention_explorer.core.stages import stage

#: Signed stages shown as block means colour the blocks up to this percentile of |mean|.
SIGNED_PERCENTILE = 99.0


@dataclass(frozen=True)
class Shrunk:
    """A stage at display resolution.

    ``image [r, c]`` is finite (masked cells hold 0), float32 unless a value needs float64;
    ``masked_cells [r, c]`` is True where every cell of the block is masked; ``block`` is the
    (rows, cols) of full-resolution cells per shown cell; ``how`` is "max" or "mean".
    """

    image: np.ndarray
    masked_cells: np.ndarray
    block: tuple[int, int]
    how: str

    @property
    def shrunk(self) -> bool:
        """True when a shown cell stands for more than one cell of the stage."""
        return self.block != (1, 1)


def shrink(values: np.ndarray, how: str = "mean", limit: int = DISPLAY_LIMIT) -> Shrunk:
    """``values [rows, cols]`` (may hold −∞) shrunk so neither side exceeds ``limit``.

    ``how`` is the catalogue's rule ("max" or "mean"). Never returns ±inf or NaN in the image.
    """
    values = np.asarray(values)
    if values.dtype == bool:
        values = values.astype(np.float32)
    fr, fc = block_factors(*values.shape, limit)
    if fr == 1 and fc == 1:
        finite = np.isfinite(values)  # [rows, cols]
        image = values if finite.all() else np.where(finite, values, 0.0)
        return Shrunk(fits_float32(image), ~finite, (1, 1), how)
    image, masked_cells = reduce_blocks(values, fr, fc, how)
    return Shrunk(image, masked_cells, (fr, fc), how)


def shrink_rule(name: str) -> str:
    """The rule stage ``name`` shrinks by (the catalogue's: "max" or "mean")."""
    return stage(name).shrink


def signed_levels(name: str, shrunk: Shrunk) -> tuple[float, float] | None:
    """Colour levels for a signed stage shown as block means: ±the
    :data:`SIGNED_PERCENTILE` th percentile of the shown means' magnitudes, so the means'
    structure fills the diverging map (a few extreme blocks saturate). None when the stage is
    not signed, not shrunk, or every shown block is 0 or masked (the stage's levels stay)."""
    if stage(name).kind != "signed" or not shrunk.shrunk:
        return None
    shown = np.abs(shrunk.image[~shrunk.masked_cells])  # [k] finite magnitudes of shown blocks
    if shown.size == 0:
        return None
    top = float(np.percentile(shown, SIGNED_PERCENTILE))
    if not np.isfinite(top) or top <= 0:
        return None
    return (-top, top)


def rule_words(name: str, shrunk: Shrunk) -> str:
    """How a shrunk view was drawn, for its title: "max", "mean" or, for signed stages, "mean
    …; colours fit 99% of the means"."""
    words = "max" if shrunk.how == "max" else "mean"
    if signed_levels(name, shrunk) is not None:
        return f"{words} of BLOCK blocks; colours fit {SIGNED_PERCENTILE:g}% of the means"
    return f"{words} of BLOCK blocks"


def block_labels(labels: tuple[str, ...], factor: int) -> tuple[str, ...]:
    """One label per block of ``factor``: the first label of each block."""
    return tuple(labels[i] for i in range(0, len(labels), max(1, factor)))
