"""Token names on a heatmap's axes: every name where they fit, every k-th where cells are small.

A few columns of long names get a smaller font but all their names; many columns get a stride
measured from the names' widths. Axes are set only when what they show changes.
"""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QFont, QFontMetricsF

from attention_explorer.core.stages import stage
from attention_explorer.display.ticks import axis_ticks, short_label, tick_stride

#: Vertical room one row label needs, in pixels.
TICK_ROW_PIXELS = 15
#: Axes of up to this many cells label every cell, in a smaller font when names are long.
SMALL_AXIS_CELLS = 16
SMALL_TICK_POINT_SIZE = 6.5
_SINGULAR = {"tokens": "token", "queries": "query", "keys": "key"}
#: Pixels between the bottom axis's tick labels and the top of its name's letters, at scale 1
#: (presenter mode: times its scale).
NAME_GAP = 4.0
#: pyqtgraph moves a bottom axis's name this many pixels down, and gives it 0.8 of its height;
#: it measures tick names at 0.8 of their height too (a name on the third staggered line
#: reaches 0.6 of a line below the room it was given).
_PG_NUDGE, _PG_SHARE, _PG_TEXT_SHARE = 5.0, 0.8, 0.8


class NamedAxis(pg.AxisItem):
    """A bottom axis whose name keeps :attr:`name_gap` pixels below its tick labels.

    pyqtgraph (0.14) gives the tick names 0.8 of their height and the name 0.8 of its own,
    moved 5 px down: the last line of staggered token names ran into the name ("goat" on "key",
    worst in presenter mode's 20 pt). Here the tick names get their whole height, and the axis
    grows by what the gap under them still lacks (at the usual size, nothing)."""

    name_gap = NAME_GAP

    def set_name_gap(self, pixels: float) -> None:
        """Keep ``pixels`` between the tick labels and the name's letters."""
        if pixels != self.name_gap:
            self.name_gap = float(pixels)
            self._updateHeight()

    def _updateMaxTextSize(self, x) -> None:  # noqa: N802 - pyqtgraph's name
        """The tick names' height as drawn: pyqtgraph measured 0.8 of it."""
        if self.orientation == "bottom":
            x = math.ceil(x / _PG_TEXT_SHARE)
        super()._updateMaxTextSize(x)

    def _updateHeight(self) -> None:  # noqa: N802 - pyqtgraph's name
        """pyqtgraph's height, plus what the gap under the tick labels lacks."""
        super()._updateHeight()
        label = self.label
        if self.orientation != "bottom" or self.fixedHeight is not None or label is None:
            return
        if not (self.isVisible() and label.isVisible() and self.style["showValues"]):
            return
        margin = label.document().documentMargin()
        # where pyqtgraph puts the name's letters, measured from the tick labels' bottom
        top = _PG_NUDGE + margin - (1 - _PG_SHARE) * label.boundingRect().height()
        extra = self.name_gap - top
        if extra > 0:
            height = self.maximumHeight() + extra
            self.setMaximumHeight(height)
            self.setMinimumHeight(height)

    def name_rect(self) -> QRectF:
        """The name's text in this axis's coordinates (the text item less its margin)."""
        margin = self.label.document().documentMargin()
        rect = self.label.mapRectToParent(self.label.boundingRect())
        return rect.adjusted(margin, margin, -margin, -margin)


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
        axis = self.plot.getAxis("bottom")
        if isinstance(axis, NamedAxis):
            axis.set_name_gap(NAME_GAP * self.scale)
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
        row_stride = tick_stride(rows, box.height(), TICK_ROW_PIXELS * self.scale)
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
        for side, axis_name in (("left", entry.rows), ("bottom", entry.cols)):
            # pyqtgraph keeps the last style when given none: back from presenter mode, the
            # names kept their 20 pt
            self.plot.getAxis(side).labelStyle = dict(style)
            self.plot.setLabel(side, _SINGULAR.get(axis_name, axis_name), **style)

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
