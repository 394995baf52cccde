"""StageKeys: the keyboard in the stage column.

* Ctrl+] and Ctrl+[ select the next or previous stage view (in pipeline order, the folded
  inputs included), give it the focus and scroll it into sight;
* the focused view wears a 2-pixel frame in the highlight colour (light and dark themes);
* the arrow keys move the selected cell inside the focused view (the Cell arithmetic panel
  follows the selection), Home goes back to the first cell.

The session's ``selected_stage`` and ``selected_cell`` hold the state, as they do for a click.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeySequence, QShortcut

#: How a focused view is framed: the palette's highlight colour, so both themes show it.
FOCUS_FRAME = "border: 2px solid palette(highlight);"
#: Arrow key -> (row step, column step).
ARROW_STEPS = {
    Qt.Key.Key_Up: (-1, 0),
    Qt.Key.Key_Down: (1, 0),
    Qt.Key.Key_Left: (0, -1),
    Qt.Key.Key_Right: (0, 1),
}


class StageKeys(QObject):
    """Keyboard navigation for a StagePanel: stage steps and cell moves."""

    def __init__(self, panel):
        super().__init__(panel)
        self.panel = panel
        # The panel's own shortcuts work anywhere in the window that holds it.
        for keys, step in (("Ctrl+]", 1), ("Ctrl+[", -1)):
            shortcut = QShortcut(QKeySequence(keys), panel)
            shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
            shortcut.activated.connect(lambda step=step: self.step_stage(step))
        for stage, view in panel.views().items():
            view.graphics.installEventFilter(self)
            view.graphics.setProperty("stage", stage)
            view.graphics.setAccessibleName(f"Stage view {stage}")

    def stages(self) -> tuple[str, ...]:
        """The stages the keyboard steps through: every stage this computation has."""
        return self.panel.shown_stages()

    def step_stage(self, step: int) -> str | None:
        """Select the stage ``step`` places after (before, when negative) the selected one."""
        stages = self.stages()
        if not stages:
            return None
        current = self.panel.session.selected_stage
        index = stages.index(current) + step if current in stages else 0
        return self.select_stage(stages[max(0, min(len(stages) - 1, index))])

    def select_stage(self, stage: str) -> str:
        """Make ``stage`` the selected stage: focus its view and bring it on screen."""
        self.panel.session.selected_stage = stage
        self.panel.bring_into_view(stage)
        self.panel.view(stage).graphics.setFocus(Qt.FocusReason.ShortcutFocusReason)
        return stage

    def move_cell(self, stage: str, rows: int, cols: int) -> tuple[int, int] | None:
        """Move the selected cell of ``stage`` by (rows, cols), kept inside the stage."""
        view = self.panel.view(stage)
        if view.frame is None:
            return None
        n_rows, n_cols = view.frame.shape
        session = self.panel.session
        row, col = session.selected_cell or (0, 0)
        if session.selected_stage != stage:  # a key column means the same cell everywhere
            row, col = min(row, n_rows - 1), min(col, n_cols - 1)
        row = max(0, min(n_rows - 1, row + rows))
        col = max(0, min(n_cols - 1, col + cols))
        view.select_cell(row, col)
        return session.selected_cell

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt API name
        """Arrow keys and Home on a focused view move its selected cell."""
        if event.type() == QEvent.Type.FocusIn:
            watched.setStyleSheet(FOCUS_FRAME)
            stage = watched.property("stage")
            if stage and self.panel.session.selected_stage != stage:
                self.panel.session.selected_stage = stage
        elif event.type() == QEvent.Type.FocusOut:
            watched.setStyleSheet("")
        if event.type() != QEvent.Type.KeyPress or event.modifiers() & (
            Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier
        ):
            return False
        stage = watched.property("stage")
        if event.key() == Qt.Key.Key_Home:
            view = self.panel.view(stage)
            if view.frame is not None:
                view.select_cell(0, 0)
            return True
        if event.key() in ARROW_STEPS:
            self.move_cell(stage, *ARROW_STEPS[event.key()])
            return True
        return False
