"""No view title is shown cut at the edge of the stage column (issue 31, item 13: at 1366x768
the next view's title "head output A·V" showed its top half under the column's bottom edge).
Every title is either seen whole or not at all, at each walkthrough step and at every scroll
position; a title seen whole is never covered."""

from __future__ import annotations

import pytest
import window_fixtures
from test_layout import sized

window, dialogs = window_fixtures.window, window_fixtures.dialogs


def _rows_left(top: int, bottom: int, height: int, strips) -> set[int]:
    """The pixel rows of a title (``top`` to ``bottom``) inside a viewport ``height`` tall and
    under none of ``strips`` (the covers, full-width rectangles)."""
    rows = set(range(max(top, 0), min(bottom, height - 1) + 1))
    for strip in strips:
        rows -= set(range(strip.top(), strip.bottom() + 1))
    return rows


def titles_seen_cut(panel) -> list[tuple[str, int, int]]:
    """(stage, top, bottom) of every title of which only a part can be seen; asserts the
    covers lie above the views and that no title seen whole is covered."""
    cover, viewport = panel.title_cover, panel.scroll_area().viewport()
    strips = cover.covered()
    order = viewport.children()
    inner = order.index(panel.scroll_area().widget())
    assert all(order.index(s) > inner for s in (cover.top, cover.bottom) if s.isVisible())
    cut = []
    for name, view in panel.views().items():
        title = view.title_bar
        if not title.isVisibleTo(viewport):
            continue
        rect = cover.title_rect(title)
        whole = set(range(rect.top(), rect.bottom() + 1))
        seen = _rows_left(rect.top(), rect.bottom(), viewport.height(), strips)
        if seen and seen != whole:
            cut.append((name, rect.top(), rect.bottom()))
        if 0 <= rect.top() and rect.bottom() < viewport.height():  # in sight: never covered
            assert not any(s.intersects(rect) for s in strips), name
    return cut


def _every_scroll_position_shows_titles_whole(panel, qtbot):
    bar = panel.scroll_area().verticalScrollBar()
    assert bar.maximum() > 0  # the column scrolls: titles can meet its edges
    for value in range(0, bar.maximum() + 1, 7):
        bar.setValue(value)
        assert titles_seen_cut(panel) == [], value
    bar.setValue(bar.maximum())
    assert titles_seen_cut(panel) == []


@pytest.mark.parametrize("size", [(1366, 768), (1600, 1000)])
def test_no_title_is_cut_at_any_step_or_scroll_position(window, qtbot, size):
    sized(window, qtbot, *size)
    walk, panel = window.walkthrough, window.stages
    seen = set()
    while walk.current().key not in seen:
        seen.add(walk.current().key)
        qtbot.wait(30)
        assert titles_seen_cut(panel) == [], walk.current().key
        walk.go_next()
    assert {"weights", "weighted_sum"} <= seen
    walk.restart()
    window.stages.gather(())  # every view: the longest column
    qtbot.wait(50)
    _every_scroll_position_shows_titles_whole(panel, qtbot)


def test_titles_stay_whole_on_a_long_example_and_after_a_resize(window, qtbot):
    sized(window, qtbot, 1366, 768)
    assert window.open_example("tiny-induction-copy")
    qtbot.waitUntil(lambda: window.stages.view("weights").frame is not None, timeout=10000)
    qtbot.wait(100)
    panel = window.stages
    _every_scroll_position_shows_titles_whole(panel, qtbot)
    window.resize(1366, 700)  # the viewport's edge moves: the covers follow
    qtbot.waitUntil(lambda: window.height() == 700)
    qtbot.wait(50)
    assert titles_seen_cut(panel) == []
    _every_scroll_position_shows_titles_whole(panel, qtbot)
