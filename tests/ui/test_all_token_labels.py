"""Every token name shows on the axes of short sequences (13-15 tokens showed every other)."""

from __future__ import annotations

import pytest
import window_fixtures
from test_layout import sized

from attention_explorer.ui.heatmap.heatmap_labels import ALL_LABELS_UP_TO, MIN_POINTS, fitting_font

window, dialogs = window_fixtures.window, window_fixtures.dialogs


def _expected(labels, shown) -> bool:
    """True when ``shown`` names every label, each whole or cut with an ellipsis."""
    return len(shown) == len(labels) and all(
        s == t or (s.endswith("…") and len(s) >= 3 and t.startswith(s[:-1]))
        for s, t in zip(shown, labels)
    )


@pytest.mark.parametrize("size", [(1366, 768), (1600, 1000)])
@pytest.mark.parametrize("count", [13, 15])
def test_every_row_and_column_label_shows(window, qtbot, size, count):
    sized(window, qtbot, *size)
    assert window.tokens.set_count(count)
    qtbot.waitUntil(lambda: window.live.trace.n_queries == count, timeout=10000)
    for name in ("scores", "weights"):
        view = window.stages.view(name)
        qtbot.waitUntil(lambda v=view: len(v.frame.row_labels) == count, timeout=5000)
        qtbot.waitUntil(lambda v=view: len(v.axes.shown("left")) == count, timeout=5000)
        tokens = window.live.trace.tokens
        assert _expected(tokens, view.axes.shown("left")), view.axes.shown("left")
        assert _expected(tokens, view.axes.shown("bottom")), view.axes.shown("bottom")


def test_thirty_two_names_fit_a_view_of_ordinary_size(qtbot):
    from PySide6.QtGui import QFont

    labels = tuple(f"tok{i}" for i in range(ALL_LABELS_UP_TO))
    font = QFont()
    font.setPointSizeF(9.0)
    down = fitting_font(labels, 320 / 32, across=False, base=font)
    across = fitting_font(labels, 200 / 32, across=True, base=font)
    assert down is not None and across is not None  # 320 px tall, 200 wide: all 32 named
    assert down[0].pointSizeF() >= MIN_POINTS and across[0].pointSizeF() >= MIN_POINTS
    assert fitting_font(labels, 2.0, across=False, base=font) is None  # 2 px rows: too small
