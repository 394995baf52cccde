"""Slider rows for the controls panel: a name, a superqt labelled slider and its value."""

from __future__ import annotations

from PySide6.QtCore import Qt
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
