"""Issue 31.16: a large picture export is estimated first (measured on a small picture, as the
sweep does) and asks before it runs; an ordinary one never asks."""

from __future__ import annotations

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMessageBox, QWidget

from attention_explorer.engine import compute
from attention_explorer.session.examples import load_example
from attention_explorer.ui.export import export_estimate
from attention_explorer.ui.export.export_all_dialog import ExportAllDialog
from attention_explorer.ui.export.export_dialog import ExportDialog
from attention_explorer.ui.state.preferences import ViewPreferences
from attention_explorer.ui.widgets import dialogs as message_boxes

_PARENTS: list[QWidget] = []


def _trace():
    data = load_example("three-tokens")
    return compute(data.inputs, data.config, tokens=data.tokens, kv_tokens=data.kv_tokens)


def _parent(qtbot) -> QWidget:
    parent = QWidget()
    qtbot.addWidget(parent)
    _PARENTS.append(parent)
    return parent


def _answer(monkeypatch, button):
    asked: list[str] = []

    def question(parent, title, text, *args, **kwargs):
        asked.append(text)
        return button

    monkeypatch.setattr(message_boxes, "question", question)
    return asked


def _export_dialog(qtbot, tmp_path, size, fmt="png"):
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    dialog = ExportDialog(_parent(qtbot), _trace(), ViewPreferences(), settings, "weights", 0)
    dialog.format_box.setCurrentIndex(dialog.format_box.findData(fmt))
    dialog.options.width_box.setValue(size[0])
    dialog.options.height_box.setValue(size[1])
    dialog.path_edit.setText(str(tmp_path / f"big.{fmt}"))
    return dialog


def test_the_largest_png_is_estimated_and_a_no_writes_nothing(qtbot, tmp_path, monkeypatch):
    asked = _answer(monkeypatch, QMessageBox.StandardButton.No)
    dialog = _export_dialog(qtbot, tmp_path, (16384, 16384))
    assert dialog.export() is False
    assert not (tmp_path / "big.png").exists()
    assert len(asked) == 1
    assert "16384×16384 picture will take about " in asked[0]
    assert " s and 1.1 GB of memory" in asked[0]  # 16384² pixels × 4 bytes
    assert "smaller size" in dialog.message.text()


def test_a_yes_exports(qtbot, tmp_path, monkeypatch):
    monkeypatch.setattr(export_estimate, "ASK_SECONDS", 0.0)  # any measured time asks
    monkeypatch.setattr(export_estimate, "PROBE_ABOVE_PIXELS", 1000)
    asked = _answer(monkeypatch, QMessageBox.StandardButton.Yes)
    dialog = _export_dialog(qtbot, tmp_path, (900, 700))
    assert dialog.export() is True
    assert asked and (tmp_path / "big.png").stat().st_size > 0


def test_ordinary_exports_never_ask(qtbot, tmp_path, monkeypatch):
    asked = _answer(monkeypatch, QMessageBox.StandardButton.No)
    assert _export_dialog(qtbot, tmp_path, (1200, 900)).export() is True
    assert _export_dialog(qtbot, tmp_path, (16384, 16384), "svg").export() is True  # vectors
    assert asked == []


def test_the_estimate_grows_with_the_pixels(qapp):
    trace = _trace()
    look = {"show_values": False}
    small = export_estimate.estimate_export(trace, "weights", 0, "png", (2048, 2048), 150, look)
    assert small is None  # 4 megapixels: exported at once
    large = export_estimate.estimate_export(trace, "weights", 0, "png", (8192, 8192), 150, look)
    assert large.memory == 8192 * 8192 * 4 and large.seconds > 0
    vector = export_estimate.estimate_export(trace, "weights", 0, "pdf", (8192, 8192), 150, look)
    assert vector is None


def test_export_all_counts_every_picture(qtbot, tmp_path, monkeypatch):
    monkeypatch.setattr(export_estimate, "ASK_SECONDS", 0.0)
    asked = _answer(monkeypatch, QMessageBox.StandardButton.No)
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    trace = _trace()
    dialog = ExportAllDialog(_parent(qtbot), lambda: trace, ViewPreferences(), settings)
    for fmt, box in dialog.format_boxes.items():
        box.setChecked(fmt == "png")
    dialog.options.width_box.setValue(4000)
    dialog.options.height_box.setValue(3000)
    dialog.folder_edit.setText(str(tmp_path / "all"))
    assert dialog.export() is False
    assert len(asked) == 1 and " pictures)" in asked[0]
    assert not (tmp_path / "all").exists() or not any((tmp_path / "all").iterdir())
