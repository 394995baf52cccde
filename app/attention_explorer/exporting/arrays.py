"""Export any array as a view draws it: a difference map (edited − original) or another
comparison, as a picture (png, svg, pdf) or its numbers (csv, npy).

The picture goes through the one path every stage takes:
:func:`attention_explorer.display.frame_for_array` builds the display frame,
:func:`attention_explorer.exporting.figure.frame_figure` the figure, and the painter draws it.
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

import numpy as np

from attention_explorer.display import DisplayFrame, frame_for_array
from attention_explorer.display.shrink import DISPLAY_LIMIT
from attention_explorer.exporting.figure import frame_figure
from attention_explorer.exporting.numbers import _number
from attention_explorer.exporting.options import (
    DATA_FORMATS,
    DEFAULT_DPI,
    DEFAULT_SIZE,
    PICTURE_FORMATS,
    check_size,
)
from attention_explorer.exporting.safe_text import csv_label
from attention_explorer.writing.atomic import check_folder, write_bytes_atomic
from attention_explorer.writing.export_errors import ExportError


def array_csv_text(values, row_labels, col_labels, axes=("rows", "columns")) -> str:
    """Any ``values [rows, cols]`` as CSV, like a stage's: a header of column labels (the
    corner names the ``axes``), then one labelled row per row; values round-trip exactly."""
    array = np.asarray(values)  # [rows, cols]
    if array.ndim != 2 or array.shape != (len(row_labels), len(col_labels)):
        raise ExportError(
            f"{len(row_labels)}×{len(col_labels)} labels do not fit an array of shape {array.shape}"
        )
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([f"{axes[0]} \\ {axes[1]}", *(csv_label(str(c)) for c in col_labels)])
    for label, row in zip(row_labels, array):
        writer.writerow([csv_label(str(label)), *(_number(v, array.dtype) for v in row)])
    return out.getvalue()


def _format(path: Path, fmt: str | None) -> str:
    fmt = (fmt or path.suffix.lstrip(".")).lower()
    if fmt not in PICTURE_FORMATS + DATA_FORMATS:
        choices = ", ".join(PICTURE_FORMATS + DATA_FORMATS)
        raise ExportError(f"unknown format {fmt or '(none)'!r} for {path.name!r}; use {choices}")
    return fmt


def export_frame(
    frame: DisplayFrame,
    kind: str,
    path: str | os.PathLike,
    fmt: str | None = None,
    *,
    size: tuple[int, int] = DEFAULT_SIZE,
    dpi: float = DEFAULT_DPI,
    axes: tuple[str, str] = ("rows", "columns"),
    **look,
) -> Path:
    """Write a display frame as a picture (png, svg, pdf), drawn as the window draws it.
    ``look``: the :class:`~attention_explorer.exporting.figure.Look` keywords."""
    from attention_explorer.exporting.targets import picture_bytes

    path = Path(path)
    fmt = _format(path, fmt)
    if fmt not in PICTURE_FORMATS:
        raise ExportError(f"a frame is a picture; write its array with export_array ({fmt})")
    figure = frame_figure(frame, kind, row_axis=axes[0], col_axis=axes[1], **look)
    check_folder(path.parent)
    width, height, dpi = check_size(size, dpi)
    return write_bytes_atomic(path, picture_bytes(figure, fmt, (width, height), dpi))


def export_array(
    values,
    kind: str,
    title: str,
    row_labels,
    col_labels,
    path: str | os.PathLike,
    fmt: str | None = None,
    *,
    axes: tuple[str, str] = ("rows", "columns"),
    decimals: int | None = None,
    limit: int = DISPLAY_LIMIT,
    **picture,
) -> Path:
    """Write any array of value ``kind`` as a picture or its numbers (csv, npy).

    A difference map is ``export_array(after - before, "signed", "weights: edited −
    original", tokens, tokens, "diff.png")``. ``picture``: ``size``, ``dpi`` and the Look
    keywords. Raises :class:`ExportError` with a one-line message.
    """
    path = Path(path)
    fmt = _format(path, fmt)
    if fmt == "csv":
        check_folder(path.parent)
        text = array_csv_text(values, row_labels, col_labels, axes)
        return write_bytes_atomic(path, text.encode("utf-8"))
    if fmt == "npy":
        check_folder(path.parent)
        buffer = io.BytesIO()
        np.save(buffer, np.asarray(values), allow_pickle=False)
        return write_bytes_atomic(path, buffer.getvalue())
    options = {} if decimals is None else {"decimals": decimals}
    try:
        frame = frame_for_array(values, kind, title, row_labels, col_labels, limit=limit, **options)
    except ValueError as exc:
        raise ExportError(str(exc)) from None
    return export_frame(frame, kind, path, fmt, axes=axes, **picture)
