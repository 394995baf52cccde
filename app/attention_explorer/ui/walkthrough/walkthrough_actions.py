"""The teacher's menu entries: View > Presenter (F5), File > Walkthrough Handout (PDF)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog

from attention_explorer.ui.walkthrough.presenter import Presenter


def write_handout(window, path) -> Path | None:
    """Write the walkthrough the window shows now (its head and query) to ``path`` as a
    PDF handout, one page per step, in the window's colour maps; None (and a message)
    when it cannot be written."""
    from attention_explorer.exporting import ExportError
    from attention_explorer.exporting.handout import export_handout
    from attention_explorer.ui.widgets.colormaps import colormap_name_for

    trace, steps = window.live.trace, window.walkthrough.steps()
    if trace is None or not steps:
        window.status.show("No handout: fix the problem shown first")
        return None
    try:
        written = export_handout(
            trace,
            steps,
            path,
            name=window.session.name,
            cmap_for=lambda stage: colormap_name_for(stage, window.prefs),
            show_values=window.prefs.show_values,
            scale=window.prefs.weights_scale,
        )
    except ExportError as exc:
        window.show_error(f"The handout was not written: {exc}")
        return None
    window.status.show(f"Wrote the handout {written} ({len(steps)} pages)")
    return written


def ask_and_write_handout(window) -> Path | None:
    """File > Walkthrough Handout (PDF)…: ask where, then :func:`write_handout`."""
    path, _ = QFileDialog.getSaveFileName(
        window, "Walkthrough handout", "walkthrough.pdf", "PDF (*.pdf)"
    )
    return write_handout(window, path) if path else None


@dataclass(frozen=True)
class TeachingParts:
    """Presenter mode and the two menu entries that reach the teacher's tools."""

    presenter: Presenter
    presenter_action: QAction
    handout_action: QAction


def add_teaching_actions(window, file_menu, view_menu) -> TeachingParts:
    """Add the handout to ``file_menu`` and presenter mode to ``view_menu``."""
    presenter = Presenter(window)
    handout = QAction("Walkthrough &Handout (PDF)…", window)
    handout.setStatusTip("Every walkthrough step on its own page: its views and its numbers")
    handout.triggered.connect(lambda *_: ask_and_write_handout(window))
    file_menu.addAction(handout)
    present = QAction("&Presenter", window, checkable=True)
    present.setShortcut(QKeySequence("F5"))
    present.setStatusTip("Larger type, fewer panels, the current step large (F5)")
    present.triggered.connect(lambda *_: present.setChecked(presenter.toggle()))
    view_menu.addAction(present)
    return TeachingParts(presenter, present, handout)
