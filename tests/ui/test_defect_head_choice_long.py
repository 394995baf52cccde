"""Issue 31.7: on a long sequence (4096 tokens: the pass holds the selected head only) a head
clicked in All heads stays chosen on every step: the walkthrough, whose steps were built on a
trace without that head, must not write its own step's head back into the selection."""

import pytest
from main_window_checks import choose
from PySide6.QtCore import QPointF, Qt

WAIT_MS = 30000


def click_head(qtbot, grid, head: int) -> None:
    """A left click in the middle of ``head``'s thumbnail in All heads."""
    centre = grid.head_box(head).sceneBoundingRect().center()
    point = grid.graphics.mapFromScene(QPointF(centre))
    qtbot.mouseClick(grid.graphics.viewport(), Qt.MouseButton.LeftButton, pos=point)


@pytest.mark.parametrize(("tokens", "step"), [(40, 0), (4096, 0), (4096, 3)])
def test_a_head_clicked_in_all_heads_stays_selected(qtbot, window, tokens, step):
    walk = window.walkthrough
    qtbot.waitUntil(lambda: walk.current() is not None, timeout=WAIT_MS)
    choose(window.controls.heads, 4)  # as the learner does: the Controls, on the starter
    with qtbot.waitSignal(window.live.updated, timeout=WAIT_MS):
        window.controls.tokens.setValue(tokens)
    assert window.live.trace.heads == ((0,) if tokens == 4096 else (0, 1, 2, 3))
    walk.restart()
    for _ in range(step):
        walk.go_next()
    grid = window.heads_grid
    grid.show()
    qtbot.waitExposed(grid)
    click_head(qtbot, grid, 2)
    assert window.session.selected_head == 2  # not written back to 0 at once
    qtbot.waitUntil(lambda: 2 in window.live.trace.heads, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: walk.current().head == 2, timeout=WAIT_MS)
    assert window.session.selected_head == 2 and grid.selected_frame() == 2
    assert walk.index() == step
    walk.go_next()
    assert window.session.selected_head == 2 and walk.current().head == 2
