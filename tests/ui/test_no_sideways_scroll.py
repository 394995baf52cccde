"""The stage column never scrolls sideways by a pixel or two: a line of views, with its
captions, spacing and margins, is no wider than the sum of the widths the panel packed it by
(at 1366x768 the starter's two views a line came out 1 px too wide, and a scroll bar took 12 px
of height). The check is on the layout's own numbers, so it holds whatever the fonts."""

from __future__ import annotations

import pytest
import window_fixtures
from test_layout import sized

window, dialogs = window_fixtures.window, window_fixtures.dialogs


@pytest.mark.parametrize("size", [(1366, 768), (1600, 1000)])
@pytest.mark.parametrize("example", ["starter", "causal-mask", "minilm-it-cat"])
def test_every_line_fits_the_width_it_was_packed_for(window, qtbot, size, example):
    sized(window, qtbot, *size)
    assert example == "starter" or window.open_example(example)  # the starter is open
    qtbot.waitUntil(lambda: window.stages.on_screen_stages() != (), timeout=5000)
    qtbot.wait(200)  # the views draw, then the panel lays them out
    panel = window.stages
    needs = panel._latch[1]  # the widths the lines were packed by (pack_rows sums them)
    column = panel._column
    left, _, right, _ = column.getContentsMargins()
    for line in panel._arrangement[1]:
        if not all(name in needs for name in line):
            continue
        spacing = column.itemAt(1).layout().spacing() if column.count() > 1 else 2
        least = sum(
            panel._captions[name].minimumWidth() + panel.view(name).minimumWidth() for name in line
        )
        least += spacing * (2 * len(line) - 1) + left + right
        assert least <= sum(needs[name] for name in line), (line, least)
    assert panel.scroll_area().horizontalScrollBar().maximum() == 0
