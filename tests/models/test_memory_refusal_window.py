# ruff: noqa: F811 - the window fixture imported from test_model_panel is redefined as a parameter
"""The Model dock refuses a model too big for this machine's memory with the one-line message
the API raises, naming what it needs and what is available, and changes nothing."""

from __future__ import annotations

from PySide6.QtCore import Qt

from attention_explorer.diagnostics import llama_scale_bench as bench
from attention_explorer.pretrained.checkpoint import stored
from tests.models.conftest import tiny_scale_config
from tests.models.test_model_panel import window  # noqa: F401  (the real window)

TINY = tiny_scale_config("llama-3.2-1b", head_dim=8)


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
