"""Small text helpers the editors share: literal tooltips and readable error colours."""

from __future__ import annotations

import html

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QWidget


def plain_tooltip(text: str) -> str:
    """``text`` as a tooltip that Qt shows literally: a token named ``<img src=x>`` is not HTML."""
    return f"<p style='white-space:pre'>{html.escape(text, quote=False)}</p>"


def error_text_style(widget: QWidget) -> str:
    """A style sheet for error text that stays readable on light and dark themes."""
    dark = widget.palette().color(QPalette.ColorRole.Window).lightness() < 128
    return "color: #ff7b7b;" if dark else "color: #c62828;"


def luminance(color: QColor) -> float:
    """Relative luminance of ``color`` (0 black .. 1 white), to pick dark or light text."""
    return 0.2126 * color.redF() + 0.7152 * color.greenF() + 0.0722 * color.blueF()
