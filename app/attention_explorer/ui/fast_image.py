"""An ImageItem whose picture is kept in the format Qt's raster painter scales fastest.

pyqtgraph renders a one-channel image through its colour table as an 8-bit indexed QImage.
Every paint of an indexed image converts it to 32-bit colour first and then scales it by the
painter's general path: for a heatmap of a few cells stretched over a view that was about half
the time of the view's whole repaint. Converting once, when the picture is rendered (after
an edit), makes every later paint a plain scaled copy. The pixels are the same.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtGui import QImage

_FAST_FORMAT = QImage.Format.Format_ARGB32_Premultiplied


class FastImageItem(pg.ImageItem):
    """A :class:`pyqtgraph.ImageItem` that stores its rendered picture as premultiplied ARGB32
    (transparent cells stay transparent)."""

    def render(self) -> None:
        """Render as pyqtgraph does, then convert the picture once for fast painting."""
        super().render()
        picture = self.qimage
        if picture is not None and not picture.isNull() and picture.format() != _FAST_FORMAT:
            self.qimage = picture.convertToFormat(_FAST_FORMAT)
