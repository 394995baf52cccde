"""CellArithmetic: the arithmetic of the selected cell, in a panel the keyboard can reach.

The hover tooltip of a stage view shows the same text, but only under the mouse; this panel
follows ``session.selected_stage`` / ``selected_cell`` / ``selected_head`` and the live trace,
so a learner who moves the selection with the keyboard (or reads with a screen reader) gets
every step. The text comes from the engine's ``explain`` and is shown as plain text.
"""

from __future__ import annotations

from PySide6.QtWidgets import QPlainTextEdit, QVBoxLayout, QWidget

from attention_explorer.engine import explain
from attention_explorer.session import Session
from attention_explorer.ui.state.live_trace import LiveTrace

#: Terms listed per dot product before "... and N more".
PANEL_TERMS = 16


class CellArithmetic(QWidget):
    """Read-only text of ``explain(trace, stage, head, row, col)`` for the selected cell."""

    def __init__(self, session: Session, live: LiveTrace, parent: QWidget | None = None):
        super().__init__(parent)
        self.session = session
        self.live = live
        self.setObjectName("cellArithmetic")
        self.text = QPlainTextEdit(self)
        self.text.setReadOnly(True)
        self.text.setAccessibleName("Arithmetic of the selected cell")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.text)
        for name in ("selected_cell", "selected_stage", "selected_head"):
            getattr(session.events, name).connect(self.refresh)
        live.updated.connect(self.refresh)
        self.refresh()

    def refresh(self, *_args: object) -> None:
        """Show the arithmetic of the selected cell, or what to do to get one.

        While the panel is hidden (closed, or a tab behind another) nothing is computed: an
        edit's repaint does not pay for an explanation nobody reads; showing the panel
        refreshes it.
        """
        if self.isVisible():
            self.text.setPlainText(self._explanation())

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Bring the text up to date when the panel comes into view."""
        super().showEvent(event)
        self.text.setPlainText(self._explanation())

    def _explanation(self) -> str:
        trace, s = self.live.trace, self.session
        if trace is None:
            return "Nothing is computed yet."
        if s.selected_cell is None:
            return "Select a cell of a stage view (click it) to see how its number comes about."
        stage, head = s.selected_stage, s.selected_head
        if not trace.has(stage) or head not in trace.heads:
            return f"The {stage} stage of head {head} is not computed here."
        rows, cols = trace.stage(stage, head).shape
        row, col = s.selected_cell
        if not 0 <= row < rows:
            return f"The selected row is outside {stage}."
        col = col if 0 <= col < cols else 0  # a key column of a stage with other columns
        return explain(trace, stage, head, row, col, max_terms=PANEL_TERMS).text()
