"""Exports shared by the GUI and the command line: pictures (PNG, SVG, PDF) and numbers.

Pictures are drawn by one QPainter renderer (:mod:`.painter`) pointed at a QImage, a
QSvgGenerator or a QPdfWriter. Numbers go to CSV, NPY, or (the whole trace) NPZ. Every file is
written under a temporary name and renamed, so errors never leave a partial file; every error
is an :class:`ExportError` with a one-line message.

    export_stage(trace, "weights", 0, "weights_head0.png", cmap="magma", size=(1600, 1200))
    export_heads_grid(trace, "weights_grid.svg")
    export_numbers(trace, "scores", 1, "scores_head1.csv")
    export_trace_npz(trace, "trace.npz")
    export_all(trace, "out/", formats="png,csv", decimals=2)

A picture draws the same :class:`~attention_explorer.display.DisplayFrame` as the window's view:
the same title, colour levels, grey "−∞" masked cells, shrink rule and cell digits
(``decimals=None`` keeps the screen's). ``export_all`` is all-or-nothing (see
:mod:`.transaction`); token names reach SVG, PDF and CSV without control characters, and CSV
cells a spreadsheet would run as formulas get a leading quote (:mod:`.safe_text`).
"""

from attention_explorer.exporting.colors import (
    DIVERGING_MAPS,
    SEQUENTIAL_MAPS,
    colormap_names,
    default_cmap,
)
from attention_explorer.exporting.numbers import export_numbers, export_trace_npz, read_csv_matrix
from attention_explorer.exporting.options import DEFAULT_DPI, DEFAULT_SIZE, FORMATS, parse_formats
from attention_explorer.exporting.qt_app import ensure_gui_app
from attention_explorer.exporting.stage_exports import (
    export_all,
    export_heads_grid,
    export_stage,
    plan_exports,
    render_stage_image,
)
from attention_explorer.writing.export_errors import ExportError

__all__ = [
    "DEFAULT_DPI",
    "DEFAULT_SIZE",
    "DIVERGING_MAPS",
    "FORMATS",
    "SEQUENTIAL_MAPS",
    "ExportError",
    "colormap_names",
    "default_cmap",
    "ensure_gui_app",
    "export_all",
    "export_heads_grid",
    "export_numbers",
    "export_stage",
    "export_trace_npz",
    "parse_formats",
    "plan_exports",
    "read_csv_matrix",
    "render_stage_image",
]
