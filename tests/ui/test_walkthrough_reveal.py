"""Every walkthrough step brings its operands on screen, at 1600x1000 and 1366x768 (issue 20,
item 2): the framed view wholly, the cells it reads where they fit beside it (checked by their
geometry inside the stage panel's scroll viewport), and at the score step the q · k pair."""

import pytest
from PySide6.QtCore import Qt
from window_fixtures import RECOMPUTE_MS, explorer_window

from attention_explorer.ui.walkthrough.walkthrough_reveal import cells_rect, operands

SIZES = [(1600, 1000), (1366, 768)]
EXAMPLES = [None, "causal-mask", "minilm-it-cat"]


def sized(qtbot, win, size):
    win.setWindowState(Qt.WindowState.WindowNoState)
    win.resize(*size)
    win.fit_docks(*size)
    qtbot.waitUntil(lambda: win.size().width() == size[0])


def on_screen(win, stage, cells) -> bool:
    panel = win.stages
    viewport = panel.scroll_area().viewport()
    offset = panel.scroll_area().verticalScrollBar().value()
    rect = cells_rect(panel, stage, cells).translated(0, -offset)
    rect = rect.adjusted(0, 0, 0, -1)  # the last pixel row may touch the edge
    return panel.view(stage).isVisible() and viewport.rect().contains(rect)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("example", EXAMPLES)
def test_every_steps_first_operands_are_on_screen(qtbot, tmp_path, dialogs, size, example):
    with explorer_window(qtbot, tmp_path) as win:
        sized(qtbot, win, size)
        if example:
            with qtbot.waitSignal(win.live.updated, timeout=RECOMPUTE_MS * 4):
                assert win.open_example(example)
        walk = win.walkthrough
        walk.restart()
        checked = 0
        for index, step in enumerate(walk.steps()):
            while walk.index() < index:
                walk.go_next()
            qtbot.wait(1)  # the second reveal, once the views have their sizes
            wanted = operands(step)
            if not wanted:
                continue
            stage, cells = wanted[0]
            assert stage == step.stage and on_screen(win, stage, cells), (step.key, size)
            if step.key == "scores":  # the q row and the k row: in the views when they fit
                assert win.stages.inputs_open()
                q_row, k_row = wanted[1], wanted[2]
                pair = win.dot_product
                assert pair.isVisible() and pair.pair == (step.head, *step.cells[0])
                if size == (1600, 1000):
                    assert on_screen(win, *q_row) and on_screen(win, *k_row)
            if step.key == "weighted_sum":
                assert [s for s, _ in wanted] == ["head_outputs", "V", "weights"]
                total = win.sum_view  # V beside the weights, where the column has no room
                assert total.isVisible() and total.pair == (step.head, step.cells[0][0], 0)
                v = win.live.trace.stage("V", step.head)[: len(total.canvas.k), 0]
                assert list(total.canvas.k) == list(v)
            checked += 1
        assert checked >= 8
