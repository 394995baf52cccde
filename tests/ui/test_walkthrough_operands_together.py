"""A walkthrough step whose operands the full layout cannot hold on screen lays them out alone
(issue 20, item 2): at 1366x768 the weighted sum shows the weights, V and the head output,
and the score step Q, K and the scores, each view wholly inside the stage column's viewport
with the cells the step reads; the next step, or "Show every view", brings every view back."""

import pytest
from PySide6.QtCore import QRect
from test_walkthrough_reveal import sized
from window_fixtures import explorer_window

from attention_explorer.ui.walkthrough.walkthrough_reveal import cells_rect

SIZES = [(1366, 768), (1600, 1000)]


def wholly_on_screen(panel, stage: str, cells=()) -> bool:
    """True when the view of ``stage`` (and ``cells`` of it) lies inside the viewport."""
    view, scroll = panel.view(stage), panel.scroll_area()
    if not view.isVisible():
        return False
    offset = scroll.verticalScrollBar().value()
    whole = QRect(view.mapTo(scroll.widget(), view.rect().topLeft()), view.size())
    viewport = scroll.viewport().rect()
    cells_there = cells_rect(panel, stage, cells).translated(0, -offset)
    return viewport.contains(whole.translated(0, -offset)) and viewport.contains(cells_there)


def go_to(qtbot, walk, key: str):
    walk.restart()
    while walk.current().key != key:
        walk.go_next()
    qtbot.wait(1)  # the second reveal, once the views have their sizes
    return walk.current()


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize(
    ("key", "stages"),
    [("weighted_sum", ("weights", "V", "head_outputs")), ("scores", ("Q", "K", "scores"))],
)
def test_a_steps_operands_and_result_are_all_on_screen(qtbot, tmp_path, dialogs, size, key, stages):
    with explorer_window(qtbot, tmp_path) as win:
        sized(qtbot, win, size)
        step = go_to(qtbot, win.walkthrough, key)
        panel = win.stages
        cells = dict(step.related) | {step.stage: step.cells}
        assert step.stage == stages[-1] and {s for s, _ in step.related} == set(stages[:-1])
        for stage in stages:
            assert wholly_on_screen(panel, stage, cells[stage]), (key, stage, size)
        assert panel.view(stages[-1]).is_highlighted()
        if panel.gathered():  # laid out alone: in the order the arithmetic reads them
            assert panel.gathered() == stages and panel.show_all_button.isVisible()
            assert panel.on_screen_stages() == stages
        if size == (1366, 768):  # the full layout cannot hold them at this size
            assert panel.gathered() == stages


def test_the_next_step_or_show_every_view_brings_every_view_back(qtbot, tmp_path, dialogs):
    with explorer_window(qtbot, tmp_path) as win:
        sized(qtbot, win, (1366, 768))
        walk, panel = win.walkthrough, win.stages
        everything = set(panel.shown_stages())
        go_to(qtbot, walk, "weighted_sum")
        assert set(panel.on_screen_stages()) == {"weights", "V", "head_outputs"}
        walk.go_next()
        qtbot.wait(1)
        assert panel.gathered() == () and not panel.show_all_button.isVisible()
        assert {"scores", "weights", "head_outputs"} <= set(panel.on_screen_stages())
        go_to(qtbot, walk, "weighted_sum")
        panel.show_all_button.click()  # the learner wants the whole pipeline back
        assert panel.gathered() == ()
        assert set(panel.on_screen_stages()) == everything  # the inputs stay open
        assert panel.inputs_open()
