"""The pieces the model panel, its output dock and the sweep dialog are built from: a plain-text
label, a button, a progress bar that waits hidden for a run, and rows, forms and columns of
them. Each builder then reads as what it holds, top to bottom, rather than as a list of
``addWidget`` calls, and the rules the pieces carry (names never shown as rich text) are
written once."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QBoxLayout,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLayout,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

#: An item of a row or a column: a widget or a layout, the same with its stretch factor, or
#: STRETCH for empty space that takes what is left.
Item = QWidget | QLayout | tuple[QWidget | QLayout, int] | None
STRETCH = None


def plain_label(text: str = "") -> QLabel:
    """A word-wrapped label that shows ``text`` literally: token names, model names and
    paths are never rich text."""
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    return label


def button(text: str, *, enabled: bool = True, tip: str = "") -> QPushButton:
    """A push button, enabled or not, with ``tip`` as its tooltip when given."""
    push = QPushButton(text)
    push.setEnabled(enabled)
    if tip:
        push.setToolTip(tip)
    return push


def progress_bar() -> QProgressBar:
    """A progress bar hidden until a run shows it."""
    bar = QProgressBar()
    bar.setVisible(False)
    return bar


def _fill(layout: QBoxLayout, items: tuple[Item, ...]) -> None:
    for item in items:
        if item is STRETCH:
            layout.addStretch(1)
            continue
        part, stretch = item if isinstance(item, tuple) else (item, 0)
        if isinstance(part, QLayout):
            layout.addLayout(part, stretch)
        else:
            layout.addWidget(part, stretch)


def row(*items: Item) -> QHBoxLayout:
    """``items`` side by side, left to right."""
    layout = QHBoxLayout()
    _fill(layout, items)
    return layout


def column(parent: QWidget, *items: Item) -> QVBoxLayout:
    """``items`` top to bottom, as the layout of ``parent``."""
    layout = QVBoxLayout(parent)
    _fill(layout, items)
    return layout


def form(*rows: tuple[str, QWidget | QLayout]) -> QFormLayout:
    """A form of ``(label, field)`` rows."""
    layout = QFormLayout()
    for label, field in rows:
        layout.addRow(label, field)
    return layout
