# ruff: noqa: F811 - the fixtures imported from model_save_folders are redefined as parameters
"""The window's Save As: a model session is saved by reference, or standalone when the user
picks "Standalone session" in the file dialog; both reopen in the window, exact to the bit."""

from __future__ import annotations

import json

import numpy as np
import pytest
from model_save_folders import TEXT, tiny_folder  # noqa: F401 - fixtures
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QFileDialog, QMessageBox

import attention_explorer as ae
from attention_explorer.ui.widgets import dialogs as message_boxes
from attention_explorer.ui.window.main_window import MainWindow
from attention_explorer.ui.window.session_file import FILE_FILTER, SAVE_FILTER, STANDALONE_FILTER


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    """The real window, questions answered Discard, closed after without asking to save."""
    monkeypatch.setattr(
        message_boxes, "question", lambda *a, **k: QMessageBox.StandardButton.Discard
    )
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    win = MainWindow(session=None, settings=settings)
    qtbot.addWidget(win)
    yield win
    win.history.mark_clean()
    win.live.shutdown()
    win.close()


def save_as(monkeypatch, window, path, kind) -> list:
    """Run File > Save As with the dialog answering ``path`` and the filter ``kind``."""
    offered = []

    def dialog(parent, caption, start, filters, *args, **kwargs):
        offered.append(filters)
        return str(path), kind

    monkeypatch.setattr(QFileDialog, "getSaveFileName", dialog)
    assert window.document.save_as()
    return offered


@pytest.mark.parametrize(
    ("kind", "key"), [(FILE_FILTER.split(";;")[0], "model"), (STANDALONE_FILTER, "arrays")]
)
def test_save_as_offers_standalone_and_both_reopen(
    window, monkeypatch, tmp_path, tiny_folder, kind, key
):
    data = ae.from_model(tiny_folder, TEXT, layer=1)
    window.document.replace(data)
    W_Q = window.session.inputs.W_Q.copy()  # [d_model, heads * d_k]
    W_Q[2, 3] = 4.5
    window.session.inputs = window.session.inputs.with_changes(W_Q=W_Q)
    path = tmp_path / "saved.json"
    offered = save_as(monkeypatch, window, path, kind)
    assert offered == [SAVE_FILTER] and STANDALONE_FILTER in SAVE_FILTER
    doc = json.loads(path.read_text())
    assert key in doc and doc["inputs"] == {"mode": "projection"}
    assert window.document.standalone == (key == "arrays")
    window.document.replace(ae.example("starter"))
    assert window.document.open(path)
    assert window.session.inputs.W_Q[2, 3] == 4.5
    for name, array in data.inputs.arrays().items():
        expected = W_Q if name == "W_Q" else array
        assert np.array_equal(window.session.inputs.arrays()[name], expected), name
