"""The Model dock refuses a model too big for this machine's memory with the one-line message
the API raises, naming what it needs and what is available, and changes nothing."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QMessageBox

from attention_explorer.pretrained import scale_bench as bench
from attention_explorer.pretrained import stored
from attention_explorer.ui import dialogs as message_boxes
from attention_explorer.ui.main_window import MainWindow

TINY = {
    **bench.SIZES["llama-3.2-1b"],
    "hidden_size": 32,
    "intermediate_size": 48,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 8,
    "vocab_size": 300,
}


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    """The real window with its Model dock shown."""
    monkeypatch.setattr(message_boxes, "warning", lambda *a, **k: QMessageBox.StandardButton.Ok)
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


def test_the_window_says_how_much_memory_a_model_needs(qtbot, window, tmp_path, monkeypatch):
    folder = tmp_path / "big-model"
    bench.write_checkpoint(folder, TINY)
    monkeypatch.setattr(stored, "available_memory", lambda: 50 * 2**20)
    before = window.session.data()
    panel = window.model_panel
    panel.model_edit.setText(str(folder))
    panel.text_edit.setText("the cat sat")
    with qtbot.waitSignal(panel.loader.failed, timeout=30000) as failed:
        qtbot.mouseClick(panel.load_button, Qt.MouseButton.LeftButton)
    message = failed.args[0]
    assert "needs about 0.3 GiB of memory" in message and "0.0 GiB available" in message
    assert "needs about" in panel.message.text() and "\n" not in message
    assert window.session.data() == before
