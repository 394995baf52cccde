"""The model folders of tests/models (a random GPT-2, a random BERT with an MLM head, the real
MiniLM) for the Model panel's window tests here, and a window fixture with the dock shown."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from PySide6.QtCore import QPointF, QSettings, Qt

from attention_explorer.ui.window.main_window import MainWindow

_spec = importlib.util.spec_from_file_location(
    "model_test_folders", Path(__file__).parents[1] / "models" / "conftest.py"
)
_folders = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_folders)
gpt2_folder = _folders.gpt2_folder
bert_folder = _folders.bert_folder
minilm_folder = _folders.minilm_folder
TEXT = "the cat sat on the mat"


@pytest.fixture
def model_window(qtbot, tmp_path, dialogs):
    """The real window with its Model dock shown (dialogs recorded, questions: Discard)."""
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
    """Type ``model`` and ``text`` into the Model panel and press Load; wait for the overview."""
    panel = window.model_panel
    panel.model_edit.setText(str(model))
    panel.text_edit.setText(text)
    with qtbot.waitSignal(panel.loader.busy, timeout=60000, check_params_cb=lambda b: not b):
        qtbot.mouseClick(panel.load_button, Qt.MouseButton.LeftButton)
    return panel


def map_point(overview, layer, head):
    """The graphics viewport point at the centre of the map of (layer, head)."""
    centre = overview.map_rect(layer, head).center()
    scene = overview.plot.vb.mapViewToScene(QPointF(centre))
    return overview.graphics.mapFromScene(scene)


def open_head(qtbot, window, layer, head):
    """Click the map of (layer, head) and wait until the window shows that layer."""
    panel = window.model_panel
    with qtbot.waitSignal(panel.loader.layer_ready, timeout=60000):
        qtbot.mouseClick(
            panel.overview.graphics.viewport(),
            Qt.MouseButton.LeftButton,
            pos=map_point(panel.overview, layer, head),
        )
    qtbot.waitUntil(lambda: panel.origin is not None, timeout=10000)
