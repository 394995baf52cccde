"""Connect the walkthrough to the rest of the window: the token strip's "follow this token",
the operands each step reveals, and the q · k pair view. Called once by the main window."""

from __future__ import annotations

from PySide6.QtCore import QTimer

from attention_explorer.ui.walkthrough_reveal import operands, reveal


def connect_walkthrough(window) -> None:
    """Wire ``window``'s walkthrough to its token strip and stage panel."""
    walk = window.walkthrough
    window.tokens.token_chosen.connect(walk.follow_token)

    def reveal_current() -> None:
        step = walk.current()
        if step is not None:
            reveal(window.stages, operands(step))

    def on_step(step) -> None:
        if step is not None:
            reveal(window.stages, operands(step))
            # Again once the views have taken their new sizes (a reflow may follow the step).
            QTimer.singleShot(0, window.stages, reveal_current)

    walk.step_changed.connect(on_step)
