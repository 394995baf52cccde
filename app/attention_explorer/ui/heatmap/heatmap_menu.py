"""A heatmap's right-click menu: export, copy, zoom and the weights' colour scale."""

from __future__ import annotations

from PySide6.QtWidgets import QMenu

from attention_explorer.core.stages import stage

#: The colour scales offered for weights, with their menu texts.
SCALE_TEXTS = {"linear": "0 to 1", "row": "Each row against its maximum", "log": "Log scale"}


def context_menu(view) -> QMenu:
    """Export or copy ``view``, show its whole stage again, and (weights) the colour scale."""
    menu = QMenu(view)
    export = menu.addAction("Export this view…")
    export.triggered.connect(lambda: view.export_requested.emit(view.stage, view.head))
    copy = menu.addAction("Copy image")
    copy.triggered.connect(lambda: view.copy_requested.emit(view.stage, view.head))
    whole = menu.addAction("Show the whole stage (0)")
    whole.setEnabled(view.zoom.zoomed())
    whole.triggered.connect(view.zoom.reset)
    if stage(view.stage).scalable:
        scales = menu.addMenu("Colour scale")
        for key, text in SCALE_TEXTS.items():
            action = scales.addAction(text)
            action.setCheckable(True)
            action.setChecked(view.prefs.weights_scale == key)
            action.triggered.connect(lambda _=False, k=key: setattr(view.prefs, "weights_scale", k))
    return menu
