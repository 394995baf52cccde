"""The pieces both export dialogs are built from: the path row, the message line, the
Save/Cancel buttons, the remembered folder and the wait cursor while files are written."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QHBoxLayout, QLabel, QLineEdit, QPushButton

#: The settings key of the folder the last export went to.
LAST_FOLDER_KEY = "export/last_folder"


def last_folder(settings: QSettings) -> Path:
    """The folder of the last export (or the home folder)."""
    folder = Path(str(settings.value(LAST_FOLDER_KEY, str(Path.home()))))
    return folder if folder.is_dir() else Path.home()


def browse_row(edit: QLineEdit, on_browse: Callable[[], None]) -> QHBoxLayout:
    """``edit`` stretched, with a "Browse…" button that calls ``on_browse``."""
    browse = QPushButton("Browse…")
    browse.clicked.connect(on_browse)
    row = QHBoxLayout()
    row.addWidget(edit, 1)
    row.addWidget(browse)
    return row


def message_line() -> QLabel:
    """The line under the options where a refused export says why (plain text, red)."""
    message = QLabel()
    message.setTextFormat(Qt.TextFormat.PlainText)  # messages quote file and stage names
    message.setWordWrap(True)
    message.setStyleSheet("color: #c0392b;")
    return message


def save_buttons(
    dialog: QDialog, on_save: Callable[[], object], save_text: str = ""
) -> QDialogButtonBox:
    """Save (its text ``save_text`` when given) calls ``on_save``; Cancel closes ``dialog``."""
    buttons = QDialogButtonBox(
        QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
    )
    if save_text:
        buttons.button(QDialogButtonBox.StandardButton.Save).setText(save_text)
    buttons.accepted.connect(on_save)
    buttons.rejected.connect(dialog.reject)
    return buttons


@contextmanager
def wait_cursor() -> Iterator[None]:
    """Show the busy cursor while the block runs, and restore it however the block ends."""
    QGuiApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
    try:
        yield
    finally:
        QGuiApplication.restoreOverrideCursor()
