"""At 1366x768 the token strip and the matrix editor's toolbar wrap instead of being cut off."""

from __future__ import annotations

import pytest
import window_fixtures
from PySide6.QtCore import QRect
from test_layout import sized

window, dialogs = window_fixtures.window, window_fixtures.dialogs


def _inside(widget, area) -> bool:
    """True when all of ``widget`` lies inside ``area`` (a widget), in ``area``'s coordinates."""
    rect = QRect(widget.mapTo(area, widget.rect().topLeft()), widget.size())
    return area.rect().contains(rect)


@pytest.mark.parametrize("count", [4, 14, 18])
def test_every_token_name_box_is_in_view(window, qtbot, count):
    sized(window, qtbot, 1366, 768)
    strip = window.tokens
    assert strip.set_count(count)
    qtbot.waitUntil(lambda: len(strip.edits()) == count)
    viewport = strip.query_row.scroll.viewport()

    def all_in_view() -> bool:
        return all(_inside(edit, viewport) for edit in strip.edits())

    qtbot.waitUntil(all_in_view, timeout=3000)
    assert not strip.query_row.scroll.horizontalScrollBar().isVisible()
    lines = {edit.mapTo(viewport, edit.rect().topLeft()).y() for edit in strip.edits()}
    if count >= 14:
        assert len(lines) > 1  # many names take more lines, none cut off


def test_the_editor_toolbar_wraps_and_every_tool_is_in_view(window, qtbot):
    sized(window, qtbot, 1366, 768)
    editor = window.matrices.editor("X")
    tools = (
        editor.random_button,
        editor.seed_spin,
        editor.zeros_button,
        editor.identity_button,
        editor.scale_button,
        editor.factor_spin,
    )
    qtbot.waitUntil(lambda: all(_inside(t, editor) and t.isVisible() for t in tools), timeout=3000)
    assert editor.width() < sum(t.sizeHint().width() for t in tools)  # too narrow for one line
    rows = {t.mapTo(editor, t.rect().topLeft()).y() for t in tools}
    assert len(rows) > 1
    table = editor.table
    bottom = max(t.mapTo(editor, t.rect().bottomLeft()).y() for t in tools)
    assert table.mapTo(editor, table.rect().topLeft()).y() > bottom  # the table stays below


def test_more_names_than_four_lines_scroll_down_never_sideways(window, qtbot):
    sized(window, qtbot, 1366, 768)
    strip = window.tokens
    assert strip.set_count(40)
    qtbot.waitUntil(lambda: len(strip.edits()) == 40)
    scroll = strip.query_row.scroll
    holder = scroll.widget()
    qtbot.waitUntil(lambda: all(_inside(e, holder) for e in strip.edits()), timeout=3000)
    assert holder.width() <= scroll.viewport().width()  # every line fits the width
    assert scroll.verticalScrollBar().maximum() > 0  # the rest is a scroll down away
