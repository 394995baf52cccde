"""Slider rows for the controls panel: a name, a superqt labelled slider and its value."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDoubleSpinBox, QHBoxLayout, QWidget
from superqt import QLabeledDoubleSlider, QLabeledSlider


def int_slider(minimum: int, maximum: int, tooltip: str) -> QLabeledSlider:
    """A horizontal whole-number slider whose value box can also be typed into."""
    slider = QLabeledSlider(Qt.Orientation.Horizontal)
    slider.setRange(minimum, maximum)
    slider.setToolTip(tooltip)
    slider.setTracking(True)
    return slider


def float_slider(
    minimum: float, maximum: float, decimals: int, tooltip: str
) -> QLabeledDoubleSlider:
    """A horizontal decimal slider whose value box can also be typed into."""
    slider = QLabeledDoubleSlider(Qt.Orientation.Horizontal)
    slider.setRange(minimum, maximum)
    slider.setDecimals(decimals)
    slider.setToolTip(tooltip)
    return slider


class SliderWithBox(QWidget):
    """A decimal slider beside a number box that can be typed into; both show one value.

    ``slider`` carries the ``valueChanged`` signal of both: typing in ``box`` moves the slider.
    The slider's value is rounded to the box's decimals, so a click gives 3.01, never 3.007.
    """

    def __init__(self, minimum: float, maximum: float, decimals: int, step: float, tooltip: str):
        super().__init__()
        self.slider = float_slider(minimum, maximum, decimals, tooltip)
        self.slider.setEdgeLabelMode(QLabeledDoubleSlider.EdgeLabelMode.NoLabel)
        self.box = QDoubleSpinBox()
        self.box.setRange(minimum, maximum)
        self.box.setDecimals(decimals)
        self.box.setSingleStep(step)
        self.box.setToolTip(tooltip)
        self.box.setAccessibleName(tooltip)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.slider, 1)
        layout.addWidget(self.box)
        self._decimals = decimals
        self.box.valueChanged.connect(self.slider.setValue)
        self.slider.valueChanged.connect(self._on_slider)

    def _on_slider(self, value: float) -> None:
        rounded = round(float(value), self._decimals)
        if self.box.value() != rounded:
            self.box.blockSignals(True)
            self.box.setValue(rounded)
            self.box.blockSignals(False)

    def value(self) -> float:
        """The value, rounded to the box's decimals."""
        return round(float(self.slider.value()), self._decimals)

    def setValue(self, value: float) -> None:  # noqa: N802 - Qt naming, like the slider's
        """Show ``value`` in both (without emitting when the slider's signals are blocked)."""
        self.slider.setValue(value)
        self._on_slider(value)
