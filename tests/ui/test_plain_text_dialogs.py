"""Message boxes show file and token names literally: never rendered as rich text."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from attention_explorer.ui.widgets import dialogs


def test_warning_and_question_show_markup_as_plain_text(qtbot, monkeypatch):
    seen = []

    def exec_(box):
        seen.append((box.textFormat(), box.text()))
        return QMessageBox.StandardButton.Ok

    monkeypatch.setattr(QMessageBox, "exec", exec_)
    text = "config.<img src=x>: unknown key; token <b>cat</b>"
    assert dialogs.warning(None, "Attention Explorer", text) == QMessageBox.StandardButton.Ok
    dialogs.question(None, "Unsaved changes", f"Save the changes to {text}?")
    assert [fmt for fmt, _ in seen] == [Qt.TextFormat.PlainText] * 2
    assert seen[0][1] == text  # shown as typed, not escaped or interpreted
