"""An ImageItem whose picture is made quickly, in the format Qt's raster painter scales fastest.

pyqtgraph renders a one-channel image through its colour table as an 8-bit indexed QImage,
building the 256-entry colour table in Python on every render. Every paint of an indexed
image then converts it to 32-bit colour and scales it by the painter's general path: for a
heatmap of a few cells stretched over a view that was about half the time of the view's
whole repaint, and the render as much again after each edit. Here a heatmap (one channel,
finite, levels and an opaque 256-entry table) is looked up into premultiplied ARGB32 with one
numpy index, using pyqtgraph's own rescaling so every cell gets the very same colour; any
other image renders as pyqtgraph does and is converted once.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QImage

_FAST_FORMAT = QImage.Format.Format_ARGB32_Premultiplied
#: Colour tables are this long (pyqtgraph's default; the colour bar sets one of this length).
_TABLE_LENGTH = 256


def argb_table(lut: np.ndarray) -> np.ndarray | None:
    """``lut [256, 3 or 4]`` bytes as opaque 0xAARRGGBB words ``[256]``; None when it is not
    an opaque 256-entry table."""
    if not (
        isinstance(lut, np.ndarray)
        and lut.dtype == np.uint8
        and lut.ndim == 2
        and lut.shape[0] == _TABLE_LENGTH
        and lut.shape[1] in (3, 4)
    ):
        return None
    if lut.shape[1] == 4 and (lut[:, 3] != 255).any():
        return None  # transparent entries would need premultiplying
    rgb = lut[:, :3].astype(np.uint32)  # [256, 3]
    return (0xFF000000 | (rgb[:, 0] << 16) | (rgb[:, 1] << 8) | rgb[:, 2]).astype(np.uint32)


class FastImageItem(pg.ImageItem):
    """A :class:`pyqtgraph.ImageItem` whose rendered picture is premultiplied ARGB32, made
    without a per-render colour table for heatmaps (transparent cells stay transparent)."""

    _table_key: tuple | None = None
    _table: np.ndarray | None = None

    def render(self) -> None:
        """Render the image to ``self.qimage`` (see the module docstring)."""
        if not self._render_heatmap():
            super().render()
            picture = self.qimage
            if picture is not None and not picture.isNull() and picture.format() != _FAST_FORMAT:
                self.qimage = picture.convertToFormat(_FAST_FORMAT)

    def _render_heatmap(self) -> bool:
        """The fast path; False (nothing done) when the image is not a plain heatmap."""
        image, levels, lut = self.image, self.levels, self.lut
        if (
            image is None
            or image.ndim != 2
            or image.size == 0
            or image.dtype.kind != "f"
            or self.axisOrder != "row-major"
            or self.autoDownsample
            or levels is None
            or np.ndim(levels) != 1
            or not isinstance(lut, np.ndarray)
        ):
            return False
        table = self._argb_table(lut)
        if table is None or not np.isfinite(image).all():
            return False
        low, high = float(levels[0]), float(levels[1])
        span = (high - low) or 1.0
        index = pg.functions.rescaleData(  # exactly as pyqtgraph's own render: [r, c] bytes
            image, _TABLE_LENGTH / span, low, dtype=np.uint8, clip=(0, _TABLE_LENGTH - 1)
        )
        argb = np.ascontiguousarray(table[index])  # [r, c] 0xAARRGGBB words
        pixels = argb.view(np.uint8).reshape(*argb.shape, 4)  # [r, c, 4] bytes, the same memory
        self.qimage = pg.functions.ndarray_to_qimage(pixels, _FAST_FORMAT)
        self._renderRequired = False
        self._unrenderable = False
        return True

    def _argb_table(self, lut: np.ndarray) -> np.ndarray | None:
        """:func:`argb_table` of ``lut``, worked out again only when the table changes."""
        key = (id(lut), lut.shape, lut.tobytes())
        if key != self._table_key:
            self._table_key, self._table = key, argb_table(lut)
        return self._table
