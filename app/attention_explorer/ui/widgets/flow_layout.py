"""A flow layout that prefers one line: items wrap only when the room is narrower than that.

superqt's :class:`QFlowLayout` hints the width of its widest item, so a parent sized by
hints (a dock, a splitter) would give a toolbar or a token strip that little room and wrap
it for no reason. :class:`WrappingRow` hints the width of all items on one line (and the
height of that line), and keeps the flow layout's small minimum, so it wraps only when the
window is really narrow.
"""

from __future__ import annotations

from PySide6.QtCore import QSize
from superqt import QFlowLayout


class WrappingRow(QFlowLayout):
    """:class:`QFlowLayout` whose size hint is its items on one line."""

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt API name
        """All visible items side by side, plus spacing and margins."""
        hints = [
            self.itemAt(i).sizeHint() for i in range(self.count()) if not self.itemAt(i).isEmpty()
        ]
        margins = self.contentsMargins()
        width = sum(h.width() for h in hints) + self.horizontalSpacing() * max(0, len(hints) - 1)
        height = max((h.height() for h in hints), default=0)
        return QSize(
            width + margins.left() + margins.right(), height + margins.top() + margins.bottom()
        )
