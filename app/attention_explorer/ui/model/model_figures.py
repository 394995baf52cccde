"""Pictures of the model views (compare difference, knockout sweep map) through the export
path: a DisplayFrame becomes an export Figure (:func:`attention_explorer.exporting.figure.
frame_figure`), written as PNG, SVG or PDF like any heatmap."""

from __future__ import annotations

import os
from pathlib import Path

from attention_explorer.exporting.figure import Figure
from attention_explorer.exporting.options import DEFAULT_DPI, DEFAULT_SIZE, PICTURE_FORMATS
from attention_explorer.exporting.targets import picture_bytes
from attention_explorer.writing.atomic import write_bytes_atomic
from attention_explorer.writing.export_errors import ExportError
from attention_explorer.writing.output_policy import OutputRefused, with_default_suffix

#: The file filter of the save dialogs.
PICTURE_FILTER = "Pictures (*.png *.svg *.pdf)"


def write_figure(path: str | os.PathLike, fig: Figure) -> Path:
    """Write ``fig`` to ``path`` in the format its suffix names (png, svg or pdf);
    ExportError with one clear line when the suffix or the folder is wrong."""
    path = Path(path)
    fmt = path.suffix.lower().lstrip(".") or "png"
    if fmt not in PICTURE_FORMATS:
        raise ExportError(f"{path.name}: choose a .png, .svg or .pdf file name")
    try:
        path = with_default_suffix(path, ".png")  # a folder's name is refused, not suffixed
    except OutputRefused as exc:
        raise ExportError(str(exc)) from None
    try:
        return write_bytes_atomic(path, picture_bytes(fig, fmt, DEFAULT_SIZE, DEFAULT_DPI))
    except OSError as exc:
        raise ExportError(f"could not write {path.name}: {exc.strerror or exc}") from None


def save_figure_as(parent, fig: Figure, title: str, note, path: str | None = None) -> bool:
    """Write ``fig`` to ``path``, asking where (a save dialog titled ``title``) when it is
    None; the outcome, "Exported NAME" or the one-line reason, goes to the ``note`` label."""
    if path is None:
        from PySide6.QtWidgets import QFileDialog

        path, _ = QFileDialog.getSaveFileName(parent, title, "", PICTURE_FILTER)
        if not path:
            return False
    try:
        written = write_figure(path, fig)
    except ExportError as exc:
        note.setText(f"Not exported: {exc}")
        return False
    note.setText(f"Exported {written.name}")
    return True
