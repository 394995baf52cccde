"""No heatmap title is ever shown cut by the edge of the scroll area that holds the views.

At 1366x768 the stage column showed the top half of the next view's title ("head output A·V")
under its bottom edge. A title (with its notes) is either seen whole or not at all:
:class:`CutTitleCover` lays a blank strip, in the viewport's background, over every title that
the viewport's top or bottom edge cuts, from the cut title to that edge. The strip passes mouse
clicks and the wheel through, and follows scrolling, resizing and the views' moves.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, QObject, QPoint, QRect, Qt
from PySide6.QtWidgets import QScrollArea, QWidget

#: Events after which a title may sit elsewhere in the viewport.
_MOVES = frozenset(
    {QEvent.Type.Move, QEvent.Type.Resize, QEvent.Type.Show, QEvent.Type.Hide}
    | {QEvent.Type.LayoutRequest}
)


def _strip(viewport: QWidget) -> QWidget:
    """A blank strip over ``viewport``'s children, painted in its background colour."""
    strip = QWidget(viewport)
    strip.setObjectName("cutTitleCover")
    strip.setBackgroundRole(viewport.backgroundRole())
    strip.setAutoFillBackground(True)
    strip.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
    strip.hide()
    return strip


class CutTitleCover(QObject):
    """Covers whichever of ``titles`` (title widgets inside ``scroll``'s widget; hidden ones
    are skipped) the viewport's top or bottom edge cuts. It follows the scroll bars, the
    viewport's and the scrolled widget's size, and each title's and its parent's moves."""

    def __init__(self, scroll: QScrollArea, titles: Sequence[QWidget]):
        super().__init__(scroll)
        self.scroll, self.titles = scroll, tuple(titles)
        viewport = scroll.viewport()
        self.top, self.bottom = _strip(viewport), _strip(viewport)
        scroll.verticalScrollBar().valueChanged.connect(self.update)
        scroll.horizontalScrollBar().valueChanged.connect(self.update)
        watched = {viewport, scroll.widget()}
        watched |= {w for t in self.titles for w in (t, t.parentWidget()) if w is not None}
        for widget in watched:
            widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        """A watched widget moved or changed size: cover the titles cut now."""
        if event.type() in _MOVES and watched not in (self.top, self.bottom):
            self.update()
        return False

    def title_rect(self, title: QWidget) -> QRect:
        """``title``'s rectangle in viewport coordinates."""
        return QRect(title.mapTo(self.scroll.viewport(), QPoint(0, 0)), title.size())

    def update(self, *_args) -> None:
        """Lay the strips over the titles cut by the viewport's top and bottom edges."""
        viewport = self.scroll.viewport()
        height = viewport.height()
        top_end, bottom_start = None, None  # the strips: [0, top_end], [bottom_start, height)
        for title in self.titles:
            if not title.isVisibleTo(viewport) or title.height() <= 0:
                continue
            rect = self.title_rect(title)
            if rect.top() < 0 <= rect.bottom():  # cut by the top edge
                top_end = max(top_end or 0, rect.bottom())
            if rect.top() < height <= rect.bottom():  # cut by the bottom edge
                bottom_start = min(height if bottom_start is None else bottom_start, rect.top())
        width = viewport.width()
        self._place(self.top, None if top_end is None else QRect(0, 0, width, top_end + 1))
        if bottom_start is not None:
            bottom_start = max(0, bottom_start)
        strip = None if bottom_start is None else QRect(0, bottom_start, width, height)
        self._place(self.bottom, strip)

    @staticmethod
    def _place(strip: QWidget, rect: QRect | None) -> None:
        if rect is None:
            strip.hide()
            return
        if strip.geometry() != rect:
            strip.setGeometry(rect)
        strip.show()
        strip.raise_()

    def covered(self) -> list[QRect]:
        """The strips shown now, in viewport coordinates (for tests and checks)."""
        return [s.geometry() for s in (self.top, self.bottom) if s.isVisibleTo(s.parentWidget())]
