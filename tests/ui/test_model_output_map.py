"""The Output panel's small maps (ui/model/model_output.py): after an edit of the same text only the
values change, so the axes keep their ticks; a new text lays them out again."""

from __future__ import annotations

import numpy as np

from attention_explorer.ui.model.model_output import _Map


def test_a_map_redraws_its_axes_only_when_the_names_change(qtbot, monkeypatch):
    strip = _Map("viridis", 120)
    qtbot.addWidget(strip)
    rows, cols = ["embeddings", "layer 0"], ["the", "cat", "sat"]
    strip.draw(np.zeros((2, 3)), rows, cols, (0.0, 1.0))
    calls = []
    bottom = strip.plot.getAxis("bottom")
    original = bottom.setTicks
    monkeypatch.setattr(bottom, "setTicks", lambda ticks: (calls.append(ticks), original(ticks)))
    values = np.array([[0.0, 0.5, 1.0], [0.25, 0.75, 0.1]])  # [2, 3]
    strip.draw(values, rows, cols, (0.0, 1.0))
    np.testing.assert_array_equal(strip.values, values)
    np.testing.assert_array_equal(strip.image.image, values.astype(np.float32))
    assert calls == []  # same names and shape: the ticks stay
    strip.draw(np.ones((2, 4)), rows, [*cols, "down"], (0.0, 1.0))
    assert len(calls) == 1 and [t[1] for t in calls[0][0]][-1] == "down"
    assert strip.image.mapRectToParent(strip.image.boundingRect()).width() == 4
