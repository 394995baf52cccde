"""Every walkthrough step brings its operands on screen, at 1600x1000 and 1366x768 (issue 20,
item 2): the cells a step reads lie inside the stage panel's scroll viewport."""

import pytest
from PySide6.QtCore import Qt
from window_fixtures import RECOMPUTE_MS, explorer_window

from attention_explorer.ui.walkthrough_reveal import cells_rect, operands

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
            assert on_screen(win, stage, cells), (step.key, stage, size)
            if step.key == "scores":  # the q row and the k row, both
                assert on_screen(win, "Q", wanted[0][1]) and on_screen(win, *wanted[1])
                assert win.stages.inputs_open()
            if step.key == "weighted_sum":
                assert wanted[0][0] == "V"
            checked += 1
        assert checked >= 8
