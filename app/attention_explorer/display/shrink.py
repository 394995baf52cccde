"""Shrinking a stage to display resolution: block max, block mean or largest magnitude.

Weights and the mask shrink by block MAXIMUM, so a single peak (one key a query attends to)
stays visible in a 4096×4096 matrix. Signed stages (raw, scaled and masked scores, positions)
shrink by the value of LARGEST MAGNITUDE in each block, sign kept (``absmax``): block means of
values of both signs cancel to a flat pale square under colour levels that span the whole
stage (±80), while the block's extreme keeps its colour. The other stages average their
blocks. :func:`shrink_rule` says which rule a stage uses. Masked cells (−∞) are left out of
each block; a block with no finite cell is ``hidden`` (drawn as masked).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_explorer.blocks import DISPLAY_LIMIT, block_factors, fits_float32, reduce_blocks
from attention_explorer.stages import stage

#: How each rule reads in a view's title ("…, largest magnitude of 8×8 blocks").
RULE_WORDS = {"max": "max", "mean": "mean", "absmax": "largest magnitude"}


@dataclass(frozen=True)
class Shrunk:
    """A stage at display resolution.

    ``image [r, c]`` is finite (hidden cells hold 0), float32 unless a value needs float64;
    ``hidden [r, c]`` is True where every cell of the block is masked; ``block`` is the
    (rows, cols) of full-resolution cells per shown cell; ``how`` is "max", "mean" or
    "absmax" (the value of largest magnitude, sign kept).
    """

    image: np.ndarray
    hidden: np.ndarray
    block: tuple[int, int]
    how: str

    @property
    def shrunk(self) -> bool:
        """True when a shown cell stands for more than one cell of the stage."""
        return self.block != (1, 1)


def shrink(values: np.ndarray, how: str = "mean", limit: int = DISPLAY_LIMIT) -> Shrunk:
    """``values [rows, cols]`` (may hold −∞) shrunk so neither side exceeds ``limit``.

    ``how`` is the rule ("max", "mean" or "absmax", see :func:`shrink_rule`). Never returns
    ±inf or NaN in the image.
    """
    values = np.asarray(values)
    if values.dtype == bool:
        values = values.astype(np.float32)
    fr, fc = block_factors(*values.shape, limit)
    if fr == 1 and fc == 1:
        finite = np.isfinite(values)  # [rows, cols]
        image = values if finite.all() else np.where(finite, values, 0.0)
        return Shrunk(fits_float32(image), ~finite, (1, 1), how)
    image, hidden = reduce_blocks(values, fr, fc, how)
    return Shrunk(image, hidden, (fr, fc), how)


def shrink_rule(name: str) -> str:
    """The rule stage ``name`` shrinks by, from the catalogue (the engine's previews use it
    too, so a preview is the shrink of the full stage): ``absmax`` for signed stages."""
    return stage(name).shrink


def block_labels(labels: tuple[str, ...], factor: int) -> tuple[str, ...]:
    """One label per block of ``factor``: the first label of each block."""
    return tuple(labels[i] for i in range(0, len(labels), max(1, factor)))
