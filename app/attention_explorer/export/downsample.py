"""Shrinking large matrices for pictures: block mean (block max for weights)."""

from __future__ import annotations

import math
import warnings

import numpy as np

#: Matrices with more rows or columns than this are drawn as blocks.
MAX_CELLS = 256


def block_reduce(
    values: np.ndarray, max_cells: int = MAX_CELLS, how: str = "mean"
) -> tuple[np.ndarray, int, int]:
    """Reduce ``values`` so neither side exceeds ``max_cells``; return (blocks, fr, fc).

    ``fr`` x ``fc`` is the block size (1 x 1 when nothing was reduced). ``how`` is ``mean`` or
    ``max``. Non-finite cells (masked, -inf) are left out of each block; a block with no finite
    cell stays -inf, so it is still drawn as masked.
    """
    rows, cols = values.shape
    fr = max(1, math.ceil(rows / max_cells))
    fc = max(1, math.ceil(cols / max_cells))
    if fr == 1 and fc == 1:
        return values, 1, 1
    out_r, out_c = math.ceil(rows / fr), math.ceil(cols / fc)
    padded = np.full((out_r * fr, out_c * fc), np.nan, dtype=np.float64)
    padded[:rows, :cols] = np.where(np.isfinite(values), values, np.nan)
    blocks = padded.reshape(out_r, fr, out_c, fc)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-masked blocks
        if how == "max":
            reduced = np.nanmax(blocks, axis=(1, 3))
        else:
            reduced = np.nanmean(blocks, axis=(1, 3))
    reduced = np.where(np.isnan(reduced), -np.inf, reduced)
    return reduced, fr, fc


def block_labels(labels: tuple[str, ...], factor: int) -> tuple[str, ...]:
    """One label per block: the first label of each block of ``factor``."""
    return tuple(labels[i] for i in range(0, len(labels), factor))
