"""Typing into a matrix editor's cell as a person does: F2, replace the text, Enter."""

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QLineEdit


def type_into_cell(qtbot, editor, row: int, col: int, text: str) -> None:
    """Select the cell, open its editor with F2, replace the text and press Enter."""
    table = editor.table
    table.setFocus()
    table.setCurrentIndex(editor.model().index(row, col))
    qtbot.keyClick(table, Qt.Key.Key_F2)
    line = table.findChild(QLineEdit)
    assert line is not None and line.isVisible()
    line.selectAll()
    qtbot.keyClick(line, Qt.Key.Key_Backspace)
    qtbot.keyClicks(line, text)
    press_enter(qtbot, editor, line)


def press_enter(qtbot, editor, line: QLineEdit) -> None:
    """Enter in the cell editor; Qt commits on the next event-loop turn, so wait for it."""
    qtbot.keyClick(line, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: editor.table.state() != QAbstractItemView.State.EditingState)
