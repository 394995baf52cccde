"""The pieces both export dialogs share: folder memory, message line, buttons, busy cursor."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLineEdit, QPushButton

from attention_explorer.ui.export import export_dialog_parts as parts


def test_last_folder_is_the_remembered_one_or_home_when_it_is_gone(tmp_path):
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    assert parts.last_folder(settings) == Path.home()
    settings.setValue(parts.LAST_FOLDER_KEY, str(tmp_path))
    assert parts.last_folder(settings) == tmp_path
    settings.setValue(parts.LAST_FOLDER_KEY, str(tmp_path / "removed"))
    assert parts.last_folder(settings) == Path.home()


def test_the_message_line_never_reads_a_name_as_markup(qtbot):
    message = parts.message_line()
    qtbot.addWidget(message)
    assert message.textFormat() == Qt.TextFormat.PlainText
    assert message.wordWrap()


def test_browse_row_calls_back_and_save_buttons_save_or_cancel(qtbot):
    dialog = QDialog()
    qtbot.addWidget(dialog)
    browsed, saved = [], []
    edit = QLineEdit()
    row = parts.browse_row(edit, lambda: browsed.append(True))
    button = row.itemAt(1).widget()
    assert isinstance(button, QPushButton) and row.itemAt(0).widget() is edit
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert browsed == [True]
    buttons = parts.save_buttons(dialog, lambda: saved.append(True), "Export")
    save = buttons.button(QDialogButtonBox.StandardButton.Save)
    assert save.text() == "Export"
    qtbot.mouseClick(save, Qt.MouseButton.LeftButton)
    assert saved == [True]
    dialog.show()
    qtbot.mouseClick(
        buttons.button(QDialogButtonBox.StandardButton.Cancel), Qt.MouseButton.LeftButton
    )
    assert dialog.result() == QDialog.DialogCode.Rejected and not dialog.isVisible()


def test_the_busy_cursor_is_restored_even_when_the_export_fails(qtbot):
    assert QGuiApplication.overrideCursor() is None
    with pytest.raises(OSError), parts.wait_cursor():
        assert QGuiApplication.overrideCursor().shape() == Qt.CursorShape.WaitCursor
        raise OSError("disk full")
    assert QGuiApplication.overrideCursor() is None
