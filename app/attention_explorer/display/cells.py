"""What is written in the cells, and in which colour: one rule for the screen and pictures.

Numbers are written by :func:`attention_explorer.core.numbers.format_number` with the stage's
decimals (the same digits at any window or picture size); a masked cell reads
:data:`~attention_explorer.core.stage_colours.MASKED_TEXT` on
:data:`~attention_explorer.core.stage_colours.MASKED_RGB`.
"""

from __future__ import annotations

import math

import numpy as np

from attention_explorer.core.numbers import format_number
from attention_explorer.core.stage_colours import MASKED_RGB, MASKED_TEXT
from attention_explorer.core.stages import stage


def cell_text(value: float, decimals: int) -> str:
    """One cell's text: the number with ``decimals`` decimals, or "−∞" for a masked cell."""
    value = float(value)
    if math.isinf(value) and value < 0:
        return MASKED_TEXT
    return format_number(value, decimals, display=True)


def cell_texts(name: str, values: np.ndarray, decimals: int | None = None) -> list[str]:
    """The text of every cell of ``values [r, c]`` of stage ``name``, row by row.

    ``decimals`` defaults to the catalogue's (the screen's digits); the mask reads 1 / 0.
    """
    digits = stage(name).decimals if decimals is None else int(decimals)
    return texts_of(values, digits)


def texts_of(values: np.ndarray, decimals: int) -> list[str]:
    """The text of every cell of any ``values [r, c]``, row by row, with ``decimals``."""
    flat = np.asarray(values, dtype=np.float64).reshape(-1)  # [r*c]
    return [cell_text(v, decimals) for v in flat]


def relative_luminance(rgb: np.ndarray) -> np.ndarray:
    """WCAG relative luminance of ``rgb [..., 3]`` bytes, in 0..1."""
    channel = np.asarray(rgb, dtype=np.float64) / 255.0
    linear = np.where(channel <= 0.04045, channel / 12.92, ((channel + 0.055) / 1.055) ** 2.4)
    return linear @ np.array([0.2126, 0.7152, 0.0722])


def dark_text(rgb: np.ndarray) -> np.ndarray:
    """Per cell, True when black text reads better than white on the background ``rgb``.

    The WCAG threshold 0.179 balances the contrast ratio against black and against white.
    """
    return relative_luminance(rgb) > 0.179


def cell_rgb(positions: np.ndarray, masked_cells: np.ndarray, table: np.ndarray) -> np.ndarray:
    """RGB bytes ``[r, c, 3]``: ``positions`` (0..1 along the map) looked up in ``table``
    ``[256, 3]``, masked cells in MASKED_RGB."""
    index = np.clip(np.rint(np.nan_to_num(positions) * 255.0), 0, 255).astype(np.intp)
    rgb = np.asarray(table)[index]  # [r, c, 3]
    rgb[masked_cells] = MASKED_RGB
    return rgb
