"""The model overview shows what an edit changed (issue 31, item 4): MiniLM's 6 x 12 maps fit
the dock, "+" zooms in (the grid scrolls) and "Fit" goes back; a difference gets a colour bar
with its range and scrolls to the first layer it changed; a difference of zeros says why."""

import numpy as np
import pytest

from attention_explorer.ui.model.model_overview import NOTHING_CHANGED_TEXT, ModelOverview

TOKENS = [f"t{i}" for i in range(13)]


@pytest.fixture
def overview(qtbot):
    view = ModelOverview("viridis")
    qtbot.addWidget(view)
    view.resize(560, 380)  # a dock at 1366x768
    view.show()
    qtbot.waitExposed(view)
    return view


def _weights(seed=0):
    rng = np.random.default_rng(seed)
    w = rng.random((6, 12, 13, 13))  # [L, H, n, n]
    return w / w.sum(-1, keepdims=True)


def _every_map_in_sight(view) -> bool:
    return all(view.layer_in_sight(k) for k in range(6)) and not (
        view.scroll.horizontalScrollBar().maximum() or view.scroll.verticalScrollBar().maximum()
    )


def test_the_grid_fits_the_dock_and_zooms_in(overview, qtbot):
    overview.set_weights(_weights(), TOKENS)
    qtbot.waitUntil(lambda: _every_map_in_sight(overview), timeout=3000)
    overview.zoom_in.click()
    bars = (overview.scroll.horizontalScrollBar(), overview.scroll.verticalScrollBar())
    qtbot.waitUntil(lambda: any(bar.maximum() > 0 for bar in bars), timeout=3000)
    assert overview.map_pixels(0, 0).width() >= 40 - 1
    overview.fit_button.click()
    qtbot.waitUntil(lambda: _every_map_in_sight(overview), timeout=3000)


def test_a_difference_has_a_colour_bar_and_scrolls_to_the_first_changed_layer(overview, qtbot):
    diff = np.zeros((6, 12, 13, 13))
    diff[4:] = _weights(1)[4:] - _weights(2)[4:]  # an edit in layer 4 moves layers 4 and 5
    bound = float(np.abs(diff).max())
    overview.set_zoom(3)  # zoomed in: layer 4 starts out of sight
    overview.set_weights(diff, TOKENS, (-bound, bound))
    assert overview.bar.isVisible() and overview.bar.levels() == pytest.approx((-bound, bound))
    assert overview.changed_layers() == [4, 5]
    qtbot.waitUntil(lambda: overview.layer_in_sight(4), timeout=3000)
    assert overview.scroll.verticalScrollBar().value() > 0
    overview.set_weights(_weights(), TOKENS)  # weights again: no bar
    assert not overview.bar.isVisible()


def test_a_difference_of_zeros_says_why_nothing_changed(overview, qtbot):
    overview.set_weights(np.zeros((6, 12, 13, 13)), TOKENS, (-1.0, 1.0))
    assert overview.pages.currentWidget() is overview.empty
    assert overview.empty.text() == NOTHING_CHANGED_TEXT and "knockout" in NOTHING_CHANGED_TEXT
    overview.set_weights(_weights(), TOKENS)
    assert overview.pages.currentWidget() is overview.scroll
