"""Token names on a heatmap's axes: every name where they fit, every k-th where cells are small.

A few columns of long names get a smaller font but all their names; many columns get a stride
measured from the names' widths. Axes are set only when what they show changes.
"""

from __future__ import annotations

from PySide6.QtGui import QFont, QFontMetricsF

from attention_explorer.core.stages import stage
from attention_explorer.display.ticks import axis_ticks, short_label, tick_stride

#: Vertical room one row label needs, in pixels.
TICK_ROW_PIXELS = 15
#: Axes of up to this many cells label every cell, in a smaller font when names are long.
SMALL_AXIS_CELLS = 16
SMALL_TICK_POINT_SIZE = 6.5
_SINGULAR = {"tokens": "token", "queries": "query", "keys": "key"}


def scaled_font(base: QFont, scale: float) -> QFont:
    """A copy of ``base`` ``scale`` times its point size (``base`` itself when 1)."""
    font = QFont(base)
    if scale != 1.0 and font.pointSizeF() > 0:
        font.setPointSizeF(font.pointSizeF() * scale)
    return font


class AxisLabels:
    """The left and bottom axes of one view's plot, labelled for the frame shown."""

    def __init__(self, plot, stage_name: str):
        self.plot, self.stage = plot, stage_name
        self._key = None
        self._pitch_cache: tuple[object, float] = (None, 0.0)
        self.small_font = QFont()
        self.small_font.setPointSizeF(SMALL_TICK_POINT_SIZE)
        #: How much larger the tick fonts and axis names are (presenter mode: above 1).
        self.scale = 1.0

    def set_scale(self, scale: float) -> None:
        """Tick fonts and axis names ``scale`` times their size (1: as usual); relabels on
        the next :meth:`update`."""
        self.scale = float(scale)
        self.small_font.setPointSizeF(SMALL_TICK_POINT_SIZE * self.scale)
        self._key, self._pitch_cache = None, (None, 0.0)
        if hasattr(self, "_all_key"):
            self._all_key = None

    def tick_base(self) -> QFont:
        """The tick font at this scale (the plot's axis font, scaled)."""
        font = QFont(self.plot.getAxis("bottom").font())
        if self.scale != 1.0 and font.pointSizeF() > 0:
            font.setPointSizeF(font.pointSizeF() * self.scale)
        return font

    def update(self, frame) -> None:
        """Label the axes for ``frame`` (a DisplayFrame, or None to leave them)."""
        if frame is None:
            return
        box = self.plot.getViewBox()
        rows, cols = len(frame.row_labels), len(frame.col_labels)
        row_stride = tick_stride(rows, box.height(), TICK_ROW_PIXELS)
        col_stride = tick_stride(cols, box.width(), self._pitch(frame.col_labels, False))
        small = col_stride > 1 and cols <= SMALL_AXIS_CELLS  # a few names: smaller, but all
        if small:
            col_stride = tick_stride(cols, box.width(), self._pitch(frame.col_labels, True))
        key = (frame.row_labels, frame.col_labels, frame.region, row_stride, col_stride, small)
        if key == self._key:
            return
        self._key = key
        scaled = self.tick_base() if self.scale != 1.0 else None
        self.plot.getAxis("bottom").setStyle(tickFont=self.small_font if small else scaled)
        self.plot.getAxis("left").setStyle(tickFont=scaled)
        r0, _, c0, _ = frame.region
        self.plot.getAxis("left").setTicks([axis_ticks(frame.row_labels, row_stride, r0), []])
        self.plot.getAxis("bottom").setTicks([axis_ticks(frame.col_labels, col_stride, c0), []])
        entry = stage(self.stage)
        style = {"font-size": f"{9 * self.scale:.0f}pt"} if self.scale != 1.0 else {}
        self.plot.setLabel("left", _SINGULAR.get(entry.rows, entry.rows), **style)
        self.plot.setLabel("bottom", _SINGULAR.get(entry.cols, entry.cols), **style)

    def _pitch(self, labels: tuple[str, ...], small: bool) -> float:
        """Pixels between cell centres that ``labels`` need at the normal or the small tick
        font (measured once per label set and font)."""
        if self._pitch_cache[0] != (labels, small):
            metrics = QFontMetricsF(self.small_font if small else self.tick_base())
            sample = labels[:: max(1, len(labels) // 24)]
            widths = [metrics.horizontalAdvance(short_label(t)) for t in sample] or [7.0]
            pairs = [(a + b) / 2 for a, b in zip(widths, widths[1:])] or widths
            self._pitch_cache = ((labels, small), max(pairs) + 4)
        return self._pitch_cache[1]
