"""Message boxes that show their text as plain text, never as rich text.

``QMessageBox.warning`` and ``question`` guess the text format, so a token or file name such
as ``<img src=x>`` in a message would be rendered as HTML. These functions take the same
arguments and return the same button, with the format fixed to plain text. Tests patch them.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget

Button = QMessageBox.StandardButton


def _ask(icon, parent: QWidget | None, title: str, text: str, buttons, default) -> Button:
    box = QMessageBox(icon, title, text, buttons, parent)
    box.setTextFormat(Qt.TextFormat.PlainText)
    if default != Button.NoButton:
        box.setDefaultButton(default)
    return Button(box.exec())


def warning(
    parent: QWidget | None,
    title: str,
    text: str,
    buttons=Button.Ok,
    default=Button.NoButton,
) -> Button:
    """A warning whose ``text`` is shown literally; returns the button pressed."""
    return _ask(QMessageBox.Icon.Warning, parent, title, text, buttons, default)


def question(
    parent: QWidget | None,
    title: str,
    text: str,
    buttons=Button.Yes | Button.No,
    default=Button.NoButton,
) -> Button:
    """A question whose ``text`` is shown literally; returns the button pressed."""
    return _ask(QMessageBox.Icon.Question, parent, title, text, buttons, default)
