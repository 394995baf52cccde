"""Block reductions of a [rows, cols] array: each block's max or mean of its finite cells.

Neutral ground for the engine (previews computed block by block) and the display (stages
shrunk to screen resolution): both import these, so neither reaches into the other.
"""

from __future__ import annotations

import numpy as np

#: Most cells per side ever drawn, on screen and in pictures; larger stages are shrunk.
DISPLAY_LIMIT = 512


def fits_float32(image: np.ndarray) -> np.ndarray:
    """``image`` as C-contiguous float32, or float64 where a value lies beyond float32."""
    if image.dtype == np.float32:
        return np.ascontiguousarray(image)
    with np.errstate(over="ignore"):
        small = np.ascontiguousarray(image, dtype=np.float32)  # [r, c]
    return small if np.isfinite(small).all() else np.ascontiguousarray(image, dtype=np.float64)


def _reduce(data: np.ndarray, fr: int, fc: int, how: str, dtype) -> np.ndarray:
    """Max or sum of each ``fr`` x ``fc`` block of ``data [fr*R, fc*C]``: ``[R, C]``.

    Rows first, then columns, each as ``fr`` (then ``fc``) whole-array steps over strided
    views: numpy's reductions over a short middle axis run an inner loop of length ``fr``
    per output cell, several times slower than these element-wise passes.
    """
    combine = np.maximum if how == "max" else np.add
    kind = data.dtype if how == "max" else dtype
    tall = data[0::fr].astype(kind, copy=True)  # [R, fc*C]
    for i in range(1, fr):
        combine(tall, data[i::fr], out=tall, casting="unsafe")
    out = tall[:, 0::fc].copy()  # [R, C]
    for j in range(1, fc):
        combine(out, tall[:, j::fc], out=out, casting="unsafe")
    return out


def _blocks(data: np.ndarray, fr: int, fc: int, how: str, dtype) -> tuple[np.ndarray, np.ndarray]:
    """(image, masked_cells) of ``fr`` x ``fc`` blocks: max or mean of each block's finite cells."""
    rows, cols = data.shape
    out_r, out_c = -(-rows // fr), -(-cols // fc)
    if rows % fr or cols % fc:  # pad with masked cells, which no block rule counts
        padded = np.full((out_r * fr, out_c * fc), -np.inf, dtype=np.result_type(data, dtype))
        padded[:rows, :cols] = data  # [out_r*fr, out_c*fc]
        data = padded
    with np.errstate(over="ignore", invalid="ignore"):  # float32 overflow: the caller retries
        if how == "max":  # −∞ never wins a max unless the whole block is masked
            image = _reduce(data, fr, fc, "max", dtype)  # [out_r, out_c]
            masked_cells = np.isneginf(image)
        else:
            # A block sum is finite only when every cell of the block is (−∞ stays −∞, +∞
            # and −∞ give NaN), so the sums tell at once whether any cell is masked.
            sums = _reduce(data, fr, fc, "sum", dtype)  # [out_r, out_c]
            if np.isfinite(sums).all():
                image = sums / (fr * fc)
                masked_cells = np.zeros((out_r, out_c), dtype=bool)
            else:  # masked cells are left out of the sums and the counts
                finite = np.isfinite(data)  # [R, C]
                sums = _reduce(np.where(finite, data, 0.0), fr, fc, "sum", dtype)
                count = _reduce(finite, fr, fc, "sum", np.int32)  # [out_r, out_c]
                image, masked_cells = sums / np.maximum(count, 1), count == 0
    return np.where(masked_cells, 0.0, image).astype(dtype, copy=False), masked_cells


def block_factors(rows: int, cols: int, limit: int = DISPLAY_LIMIT) -> tuple[int, int]:
    """Full-resolution cells per shown cell, (rows, cols), so that neither side exceeds
    ``limit``: (1, 1) when the stage fits."""
    return max(1, -(-rows // limit)), max(1, -(-cols // limit))


def reduce_blocks(
    values: np.ndarray, fr: int, fc: int, how: str, narrow: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """(image, masked_cells) of the ``fr`` x ``fc`` blocks of ``values [rows, cols]`` (may hold
    −∞): each block's max or mean of its finite cells; the image is finite (masked blocks 0),
    float32 unless a value lies beyond float32's range (then float64). float32 values add up
    in float32 (float64 only when that overflows), float64 values in float64 (and stay
    float64 when ``narrow`` is False: for pieces of one image, narrowed once at the end)."""
    if values.dtype == np.float64:  # float64 stages add up in float64, block by block alike
        image, masked_cells = _blocks(values, fr, fc, how, np.float64)
        return (fits_float32(image) if narrow else image), masked_cells
    image, masked_cells = _blocks(values, fr, fc, how, np.float32)
    if not np.isfinite(image).all():  # float32 overflowed: values beyond its range
        image, masked_cells = _blocks(values, fr, fc, how, np.float64)
    return fits_float32(image), masked_cells
