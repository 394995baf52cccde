"""Deferred drawing for a heatmap scrolled out of sight: built when it is next painted.

The stage panel hands every view each new trace, but only a few views are on screen at a
time (the panel scrolls). A view whose viewport has no visible pixel marks itself stale
instead of building and drawing its frame; Qt sends a Paint event as soon as any part of it
is scrolled into sight, and the frame is built just before that paint. Nothing is lost:
whoever reads the view's frame earlier (hover, tests, the walkthrough) gets it built then.
A view that is not shown at all (a window not yet on screen) is never deferred.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QWidget


class OffscreenDeferral(QObject):
    """Tracks whether ``view``'s drawing waits for ``viewport`` to come into sight.

    ``rebuild`` builds and draws the frame; it runs from :meth:`flush`, called before the
    viewport's next Paint event or by any reader of the frame.
    """

    def __init__(self, view: QWidget, viewport: QWidget, rebuild: Callable[[], None]):
        super().__init__(view)
        self._view, self._viewport, self._rebuild = view, viewport, rebuild
        self.stale = False
        viewport.installEventFilter(self)

    def off_screen(self) -> bool:
        """True when the view is shown but not one pixel of its viewport is visible."""
        return self._view.isVisible() and self._viewport.visibleRegion().isEmpty()

    def defer(self) -> bool:
        """Mark the view stale and return True when it is off screen; else return False."""
        self.stale = self.off_screen()
        return self.stale

    def flush(self) -> None:
        """Build and draw now if drawing was deferred."""
        if self.stale:
            self.stale = False
            self._rebuild()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API name
        """Before the viewport's first paint since it was deferred, build its frame."""
        if self.stale and watched is self._viewport and event.type() == QEvent.Type.Paint:
            self.flush()
        return False
