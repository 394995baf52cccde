"""A heatmap card's title and subtitle: plain-text labels above the plot, never over it.

The title (stage and head: "output · W_O · head 0") and the notes (zoomed region, how a long
sequence was shrunk) are Qt labels in the card's layout, not text inside the plot's scene:
the layout stacks title, subtitle and plot, so a long note wraps onto more lines and pushes
the map down instead of overlapping it, the colour bar or the axis labels. The title keeps
its words together ("output · W_O" never splits before "W_O"); notes wrap at spaces.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetricsF, QPalette
from PySide6.QtWidgets import QLabel, QSizePolicy, QVBoxLayout, QWidget

#: Point sizes of the title and of the notes under it.
TITLE_POINTS = 10.0
NOTE_POINTS = 8.0
_NBSP = "\u00a0"


def split_heading(heading: str, stage_title: str) -> tuple[str, list[str]]:
    """(title line, notes) of a frame's heading: "output · W_O · head 0 · 8×8 shown as …"
    gives ("output · W_O · head 0", ["8×8 shown as …"]) with no-break spaces inside the stage
    title and inside "head 0". ``stage_title`` is the stage's own title, which may itself
    hold " · "."""
    if heading.startswith(stage_title):
        rest = heading[len(stage_title) :]
        parts = [p for p in rest.split(" · ") if p]
    else:
        first, *parts = heading.split(" · ")
        stage_title = first
    main = [stage_title.replace(" ", _NBSP)]  # "output · W_O" stays on one line
    if parts and parts[0].startswith("head "):
        main.append(parts.pop(0).replace(" ", _NBSP))
    return " · ".join(main), parts


def wrap_lines(text: str, fits) -> list[str]:
    """``text``'s lines broken at spaces so each fits (``fits(line)`` is True) where it can;
    a single word wider than the room stays whole on its own line (no-break spaces hold)."""
    out: list[str] = []
    for paragraph in text.split("\n"):
        line = ""
        for word in paragraph.split(" "):
            candidate = f"{line} {word}" if line else word
            if line and not fits(candidate):
                out.append(line)
                line = word
            else:
                line = candidate
        out.append(line)
    return out


def _label(points: float) -> QLabel:
    label = QLabel()
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
    font = QFont(label.font())
    font.setPointSizeF(points)
    label.setFont(font)
    label.setForegroundRole(QPalette.ColorRole.Text)
    # Any width: the card wraps the text itself (no word wrap, so no height-for-width, which
    # would make the stage panel's scroll area size the views by their preferred height).
    label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
    return label


class HeatmapTitle(QWidget):
    """The title label (``title``) and the notes label (``subtitle``, hidden when empty)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.title = _label(TITLE_POINTS)
        self.title.setObjectName("heatmap_title")
        self.subtitle = _label(NOTE_POINTS)
        self.subtitle.setObjectName("heatmap_subtitle")
        self.subtitle.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 1, 2, 0)
        layout.setSpacing(0)
        layout.addWidget(self.title)
        layout.addWidget(self.subtitle)
        self._key: tuple[str, str] | None = None
        self._texts = ("", "")
        self._width = -1
        self._scale = 1.0
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)

    def set_heading(self, heading: str, stage_title: str) -> None:
        """Show ``heading`` (a frame's) as title and notes; nothing happens when unchanged."""
        if (heading, stage_title) == self._key:
            return
        self._key = (heading, stage_title)
        main, notes = split_heading(heading, stage_title)
        self._texts = (main, "\n".join(notes))
        self.subtitle.setVisible(bool(notes))
        self._wrap(force=True)

    def set_scale(self, scale: float) -> None:
        """Title and notes ``scale`` times their usual size (presenter mode); 1: as usual."""
        if scale == self._scale:
            return
        self._scale = scale
        for label, points in ((self.title, TITLE_POINTS), (self.subtitle, NOTE_POINTS)):
            font = QFont(label.font())
            font.setPointSizeF(points * scale)
            label.setFont(font)
        self._wrap(force=True)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt API name
        """Wrap title and notes again for the new width (their height follows)."""
        super().resizeEvent(event)
        self._wrap()

    def _wrap(self, force: bool = False) -> None:
        width = self.contentsRect().width() - 6
        if width == self._width and not force:
            return
        self._width = width
        for label, text in zip((self.title, self.subtitle), self._texts):
            metrics = QFontMetricsF(label.font())
            lines = wrap_lines(text, lambda line, m=metrics: m.horizontalAdvance(line) <= width)
            label.setText("\n".join(lines))
            label.setFixedHeight(int(metrics.lineSpacing() * len(lines) + 2))

    def text(self) -> str:
        """Title and notes, joined by " · " as in the frame's heading (plain text)."""
        main, notes = self._texts
        return " · ".join([main.replace(_NBSP, " "), *([notes] if notes else [])]).replace(
            "\n", " · "
        )
