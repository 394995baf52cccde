"""Every token name on a heatmap's axes up to :data:`ALL_LABELS_UP_TO` cells a side.

:class:`~attention_explorer.ui.heatmap.heatmap_axes.AxisLabels` labels every k-th cell where names
would overlap at the tick font. On top of it, :class:`AllAxisLabels` labels every cell of an
axis of at most 32 cells with a font from the tick font down to :data:`MIN_POINTS` (7 pt, the
smallest that stays readable):

- down the side, one line per row: the view's plot grows taller (the stage panel scrolls) until
  every row has a line's room at 7 pt, so 32 rows need about 300 pixels of map;
- across the bottom, names shortened to at least :data:`MIN_CHARS` characters with an
  ellipsis, on one line or staggered over up to :data:`MAX_LEVELS` lines (the k-th name of
  each run of 2 to 6 a line lower), so the views keep their width and the layout its columns.

Only a view too narrow for even that keeps the stride. The tooltip always has the full name.
"""

from __future__ import annotations

import math

from PySide6.QtGui import QFont, QFontMetricsF

from attention_explorer.core.stages import stage
from attention_explorer.display.ticks import MAX_TICK_CHARS, short_label
from attention_explorer.ui.heatmap.heatmap_axes import AxisLabels

#: Axes of up to this many cells name every cell when any allowed font fits.
ALL_LABELS_UP_TO = 32
#: Axes of tokens (the catalogue's axis names); a dimension axis keeps round numbers.
TOKEN_AXES = frozenset({"tokens", "queries", "keys"})
#: The smallest tick font tried, in points: smaller is not readable.
MIN_POINTS = 7.0
#: Names across the bottom are shortened to no fewer characters than this.
MIN_CHARS = 3
#: Names across the bottom are staggered over at most this many lines.
MAX_LEVELS = 6
#: A view asks for the width that fits its column names on this many lines (the stage panel
#: gives it when it lays the views out; a layout kept while the learner edits may give less).
ASKED_LEVELS = 5
_POINTS = (9.0, 8.0, 7.5, MIN_POINTS)
#: Pixels by which row names' lines may overlap: a line's height includes empty space above
#: the tallest letter and below the deepest one (at 7 pt a 10.5 px line holds 9 px of ink).
_LINE_OVERLAP = 1.5
#: Pixels of the plot that are neither the map nor its column names: margins, the axis name.
_AROUND_MAP = 32


def fitting_font(
    labels, pitch: float, across: bool, base: QFont, scale: float = 1.0
) -> tuple[QFont, int, int] | None:
    """(font, characters kept, lines) that fits one name per cell ``pitch`` pixels apart: down
    the side a line's height must fit; across the bottom each shortened name's width, on one
    line or staggered over 2 to 6 lines (every k-th name on the same line: k times the room).
    None when nothing fits."""
    # Every name whole on up to MAX_LEVELS staggered lines first; only then shortened.
    for shortest in (MAX_TICK_CHARS, MIN_CHARS) if across else (MAX_TICK_CHARS,):
        for levels in range(1, (MAX_LEVELS if across else 1) + 1):
            found = _fitting(labels, levels * pitch, across, base, scale, shortest)
            if found is not None:
                return (*found, levels)
    return None


def _sized(base: QFont, points: float) -> QFont:
    font = QFont(base)
    font.setPointSizeF(min(points, base.pointSizeF() if base.pointSizeF() > 0 else points))
    return font


def _fitting(
    labels, pitch: float, across: bool, base: QFont, scale: float = 1.0, shortest: int = MIN_CHARS
) -> tuple[QFont, int] | None:
    for points in _POINTS:
        font = _sized(base, points * scale)
        metrics = QFontMetricsF(font)
        if not across:
            if metrics.height() <= pitch + _LINE_OVERLAP:
                return font, MAX_TICK_CHARS
            continue
        for chars in range(MAX_TICK_CHARS, shortest - 1, -1):
            widest = max(metrics.horizontalAdvance(short_label(t, chars)) for t in labels)
            if widest + 3 <= pitch:
                return font, chars
    return None


