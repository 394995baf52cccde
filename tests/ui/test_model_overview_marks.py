"""The overview's marks (knocked-out crosses, "unchanged" labels) are drawn once per change:
every edit's result asks for them again, and redrawing the same marks cost ~9 ms a result."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402

from attention_explorer.ui.model.model_overview import ModelOverview  # noqa: E402


def test_the_same_marks_are_kept_and_new_ones_replace_them(qtbot):
    overview = ModelOverview("viridis")
    qtbot.addWidget(overview)
    rng = np.random.default_rng(0)
    overview.set_weights(rng.random((3, 4, 5, 5)), [f"t{i}" for i in range(5)])  # [L, H, n, n]
    overview.set_marks(knocked_out=[(1, 2)], unchanged_layers=[0])
    drawn = list(overview._marks)
    assert overview.marked_crosses() == 1 and overview.unchanged_labels() == 1
    overview.set_marks(knocked_out=[(1, 2)], unchanged_layers=[0])
    assert overview._marks == drawn  # the same items: nothing removed and drawn again
    overview.set_marks(knocked_out=[(1, 2), (2, 0)], unchanged_layers=[0, 1])
    assert overview.marked_crosses() == 2 and overview.unchanged_labels() == 2
    assert not set(map(id, drawn)) & set(map(id, overview._marks))
    overview.set_weights(rng.random((2, 4, 6, 6)), [f"t{i}" for i in range(6)])  # new shape
    overview.set_marks(knocked_out=[(1, 2), (2, 0)], unchanged_layers=[0, 1])
    assert overview.marked_crosses() == 1 and overview.unchanged_labels() == 2  # layer 2 gone
    overview.set_marks()
    assert overview.marked_crosses() == 0 and overview.unchanged_labels() == 0
