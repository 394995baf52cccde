"""Where a selected weights cell (query i, key j) shows up in each stage view.

* stages with a key column (scores … weights, mask): the cell (i, j) itself;
* query-row stages (X, Q, head output, concat, output): row i, the query q_i;
* key-row stages (K, X_kv): row j, the key k_j;
* V: every row the weighted sum of query i uses (weight ≠ 0), as runs of adjacent rows.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF

from attention_explorer.core.stages import stage


def _runs(rows: np.ndarray) -> list[tuple[int, int]]:
    """[(first, end)] of the runs of adjacent row numbers in sorted ``rows``."""
    runs: list[tuple[int, int]] = []
    for r in rows.tolist():
        if runs and runs[-1][1] == r:
            runs[-1] = (runs[-1][0], r + 1)
        else:
            runs.append((r, r + 1))
    return runs


def used_value_rows(trace, head: int, query: int) -> np.ndarray:
    """The rows of V that the weighted sum of ``query`` uses: keys with a non-zero weight."""
    if not trace.has("weights") or head not in trace.heads:
        return np.zeros(0, dtype=np.intp)
    weights = trace.stage("weights", head)  # [n, m]
    if not 0 <= query < weights.shape[0]:
        return np.zeros(0, dtype=np.intp)
    return np.flatnonzero(weights[query])


def selection_rects(trace, name: str, head: int, cell) -> list[QRectF]:
    """The rectangles (in cell units) framing ``cell`` = (query, key) in stage ``name``."""
    if cell is None or not trace.has(name):
        return []
    i, j = cell
    entry = stage(name)
    rows, cols = trace.stage(name, head if entry.per_head else None).shape
    if entry.cols == "keys":
        return [QRectF(j, i, 1, 1)] if 0 <= i < rows and 0 <= j < cols else []
    if name == "V":
        return [QRectF(0, a, cols, b - a) for a, b in _runs(used_value_rows(trace, head, i))]
    row = j if entry.rows == "keys" else i
    return [QRectF(0, row, cols, 1)] if 0 <= row < rows else []


def head_separators(plot, lines: list, heads: int, cols: int) -> None:
    """Vertical lines between the heads' column blocks of the concatenation, drawn in
    ``plot``; ``lines`` is the view's pool of lines, grown as needed and reused."""
    width = cols // max(1, heads)
    while len(lines) < heads - 1:
        line = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen("#ffffff", width=2))
        line.setZValue(5)
        plot.addItem(line)
        lines.append(line)
    for k, line in enumerate(lines, start=1):
        line.setVisible(k < heads)
        line.setPos(k * width)


def query_label_cell(plot, stage_name: str, shape, selected, scene_pos) -> tuple | None:
    """The cell a click on a query row's label (the left axis of ``plot``) selects, or None:
    that row, keeping the selected key (``selected``, the session's cell) when it fits
    ``shape`` (rows, cols). A click on a label means "follow this token", like a cell."""
    axis = plot.getAxis("left")
    if stage(stage_name).rows != "queries" or not axis.sceneBoundingRect().contains(scene_pos):
        return None
    row = int(np.floor(plot.getViewBox().mapSceneToView(scene_pos).y()))
    col = selected[1] if selected is not None and selected[1] < shape[1] else 0
    return (row, col) if 0 <= row < shape[0] else None


def cell_at(plot, shape, scene_pos) -> tuple[int, int] | None:
    """The shown cell (row, col) of a frame of ``shape`` under ``scene_pos``, or None."""
    box = plot.getViewBox()
    if not shape or not box.sceneBoundingRect().contains(scene_pos):
        return None
    point = box.mapSceneToView(scene_pos)
    row, col = int(np.floor(point.y())), int(np.floor(point.x()))
    return (row, col) if 0 <= row < shape[0] and 0 <= col < shape[1] else None


def clicked_cell(plot, stage_name: str, shape, selected, scene_pos) -> tuple[int, int] | None:
    """What a click at ``scene_pos`` selects: the cell under it, or for a click on a query
    row's label, that row (see :func:`query_label_cell`)."""
    cell = cell_at(plot, shape, scene_pos)
    if cell is None and shape:
        cell = query_label_cell(plot, stage_name, shape, selected, scene_pos)
    return cell
