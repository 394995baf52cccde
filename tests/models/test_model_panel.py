"""The Model dock in the real window: loading off the UI thread, the layers x heads overview,
clicking a map to open that head, hovering a token, the edited mark and the way back."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QPointF, QSettings, Qt
from PySide6.QtWidgets import QApplication, QMessageBox

from attention_explorer.pretrained import from_model, model_attention
from attention_explorer.ui.widgets import dialogs as message_boxes
from attention_explorer.ui.window.main_window import MainWindow

TEXT = "the cat sat on the mat"


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    """The real window with its Model dock shown; message boxes answer "Discard"."""
    monkeypatch.setattr(message_boxes, "warning", lambda *a, **k: QMessageBox.StandardButton.Ok)
    monkeypatch.setattr(
        message_boxes, "question", lambda *a, **k: QMessageBox.StandardButton.Discard
    )
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    win = MainWindow(session=None, settings=settings)
    qtbot.addWidget(win)
    win.model_dock.show()
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.history.mark_clean()
    win.live.shutdown()
    win.close()


def load(qtbot, window, model, text=TEXT):
    panel = window.model_panel
    panel.model_edit.setText(str(model))
    panel.text_edit.setText(text)
    with qtbot.waitSignal(panel.loader.busy, timeout=30000, check_params_cb=lambda b: not b):
        qtbot.mouseClick(panel.load_button, Qt.MouseButton.LeftButton)
    return panel


def click_map(qtbot, panel, layer, head):
    overview = panel.overview
    centre = overview.map_rect(layer, head).center()
    scene = overview.plot.vb.mapViewToScene(QPointF(centre))
    point = overview.graphics.mapFromScene(scene)
    with qtbot.waitSignal(panel.loader.layer_ready, timeout=30000):
        qtbot.mouseClick(overview.graphics.viewport(), Qt.MouseButton.LeftButton, pos=point)
    qtbot.waitUntil(lambda: panel.origin is not None)


def test_open_model_is_in_the_file_menu(window):
    file_menu = window.menuBar().actions()[0].menu()
    texts = [a.text() for a in file_menu.actions()]
    assert texts.index("Open &Model…") == texts.index("&Open…") + 1
    assert window.menus.open_model.shortcut().toString() == "Ctrl+Shift+M"


def test_load_shows_every_layer_and_head(qtbot, window, gpt2_folder):
    busy = []
    window.model_panel.loader.busy.connect(busy.append)
    panel = load(qtbot, window, gpt2_folder)
    assert busy == [True, False]  # the work ran on the loader's thread, with progress
    weights, tokens = model_attention(gpt2_folder, TEXT)
    np.testing.assert_allclose(panel.overview.weights, weights, atol=1e-6)
    assert [panel.token_button(i).text() for i in range(len(tokens))] == list(tokens)
    assert panel.layer_spin.maximum() == 2
    assert "3 layers x 4 heads" in panel.message.text()


def test_clicking_a_map_opens_that_head_editable(qtbot, window, gpt2_folder):
    panel = load(qtbot, window, gpt2_folder)
    click_map(qtbot, panel, layer=1, head=2)
    session = window.session
    assert session.selected_head == 2 and session.config.heads == 4
    assert session.config.mask == "causal"
    want = from_model(gpt2_folder, TEXT, layer=1)
    np.testing.assert_array_equal(session.inputs.X, want.inputs.X)
    assert panel.origin_label.text().startswith("The numbers of layer 1 of")
    assert not panel.back_button.isVisible()


def test_an_edit_is_marked_and_the_model_numbers_come_back(qtbot, window, gpt2_folder):
    panel = load(qtbot, window, gpt2_folder)
    click_map(qtbot, panel, layer=2, head=0)
    original = window.session.inputs
    with window.history.transaction("Edit W_Q"):
        window.session.inputs = original.with_array("W_Q", original.W_Q * 2.0)
    assert panel.origin_label.text() == f"Edited from layer 2 of {gpt2_folder.name}"
    assert panel.back_button.isVisible()
    qtbot.mouseClick(panel.back_button, Qt.MouseButton.LeftButton)
    assert window.session.inputs == original
    assert not panel.back_button.isVisible()
    window.history.undo()  # the way back is one undo step
    np.testing.assert_array_equal(window.session.inputs.W_Q, original.W_Q * 2.0)


def test_hovering_a_token_outlines_its_row_in_every_head(qtbot, window, gpt2_folder):
    panel = load(qtbot, window, gpt2_folder)
    panel.layer_spin.setValue(1)
    button = panel.token_button(3)
    QApplication.sendEvent(button, QEvent(QEvent.Type.Enter))
    rows = panel.overview.highlighted_rows()
    assert len(rows) == 4  # one per head of the picked layer
    assert {r.y() - panel.overview.map_rect(1, 0).y() for r in rows} == {3.0}
    QApplication.sendEvent(button, QEvent(QEvent.Type.Leave))
    assert panel.overview.highlighted_rows() == []


def test_a_bad_folder_says_why_and_changes_nothing(qtbot, window, tmp_path):
    before = window.session.data()
    panel = window.model_panel
    panel.model_edit.setText(str(tmp_path))
    with qtbot.waitSignal(panel.loader.failed, timeout=30000) as failed:
        qtbot.mouseClick(panel.load_button, Qt.MouseButton.LeftButton)
    assert "lacks config.json" in failed.args[0]
    assert "lacks config.json" in panel.message.text()
    assert window.session.data() == before


def test_another_document_clears_the_model_mark(qtbot, window, gpt2_folder):
    panel = load(qtbot, window, gpt2_folder)
    click_map(qtbot, panel, layer=0, head=1)
    assert panel.origin is not None
    window.open_example("minilm-it-cat")
    assert panel.origin is None and panel.origin_label.text() == ""
