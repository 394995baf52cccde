# ruff: noqa: F811 - the fixtures imported from model_folders are redefined as parameters
"""The Model panel in the window: explicit arguments and signals, following the open model
session, Open Model without a needless folder chooser, no empty plot before Load, labelled
thumbnails of at least 40 px, the W_Q editor on the selected head, tints that survive an edit."""

from __future__ import annotations

import numpy as np
import pytest
from model_folders import (  # noqa: F401 - fixtures pytest finds here
    TEXT,
    gpt2_folder,
    load,
    map_point,
    model_window,
    open_head,
)
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QColor, QMouseEvent
from PySide6.QtWidgets import QApplication, QFileDialog

from attention_explorer.pretrained import from_model
from attention_explorer.session import Session, load_session, save_session
from attention_explorer.session.starter import starter_session
from attention_explorer.ui.model.model_panel import DEFAULT_TEXT, ModelPanel
from attention_explorer.ui.state.panel_context import PanelContext


@pytest.fixture
def no_chooser(monkeypatch):
    """Record folder-chooser calls (answering "cancelled") instead of blocking on them."""
    asked = []

    def chooser(*args, **kwargs):
        asked.append(args)
        return ""

    monkeypatch.setattr(QFileDialog, "getExistingDirectory", chooser)
    return asked


def test_the_panel_stands_alone_on_a_session_history_and_prefs(qtbot, gpt2_folder):
    session = Session.from_data(starter_session())
    panel = ModelPanel(PanelContext.for_session(session))
    qtbot.addWidget(panel)
    assert not hasattr(panel, "window") or callable(panel.window)  # QWidget.window only
    panel.model_edit.setText(str(gpt2_folder))
    panel.text_edit.setText(TEXT)
    with qtbot.waitSignal(panel.loader.overview_ready, timeout=60000):
        panel.load()
    with qtbot.waitSignal(panel.open_requested, timeout=60000) as opened:
        panel.open_head(1, 2)
    data, head = opened.args
    assert head == 2 and data.experiment["model"]["layer"] == 1
    assert session.config.heads == 2  # the panel asks; the window opens
    with qtbot.waitSignal(panel.status) as status:
        panel.loader.failed.emit("no such model")
    assert status.args == ["no such model", 15000]


def test_a_saved_model_session_is_followed_by_open_model(
    qtbot, model_window, gpt2_folder, tmp_path, no_chooser
):
    window = model_window
    path = tmp_path / "layer2.json"
    save_session(path, from_model(gpt2_folder, "the dog ran in the park", layer=2))
    panel = window.model_panel
    assert panel.text_edit.text() == DEFAULT_TEXT
    assert window.document.open(path)
    assert panel.text_edit.text() == "the dog ran in the park"
    assert panel.model_edit.text() == str(gpt2_folder)
    with qtbot.waitSignal(panel.loader.overview_ready, timeout=60000):
        window.menus.open_model.trigger()
    assert no_chooser == []
    assert panel.text == "the dog ran in the park"
    assert panel.overview.tokens == load_session(path).tokens
    assert panel.layer_spin.value() == 2


def test_open_model_asks_for_a_folder_only_when_none_is_named(qtbot, model_window, no_chooser):
    panel = model_window.model_panel
    panel.model_edit.setText("")
    assert not model_window.open_model()
    assert len(no_chooser) == 1


def test_no_plot_before_load_then_maps_of_at_least_40_px(qtbot, model_window, gpt2_folder):
    window = model_window
    window.resize(1366, 768)
    window.resizeDocks([window.model_dock], [420], Qt.Orientation.Horizontal)
    overview = window.model_panel.overview
    assert overview.is_empty() and overview.pages.currentWidget() is overview.empty
    assert not overview.graphics.isVisible()
    load(qtbot, window, gpt2_folder)
    assert overview.graphics.isVisible()
    qtbot.waitUntil(lambda: overview.map_pixels(2, 3).width() >= 40)
    for layer, head in ((0, 0), (2, 3)):
        rect = overview.map_pixels(layer, head)
        assert rect.width() >= 40 and rect.height() >= 40


def test_hovering_a_thumbnail_names_its_query_and_key(qtbot, model_window, gpt2_folder):
    panel = load(qtbot, model_window, gpt2_folder)
    overview = panel.overview
    layer, head, row, col = 1, 2, 3, 1
    text = overview.hover_text(layer, head, row, col)
    tokens = overview.tokens
    assert f"query “{tokens[row]}” → key “{tokens[col]}”" in text
    assert f"layer {layer}, head {head}" in text
    # The event goes straight to the viewport: with the Model dock shown the window is wider
    # (1307 px) than the 800 px offscreen screen, and a move past its edge reaches no widget.
    viewport = overview.graphics.viewport()
    point = QPointF(map_point(overview, 0, 1))
    move = QMouseEvent(
        QEvent.Type.MouseMove,
        point,
        viewport.mapToGlobal(point),
        Qt.MouseButton.NoButton,
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(viewport, move)
    qtbot.waitUntil(lambda: overview.hover.text().startswith("layer 0, head 1: query"))
    assert overview.hover.textFormat() == Qt.TextFormat.PlainText


def test_the_w_q_editor_scrolls_to_the_selected_heads_columns(qtbot, model_window, gpt2_folder):
    window = model_window
    load(qtbot, window, gpt2_folder)
    open_head(qtbot, window, 0, 3)
    window.resize(1366, 768)
    window.matrices.show_array("W_Q")
    table = window.matrices.editor("W_Q").table
    qtbot.waitUntil(lambda: table.horizontalScrollBar().maximum() > 0)
    d_k = window.session.config.head_dim
    qtbot.waitUntil(lambda: table.columnAt(2) == 3 * d_k)
    window.session.selected_head = 1
    assert table.columnAt(2) == 1 * d_k
    assert table.model().headerData(d_k, Qt.Orientation.Horizontal) == "h1.0"


def background(model, i, j) -> QColor:
    return model.data(model.index(i, j), Qt.ItemDataRole.BackgroundRole).color()


def test_one_far_out_edit_leaves_the_other_cells_their_colours(qtbot, model_window, gpt2_folder):
    window = model_window
    load(qtbot, window, gpt2_folder)
    open_head(qtbot, window, 0, 0)
    model = window.matrices.editor("W_Q").model()
    w_q = window.session.inputs.W_Q  # [d_model, heads*d_k]
    before = {background(model, 1, j).name() for j in range(12)}
    big = float(np.abs(w_q).max()) * 50
    with window.history.transaction("Edit W_Q"):
        window.session.inputs = window.session.inputs.with_array(
            "W_Q", np.where(np.indices(w_q.shape).sum(0) == 0, big, w_q)
        )
    after = {background(model, 1, j).name() for j in range(12)}
    assert len(after) >= len(before) - 2 > 4  # still many colours, not one
    low, high = model._tint_range  # the scale leaves the far-out cell out ...
    assert high < big / 10
    assert background(model, 0, 0).name() not in after  # ... which shows at the scale's end
