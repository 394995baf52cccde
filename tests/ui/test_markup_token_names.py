"""A token name is text, never markup: fed through every place the window shows a name.

Qt guesses whether a string is rich text (Qt.mightBeRichText) wherever a widget, tooltip or
header has the automatic format, so a token named ``<b>cat</b>`` could render as bold "cat"
or an ``<img src=x>`` as an image. Each place must either use plain text or escape the name,
so that the name reads literally.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QAbstractButton, QLabel, QTextEdit
from window_fixtures import RECOMPUTE_MS, dialogs, window  # noqa: F401

from attention_explorer.session import SessionData
from attention_explorer.ui.editing.matrix_model import MatrixModel

MARKUP = ("<b>cat</b>", "<img src=x>", "a&amp;b", "<i>sat")


def _rendered(text: str, fmt) -> str:
    """What a person reads for ``text`` shown in format ``fmt`` (auto: Qt's guess)."""
    rich = fmt == Qt.TextFormat.RichText or (
        fmt == Qt.TextFormat.AutoText and Qt.mightBeRichText(text)
    )
    if not rich:
        return text
    doc = QTextDocument()
    doc.setHtml(text)
    return doc.toPlainText()


def _mangled(text: str, fmt) -> list[str]:
    """The markup names that ``text`` contains raw but renders as something else."""
    shown = _rendered(text, fmt)
    return [name for name in MARKUP if name in text and name not in shown]


@pytest.fixture
def marked_window(qtbot, window):  # noqa: F811
    data: SessionData = window.session.data()
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        window.document.replace(data.with_changes(tokens=MARKUP))
    return window


def test_labels_buttons_and_tooltips_show_token_names_literally(qtbot, marked_window):
    win = marked_window
    bad, seen = [], 0
    for _ in range(20):  # every walkthrough step narrates the names
        for label in win.findChildren(QLabel):
            seen += sum(name in _rendered(label.text(), label.textFormat()) for name in MARKUP)
            bad += [("label", n) for n in _mangled(label.text(), label.textFormat())]
            bad += [("label tip", n) for n in _mangled(label.toolTip(), Qt.TextFormat.AutoText)]
        for button in win.findChildren(QAbstractButton):
            bad += [("button tip", n) for n in _mangled(button.toolTip(), Qt.TextFormat.AutoText)]
        for edit in win.findChildren(QTextEdit):  # rich narration: names must be escaped
            for name in MARKUP:
                if name in edit.toPlainText():
                    seen += 1
                    continue
                if name.replace("<", "").replace(">", "") in edit.toPlainText():
                    bad.append(("text", name))
        win.walkthrough.go_next()
    assert bad == []
    assert seen > 20  # the names were really on screen, literally


def test_matrix_headers_show_token_names_literally(marked_window):
    win = marked_window
    bad = []
    for editor_model in win.matrices.findChildren(MatrixModel):
        for row in range(editor_model.rowCount()):
            # a header paints its label as plain text; its tooltip is Qt's guess
            text = editor_model.headerData(
                row, Qt.Orientation.Vertical, Qt.ItemDataRole.ToolTipRole
            )
            if isinstance(text, str):
                bad += [(row, n) for n in _mangled(text, Qt.TextFormat.AutoText)]
    assert bad == []
