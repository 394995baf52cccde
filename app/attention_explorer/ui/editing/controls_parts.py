"""The pieces the Controls panel is built from: option lists that fit a narrow dock, number
boxes that can be "off", and picking an item by its key.

A plain combo box asks for the width of its longest option ("RMSNorm × (1 + w) (Gemma 3)"),
which made the panel's rows about 50 px wider than the Controls dock at its least width (every
dock shown, at 1366x768 and at 1600x1000): the dock scrolled sideways. :class:`FittingCombo`
asks for :data:`MIN_CHARS` characters and takes the rest of its row; when the row is shorter
than the chosen option, the option is shown cut with "…" (the open list shows every option
whole, and the tooltip says what the box is for).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QSizePolicy,
    QStyle,
    QStyleOptionComboBox,
    QStylePainter,
    QWidget,
)

#: Characters a combo box asks room for; a longer option is elided when the row is narrower.
MIN_CHARS = 10


class FittingCombo(QComboBox):
    """A combo box that fits any row at least :data:`MIN_CHARS` characters wide: it grows
    with its row, and elides the shown option ("Causal (no peeking…") when the row is short."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.setMinimumContentsLength(MIN_CHARS)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def paintEvent(self, _event) -> None:  # noqa: N802 - Qt's name
        """Draw the box, with the current option elided to the room its field has."""
        painter = QStylePainter(self)
        option = self._option()
        painter.drawComplexControl(QStyle.ComplexControl.CC_ComboBox, option)
        option.currentText = self.shown_text()
        painter.drawControl(QStyle.ControlElement.CE_ComboBoxLabel, option)

    def shown_text(self) -> str:
        """The current option as it is drawn: elided to the width of the box's field."""
        field = self.style().subControlRect(
            QStyle.ComplexControl.CC_ComboBox,
            self._option(),
            QStyle.SubControl.SC_ComboBoxEditField,
            self,
        )
        elide = Qt.TextElideMode.ElideRight
        return self.fontMetrics().elidedText(self.currentText(), elide, field.width())

    def _option(self) -> QStyleOptionComboBox:
        option = QStyleOptionComboBox()
        self.initStyleOption(option)
        return option


def combo(options: dict[str, str], tooltip: str) -> FittingCombo:
    """A :class:`FittingCombo` listing ``options`` (key -> label), each item's data its key."""
    box = FittingCombo()
    for key, label in options.items():
        box.addItem(label, key)
    box.setToolTip(tooltip)
    return box


def off_spin(spin, maximum, tooltip: str):
    """``spin`` (a spin box) from 0 ("off") to ``maximum``."""
    spin.setRange(0, maximum)
    spin.setSpecialValueText("off")
    spin.setToolTip(tooltip + " (0: off)")
    return spin


def select(box: QComboBox, key: object) -> None:
    """Show the item whose data equals ``key`` (compared with ==, not identity)."""
    for index in range(box.count()):
        if box.itemData(index) == key:
            box.setCurrentIndex(index)
            return
