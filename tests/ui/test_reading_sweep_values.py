"""The knockout sweep's map writes each head's change in its cell (issue 31, item 13), as the
stage views do, when the cells are large enough."""

import numpy as np

from attention_explorer.core.numbers import format_number
from attention_explorer.core.stage_colours import DEFAULT_DIVERGING
from attention_explorer.ui.model.compare_view import FrameView
from attention_explorer.ui.model.model_sweep import AXES, sweep_frame


def test_the_sweep_map_writes_each_change_in_its_cell(qtbot):
    changes = np.array([[0.125, -1.5, 0.0], [2.25, -0.0625, 0.5]])  # [layers, heads]
    frame = sweep_frame(changes, "log-probability of a token at a position")
    view = FrameView()
    qtbot.addWidget(view)
    view.resize(520, 400)
    view.show()
    qtbot.waitExposed(view)
    view.show_frame(frame, DEFAULT_DIVERGING, AXES, "change when each head is knocked out")
    qtbot.waitUntil(lambda: view.texts.drawn() == frame.texts, timeout=3000)
    assert len(frame.texts) == 6
    assert format_number(-1.5, decimals=3, display=True) in view.texts.drawn()
    colours = view.texts.drawn_colours()
    assert set(colours) <= {"#000000", "#ffffff"} and len(colours) == 6
    view.show_message("no sweep yet")  # a message instead of a map: nothing left written
    view.show_frame(frame, DEFAULT_DIVERGING, AXES)
    assert view.texts.drawn() == frame.texts
