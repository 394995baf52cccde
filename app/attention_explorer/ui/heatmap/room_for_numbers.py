"""Room for a heatmap's numbers: when a view is too narrow for its cells' values at a readable
size, the colour bar gives its width to the map (each cell then says its value, which is
what the bar would be read for); when even that is not enough, the view says so.

Transformer Explainer writes a value in every cell of its small matrices; at 1366x768 the
walkthrough's score step lays q, k and the scores side by side in views about 260 pixels
wide, where the colour bar took 61 of them and no number fitted.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QPalette
from PySide6.QtWidgets import QLabel, QSizePolicy

from attention_explorer.ui.heatmap.heatmap_texts import fitting_point_size

#: What the view says while its values are hidden because they do not fit.
HIDDEN_TEXT = "values hidden: cells too small (zoom in, or hover a cell)"
#: Pixels the colour bar takes beside the map before it is first measured.
DEFAULT_BAR_ROOM = 61.0


def hidden_values_note() -> QLabel:
    """The small plain-text line a view shows while its numbers are hidden."""
    note = QLabel(HIDDEN_TEXT)
    note.setObjectName("values_hidden_note")
    note.setTextFormat(Qt.TextFormat.PlainText)
    note.setToolTip(HIDDEN_TEXT)
    note.setAlignment(Qt.AlignmentFlag.AlignHCenter)
    font = QFont(note.font())
    font.setPointSizeF(7.5)
    note.setFont(font)
    note.setForegroundRole(QPalette.ColorRole.PlaceholderText)
    note.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
    note.hide()
    return note


def room_for_numbers(view, frame) -> tuple[tuple[float, float], bool]:
    """((cell width, cell height) in pixels, whether the colour bar stays) for ``frame``'s
    numbers in ``view``: the bar stays when the numbers fit beside it or do not fit even
    without it. The decision reads the width map and bar share, which hiding the bar does
    not change, so it never flips back and forth."""
    box, bar = view.plot.getViewBox(), view.bar
    r0, r1, c0, c1 = frame.region
    cols, rows = max(1, c1 - c0), max(1, r1 - r0)
    if bar.isVisible() and bar.width() > 0:
        view._bar_room = float(bar.width())
    bar_room = view._bar_room
    shared = box.width() + (bar_room if bar.isVisible() else 0.0)  # map and bar together
    height = box.height() / rows
    scale = getattr(view.texts, "scale", 1.0)
    with_bar = ((shared - bar_room) / cols, height)
    if box.width() <= 1 or fitting_point_size(frame.texts, *with_bar, scale=scale):
        return with_bar, True
    without = (shared / cols, height)
    if fitting_point_size(frame.texts, *without, scale=scale):
        return without, False
    return with_bar, True


#: The map's top margin inside the view while no note is shown (half the top row's label).
TOP_MARGIN = 8


def place_hidden_note(view, shown: bool) -> None:
    """Show or hide ``view``'s note over the top edge of its plot area, one line (elided to
    the width; the whole sentence on hover). The note takes its line from the map, never
    from the view's height: a view that fitted on screen with its numbers still fits when
    it says they are hidden (the walkthrough keeps whole views on screen at 1366x768)."""
    note, graphics = view.hidden_note, view.graphics
    if note.parent() is not graphics:
        note.setParent(graphics)
    line = note.fontMetrics().height()
    top = line + 2 if shown else TOP_MARGIN
    left, old_top, right, bottom = graphics.ci.getContentsMargins()
    if old_top != top:
        graphics.ci.setContentsMargins(left, top, right, bottom)
    width = max(1, graphics.width())
    note.setText(note.fontMetrics().elidedText(HIDDEN_TEXT, Qt.TextElideMode.ElideRight, width))
    note.setGeometry(0, 0, width, line)
    note.setVisible(shown)
