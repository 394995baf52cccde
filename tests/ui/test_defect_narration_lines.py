"""Issue 31.13: the walkthrough's narration never shows a line cut through the middle at its
bottom edge, whatever its height and scroll position."""

import pytest
from PySide6.QtCore import QPoint

from attention_explorer.ui.walkthrough.walkthrough_panel import Narration

TEXT = "".join(
    f"<p>Paragraph {k}: the query of “cat” meets the key of “sat”; multiply the two vectors "
    f"number by number and add the products, which gives the score {k}.25.</p>"
    for k in range(30)
)


def lowest_line_in_sight(narration):
    """(top, bottom) of the text line at the bottom of what is in sight (the viewport above
    the cover, when the cover is shown)."""
    bottom = narration.viewport().height()
    if narration.cover.isVisible():
        bottom = narration.cover.geometry().top()
    line = narration.cursorRect(narration.cursorForPosition(QPoint(10, bottom - 1)))
    return line.top(), line.bottom(), bottom


@pytest.mark.parametrize("height", [97, 120, 143, 166])
def test_no_line_is_cut_at_the_bottom(qtbot, height):
    narration = Narration()
    qtbot.addWidget(narration)
    narration.setHtml(TEXT)
    narration.resize(420, height)
    narration.show()
    qtbot.waitExposed(narration)
    bar = narration.verticalScrollBar()
    for value in (0, 7, 31, bar.maximum() // 2):
        bar.setValue(value)
        qtbot.wait(5)  # the cover follows on the next turn of the event loop
        top, bottom, edge = lowest_line_in_sight(narration)
        assert bottom < edge or top >= edge, (value, top, bottom, edge)
    bar.setValue(bar.maximum())  # the end of the text: its last line whole, nothing covered
    qtbot.wait(5)
    top, bottom, edge = lowest_line_in_sight(narration)
    assert bottom < edge
