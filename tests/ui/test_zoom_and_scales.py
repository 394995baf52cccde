"""Long sequences worth looking at: zoom to exact cells, the wheel, weights' colour scales,
and the selected weights cell traced back to q_i, k_j and the V rows it uses."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, QSettings, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication, QGraphicsRectItem, QScrollArea

from attention_explorer.session.evented_session import Session
from attention_explorer.session.resize import set_token_count
from attention_explorer.session.starter import starter_session
from attention_explorer.ui.pipeline.stage_panel import StagePanel
from attention_explorer.ui.state.live_trace import LiveTrace
from attention_explorer.ui.state.preferences import ViewPreferences


@pytest.fixture
def panel_for(qtbot):
    made = []

    def make(tokens: int | None = None):
        data = starter_session()
        if tokens:
            data = set_token_count(data, tokens)
        session = Session.from_data(data)
        live = LiveTrace(session)
        prefs = ViewPreferences()
        panel = StagePanel(session, live, prefs)
        qtbot.addWidget(panel)
        panel.resize(1100, 850)
        panel.show()
        qtbot.waitExposed(panel)
        live.recompute_now()
        made.append(live)
        qtbot.waitUntil(lambda: panel.view("weights").frame is not None, timeout=20000)
        return session, live, prefs, panel

    yield make
    for live in made:
        live.shutdown()


def _wheel(widget, ctrl: bool = False, steps: int = -1) -> None:
    centre = QPointF(widget.width() / 2, widget.height() / 2)
    modifiers = Qt.KeyboardModifier.ControlModifier if ctrl else Qt.KeyboardModifier.NoModifier
    event = QWheelEvent(
        centre,
        widget.mapToGlobal(centre),
        QPoint(0, 0),
        QPoint(0, 120 * steps),
        Qt.MouseButton.NoButton,
        modifiers,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(widget, event)


def selection_frames(view) -> list[tuple[float, float, float, float]]:
    """(x, y, width, height) of every selection frame the view draws, in cell units."""
    return sorted(
        {
            (r.x(), r.y(), r.width(), r.height())
            for item in view.plot.items
            if isinstance(item, QGraphicsRectItem) and item.isVisible()
            for r in [item.rect()]
        }
    )


def test_zoom_keys_show_exact_cells_at_full_resolution(panel_for, qtbot):
    _, live, _, panel = panel_for(600)
    view = panel.view("weights")
    assert view.frame.block == (2, 2)  # 600×600 shown as 300×300 blocks
    view.graphics.setFocus()
    for _ in range(5):
        qtbot.keyClick(view.graphics, Qt.Key.Key_Plus)
    qtbot.waitUntil(lambda: view.frame.zoomed and view.frame.block == (1, 1))
    r0, r1, c0, c1 = view.frame.region
    assert r1 - r0 < 40 and c1 - c0 < 40
    exact = live.trace.stage("weights", 0)[r0:r1, c0:c1]  # [r, c] full resolution
    np.testing.assert_array_equal(view.frame.image, exact)
    assert "rows" in view.frame.heading and "of 600×600" in view.frame.heading
    qtbot.keyClick(view.graphics, Qt.Key.Key_0)
    qtbot.waitUntil(lambda: not view.frame.zoomed and view.frame.block == (2, 2))


def test_a_zoomed_region_writes_its_numbers_when_they_fit(panel_for, qtbot):
    _, live, _, panel = panel_for(600)
    view = panel.view("scores")
    view.plot.getViewBox().setRange(xRange=(100, 104), yRange=(200, 204), padding=0)
    qtbot.waitUntil(lambda: view.frame.region == (200, 204, 100, 104))
    qtbot.waitUntil(lambda: len(view.texts.drawn()) == 16)
    assert view.frame.texts[0] == view.frame.texts[0].strip() != ""


def test_the_wheel_scrolls_the_stage_column_unless_zoomed(panel_for, qtbot):
    _, _, _, panel = panel_for()
    panel.resize(1100, 500)  # the column is taller than the panel: it scrolls
    scroll = panel.findChild(QScrollArea)
    bar = scroll.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0)
    view = panel.view("scores")
    panel.highlight_stage("X")  # scroll to the top
    start = bar.value()
    _wheel(view.graphics.viewport())
    assert bar.value() > start  # scrolled down, the view did not zoom
    assert not view.frame.zoomed
    moved = bar.value()
    _wheel(view.graphics.viewport(), ctrl=True, steps=3)  # Ctrl + wheel zooms the view
    qtbot.waitUntil(lambda: view.zoom.zoomed())
    assert bar.value() == moved


def test_per_row_scale_from_the_context_menu_is_drawn_and_remembered(panel_for, qtbot, tmp_path):
    _, live, prefs, panel = panel_for()
    view = panel.view("weights")
    menu = view.context_menu()
    scales = next(a.menu() for a in menu.actions() if a.text() == "Colour scale")
    row = next(a for a in scales.actions() if a.text() == "Each row against its maximum")
    row.trigger()
    assert prefs.weights_scale == "row"
    weights = live.trace.stage("weights", 0)  # [n, m]
    np.testing.assert_allclose(view.frame.image, weights / weights.max(axis=1, keepdims=True))
    assert view.bar.axis.labelText == "÷ row max"
    assert panel.view("scores").frame.scale_caption == ""  # only weights change scale
    settings = QSettings(str(tmp_path / "prefs.ini"), QSettings.Format.IniFormat)
    prefs.save(settings)
    assert ViewPreferences.load(settings).weights_scale == "row"
    prefs.weights_scale = "log"
    assert view.bar.axis.labelText == "log scale"


def test_selected_weights_cell_highlights_q_i_k_j_and_the_used_value_rows(panel_for):
    session, live, _, panel = panel_for()
    session.selected_cell = (2, 1)  # query 2 attends to keys 0..2 under the causal mask
    d_k = live.trace.stage("Q", 0).shape[1]
    d_v = live.trace.stage("V", 0).shape[1]
    assert selection_frames(panel.view("weights")) == [(1, 2, 1, 1)]
    assert selection_frames(panel.view("Q")) == [(0, 2, d_k, 1)]
    assert selection_frames(panel.view("K")) == [(0, 1, d_k, 1)]
    used = np.flatnonzero(live.trace.stage("weights", 0)[2])
    assert used.tolist() == [0, 1, 2]
    assert selection_frames(panel.view("V")) == [(0, 0, d_v, 3)]
    assert selection_frames(panel.view("X")) == [(0, 2, live.trace["X"].shape[1], 1)]


def test_pipeline_order_starts_with_the_input_and_the_projections(panel_for):
    _, _, _, panel = panel_for()
    shown = panel.shown_stages()
    assert shown[:4] == ("X", "Q", "K", "V") and shown.index("V") < shown.index("scores")
    assert "positions" not in shown  # positions are off in the starter


def test_a_long_title_is_shown_in_full_on_lines_of_its_own(panel_for):
    _, _, _, panel = panel_for(600)
    view = panel.view("weights")
    heading = "softmax weights · head 0 · 600×600 shown as 300×300, max of 2×2 blocks"
    assert view.frame.heading == heading
    bar = view.title_bar
    assert bar.title.text() == "softmax\u00a0weights · head\u00a00"
    assert bar.subtitle.text() == "600×600 shown as 300×300, max of 2×2 blocks"
    assert bar.geometry().bottom() < view.graphics.geometry().top()  # above the plot
