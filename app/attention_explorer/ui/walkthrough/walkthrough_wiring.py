"""Connect the walkthrough to the rest of the window: the token strip's "follow this token",
the operands each step reveals, the q · k pair view and the weights · V view.
Called once by the main window, which keeps the side views it returns."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QTimer

from attention_explorer.ui.pipeline.dot_product_view import DotProductView
from attention_explorer.ui.walkthrough.walkthrough_reveal import (
    OperandMarks,
    operands,
    reveal,
    together,
)
from attention_explorer.ui.walkthrough.walkthrough_sum_view import WeightedSumView


@dataclass(frozen=True)
class SideViews:
    """The views the walkthrough shows beside its narration."""

    dot_product: DotProductView
    weighted_sum: WeightedSumView
    marks: OperandMarks


def connect_walkthrough(window) -> SideViews:
    """Wire ``window``'s walkthrough to its token strip and stage panel; returns the side
    views it made."""
    walk = window.walkthrough
    window.tokens.token_chosen.connect(walk.follow_token)
    pair = DotProductView(window.session, window.history, window.live)
    total = WeightedSumView(window.session, window.history, window.live)
    walk.add_side_view(pair)
    walk.add_side_view(total)
    for view in (pair, total):  # "Type Q, K, V…": the window asks, then switches
        view.direct_requested.connect(window.offer_direct_mode)

    def show_pair(step) -> None:
        key = step.key if step is not None else None
        pair.setVisible(key == "scores")
        total.setVisible(key == "weighted_sum")
        if key == "scores":
            pair.show_pair(step.head, *step.cells[0])
        elif key == "weighted_sum":
            total.show_pair(step.head, step.cells[0][0], 0)  # output[i, 0], as narrated

    def reveal_current() -> None:
        step = walk.current()
        if step is not None:
            reveal(window.stages, operands(step), together(step))

    marks = OperandMarks(window.stages)

    def on_step(step) -> None:
        marks.show(step)
        if step is None or not operands(step):  # every view again; "About": from the top
            window.stages.gather(())
        if step is not None and not operands(step):
            window.stages.scroll_area().verticalScrollBar().setValue(0)
        elif step is not None:
            reveal(window.stages, operands(step), together(step))
            # Again once the views have taken their new sizes (a reflow may follow the step).
            QTimer.singleShot(0, window.stages, reveal_current)

    walk.step_changed.connect(show_pair)
    walk.step_changed.connect(on_step)
    return SideViews(pair, total, marks)