def row_pitch(base: QFont) -> float:
    """Pixels one row label needs at the smallest tick font (a line, less the overlap of the
    empty space above and below the letters that the fit allows)."""
    return QFontMetricsF(_sized(base, MIN_POINTS)).height() - _LINE_OVERLAP


class AllAxisLabels(AxisLabels):
    """:class:`AxisLabels`, with every name shown on axes of up to 32 cells; ``graphics`` (the
    widget holding the plot) is made tall enough for one line per row."""

    def __init__(self, plot, stage_name: str, graphics=None):
        super().__init__(plot, stage_name)
        self._all_key = None
        self.graphics = graphics
        self.base_height = graphics.minimumHeight() if graphics is not None else 0

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
            if not self._named_one_by_one(frame, across) or pixels <= 1:
                continue
            axis = self.plot.getAxis(name)
            fit = self._fit(labels, pixels / count, across)
            if fit is None:
                continue
            font, chars, levels = fit
            axis.setStyle(tickFont=font)
            ticks = [
                (first + i + 0.5, "\n" * (i % levels) + short_label(t, chars))
                for i, t in enumerate(labels)
            ]
            axis.setTicks([ticks, []])

    def _fit(self, labels, pitch: float, across: bool):
        """:func:`fitting_font` at this scale; in presenter mode, when no font at its scale
        fits, the largest smaller scale that does: every name a little smaller, rather than
        names at full size on top of each other (19 rows at 2.2x) or only every k-th."""
        scale = self.scale
        while True:
            fit = fitting_font(labels, pitch, across, self.tick_base(), scale)
            if fit is not None or scale <= 1.0:
                return fit
            scale = max(1.0, scale - 0.2)

    def least_height(self, rows: int) -> int:
        """The plot's least height for a stage of ``rows`` rows: one line of the smallest tick
        font per row when every row is named (up to 32 rows) and room for the column names on
        :data:`MAX_LEVELS` lines (one line of numbers for dimensions), never less than it was
        built with. It follows the stage's size only, so it is known before the view draws (a
        view out of sight draws later)."""
        if not 1 < rows <= ALL_LABELS_UP_TO:
            return self.base_height
        base = self.plot.getAxis("left").font()
        names = MAX_LEVELS * QFontMetricsF(_sized(base, MIN_POINTS)).height()
        if stage(self.stage).cols not in TOKEN_AXES:  # dimensions: one line of numbers
            names = QFontMetricsF(base).height() + 6  # and its spacing
        return max(self.base_height, math.ceil(rows * row_pitch(base) + names + _AROUND_MAP))

    def fit_height(self, rows: int) -> None:
        """Give ``graphics`` its least height for a stage of ``rows`` rows."""
        need = self.least_height(rows)
        if self.graphics is not None and self.graphics.minimumHeight() != need:
            self.graphics.setMinimumHeight(need)

    def wanted_map_width(self, frame) -> int:
        """Pixels of map that name every column of ``frame`` at the smallest tick font and
        the fewest characters on :data:`ASKED_LEVELS` lines; 0 when its columns are not named
        one by one (more than 32, or shrunk)."""
        labels = frame.col_labels
        if not self._named_one_by_one(frame, across=True):
            return 0
        metrics = QFontMetricsF(_sized(self.plot.getAxis("bottom").font(), MIN_POINTS))
        widest = max(metrics.horizontalAdvance(short_label(t, MIN_CHARS)) for t in labels)
        return math.ceil(len(labels) * (widest + 3) / ASKED_LEVELS)

    def _named_one_by_one(self, frame, across: bool) -> bool:
        """True when the columns (``across``) or the rows of ``frame`` are tokens, 2 to 32 of
        them, unshrunk: each gets its name."""
        entry = stage(self.stage)
        count = len(frame.col_labels if across else frame.row_labels)
        tokens = (entry.cols if across else entry.rows) in TOKEN_AXES
        return tokens and 1 < count <= ALL_LABELS_UP_TO and frame.block == (1, 1)

    def shown(self, name: str) -> list[str]:
        """The tick texts on axis ``name`` ("left" or "bottom"), for tests and checks."""
        levels = getattr(self.plot.getAxis(name), "_tickLevels", None) or [[]]
        return [text.lstrip("\n") for _, text in levels[0]]
