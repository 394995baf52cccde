"""Every token name on a heatmap's axes up to :data:`ALL_LABELS_UP_TO` cells a side.

:class:`~attention_explorer.ui.heatmap_axes.AxisLabels` labels every k-th cell where names
would overlap at the tick font, so 13 to 15 tokens showed every other name. On top of it,
:class:`AllAxisLabels` labels every cell of an axis of at most 32 cells whenever some font
size from the tick font down to :data:`MIN_POINTS` (and, across, names shortened to at least
:data:`MIN_CHARS` characters with an ellipsis, every other one on a second line if need be)
fits the cells; only a view too small for even that keeps the stride. The tooltip always has
the full name.
"""

from __future__ import annotations

from PySide6.QtGui import QFont, QFontMetricsF

from attention_explorer.display.ticks import MAX_TICK_CHARS, short_label
from attention_explorer.ui.heatmap_axes import AxisLabels

#: Axes of up to this many cells name every cell when any allowed font fits.
ALL_LABELS_UP_TO = 32
#: The smallest tick font tried, in points.
MIN_POINTS = 5.0
#: Names across the bottom are shortened to no fewer characters than this.
MIN_CHARS = 3
_POINTS = (9.0, 8.0, 7.0, 6.5, 6.0, 5.5, MIN_POINTS)


def fitting_font(labels, pitch: float, across: bool, base: QFont) -> tuple[QFont, int, bool] | None:
    """(font, characters kept, staggered) that fits one name per cell ``pitch`` pixels apart:
    down the side a line's height must fit; across the bottom each shortened name's width,
    on one line or, staggered, every other name on a second line (twice the room). None when
    nothing fits."""
    found = _fitting(labels, pitch, across, base)
    if found is None and across:
        found = _fitting(labels, 2 * pitch, across, base)
        return None if found is None else (*found, True)
    return None if found is None else (*found, False)


def _fitting(labels, pitch: float, across: bool, base: QFont) -> tuple[QFont, int] | None:
    for points in _POINTS:
        font = QFont(base)
        font.setPointSizeF(min(points, base.pointSizeF() if base.pointSizeF() > 0 else points))
        metrics = QFontMetricsF(font)
        if not across:
            if metrics.height() <= pitch + 1:
                return font, MAX_TICK_CHARS
            continue
        for chars in range(MAX_TICK_CHARS, MIN_CHARS - 1, -1):
            widest = max(metrics.horizontalAdvance(short_label(t, chars)) for t in labels)
            if widest + 3 <= pitch:
                return font, chars
    return None


class AllAxisLabels(AxisLabels):
    """:class:`AxisLabels`, with every name shown on axes of up to 32 cells where a font fits."""

    def __init__(self, plot, stage_name: str):
        super().__init__(plot, stage_name)
        self._all_key = None

    def update(self, frame) -> None:
        """Label the axes for ``frame`` (None leaves them); short axes name every cell."""
        before = self._key
        super().update(frame)
        if frame is None:
            return
        box = self.plot.getViewBox()
        r0, _, c0, _ = frame.region
        key = (frame.row_labels, frame.col_labels, frame.region, box.width(), box.height())
        if key == self._all_key and self._key == before:  # neither changed the ticks
            return
        self._all_key = key
        sides = (
            ("left", frame.row_labels, box.height(), r0, False),
            ("bottom", frame.col_labels, box.width(), c0, True),
        )
        for name, labels, pixels, first, across in sides:
            count = len(labels)
            if not 1 < count <= ALL_LABELS_UP_TO or pixels <= 1 or frame.block != (1, 1):
                continue
            axis = self.plot.getAxis(name)
            fit = fitting_font(labels, pixels / count, across, axis.font())
            if fit is None:
                continue
            font, chars, staggered = fit
            axis.setStyle(tickFont=font)
            ticks = [
                (first + i + 0.5, ("\n" if staggered and i % 2 else "") + short_label(t, chars))
                for i, t in enumerate(labels)
            ]
            axis.setTicks([ticks, []])

    def shown(self, name: str) -> list[str]:
        """The tick texts on axis ``name`` ("left" or "bottom"), for tests and checks."""
        levels = getattr(self.plot.getAxis(name), "_tickLevels", None) or [[]]
        return [text.lstrip("\n") for _, text in levels[0]]
