"""What a heatmap shows instead of a plot when its stage is not there: the reason, in words.

A stage may be missing because nothing was computed yet, because it is not part of this
computation (e.g. no soft cap), because at this size only some heads are computed, or because
the head shown is computed on selection. The label is plain text (never rich text).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from attention_explorer.core.stages import stage, title


def missing_reason(trace, stage_name: str, head: int) -> str:
    """Why ``stage_name`` of ``head`` cannot be drawn from ``trace`` ("" when it can)."""
    if trace is None:
        return "Nothing computed yet"
    entry = stage(stage_name)
    if not trace.has(stage_name) and len(trace.heads) < trace.config.heads:
        return "needs every head: at this size it is computed only for exports"
    if not trace.has(stage_name):
        return f"{title(stage_name, trace.config.normalizer)} is not part of this computation"
    if entry.per_head and head not in trace.heads:
        return f"head {head} is computed on selection"
    return ""


def placeholder_label() -> QLabel:
    """The centred, wrapping, plain-text label that stands in for the plot."""
    label = QLabel("Nothing computed yet")
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)
    return label
