"""The export dialog's decimals choice: "as on screen" by default, remembered, and used."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import xml.etree.ElementTree as ET

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QWidget

from attention_explorer.engine import compute
from attention_explorer.session.examples import load_example
from attention_explorer.ui.export.export_dialog import ExportDialog
from attention_explorer.ui.state.preferences import ViewPreferences


def _svg_texts(path) -> list[str]:
    return [e.text for e in ET.parse(path).getroot().iter() if e.text and e.text.strip()]


_PARENTS: list[QWidget] = []  # the dialogs' parent windows, kept alive for the test


def _dialog(qtbot, settings):
    data = load_example("three-tokens")
    trace = compute(data.inputs, data.config, tokens=data.tokens, kv_tokens=data.kv_tokens)
    parent = QWidget()
    qtbot.addWidget(parent)
    _PARENTS.append(parent)
    return ExportDialog(parent, trace, ViewPreferences(), settings, "weights", 0)


def test_decimals_default_to_the_screen_and_are_remembered(qtbot, tmp_path):
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    dialog = _dialog(qtbot, settings)
    box = dialog.options.decimals_box
    assert box.currentText() == "as on screen" and dialog.options.decimals() is None
    dialog.format_box.setCurrentIndex(dialog.format_box.findData("svg"))
    dialog.path_edit.setText(str(tmp_path / "screen.svg"))
    assert dialog.export(), dialog.message.text()
    assert "0.2483" in _svg_texts(tmp_path / "screen.svg")  # the window's digits

    dialog = _dialog(qtbot, settings)
    dialog.format_box.setCurrentIndex(dialog.format_box.findData("svg"))
    dialog.options.decimals_box.setCurrentIndex(dialog.options.decimals_box.findData(2))
    dialog.path_edit.setText(str(tmp_path / "two.svg"))
    assert dialog.export(), dialog.message.text()
    texts = _svg_texts(tmp_path / "two.svg")
    assert "0.25" in texts and "0.2483" not in texts

    again = _dialog(qtbot, settings)  # the next export starts from the last choice
    assert again.options.decimals() == 2
