"""Bring a walkthrough step's operands on screen: the cells of the stage views it reads.

The step's own (framed) view is always wholly in sight; then the cells it reads: at
"Scores: q · k" the q row of Q and the k row of K (in the inputs group, which folds on short
windows, and opens for them), at the weighted sum the weights and V. When the full layout
cannot hold them all on screen (at 1366x768 V sits lines above the weights), the panel lays
out the step's views alone until the next step ("Show every view" brings the rest back).
Works from outside the stage panel, through its public API: ``bring_into_view`` (which opens
the inputs group for an input stage), ``gather``, ``lines_needed``, ``view``,
``shown_stages`` and ``scroll_area``.

:class:`OperandMarks` frames, with a dashed line beside the selection's solid one, the cells a
step reads: at the weighted sum the whole weight row of the query and the column of V that
output number uses, at the mask step the cells its narration refers to.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QPoint, QPointF, QRect, QRectF, Qt
from PySide6.QtWidgets import QGraphicsRectItem

from attention_explorer.core.stages import panel_stages

#: Stages of the foldable inputs group (as the stage panel groups them).
INPUTS = panel_stages("inputs")
#: Pixels kept around the operands when scrolling.
MARGIN = 0


def operands(step) -> tuple[tuple[str, tuple], ...]:
    """``(stage, cells)`` to bring on screen for a step, in order of importance: the step's
    own (framed) view whole, then the cells it reads, the inputs among them first."""
    if step is None or step.stage is None:
        return ()
    related = [pair for pair in step.related if pair[1] and pair[0] != step.stage]
    related.sort(key=lambda pair: pair[0] not in INPUTS)  # the inputs first
    return ((step.stage, ()), *related)  # () : the framed view whole


def cells_rect(panel, stage: str, cells) -> QRect:
    """Where ``cells`` of the view of ``stage`` are inside the scrolled column (column
    coordinates); the whole view when it shows no cells or is not laid out yet."""
    view, content = panel.view(stage), panel.scroll_area().widget()
    whole = QRect(view.mapTo(content, QPoint(0, 0)), view.size())
    frame = view.frame
    if not cells or frame is None or frame.block != (1, 1):
        return whole
    rows = [r for r, _ in cells]  # the view box's y runs down the rows, x along the columns
    cols = [c for _, c in cells]
    box, graphics = view.plot.getViewBox(), view.graphics
    corners = (QPointF(min(cols), min(rows)), QPointF(max(cols) + 1, max(rows) + 1))
    points = [graphics.mapFromScene(box.mapViewToScene(p)) for p in corners]
    points = [graphics.viewport().mapTo(content, p) for p in points]
    rect = QRect(points[0], points[1]).normalized()
    return rect if whole.contains(rect.center()) else whole


def together(step) -> tuple[str, ...]:
    """A step's views in the order its arithmetic reads them: the stages it reads, in the
    step's order, then its own (weights, V, output; Q, K, scores)."""
    if step is None or step.stage is None:
        return ()
    return (*(s for s, cells in step.related if cells and s != step.stage), step.stage)


def gather_if_needed(panel, stages) -> None:
    """Lay out ``stages`` alone when the lines of the full layout that hold them are taller
    than the viewport (weights, V and the output at 1366x768: V is lines above the weights);
    else (and for a single stage) every view."""
    stages = tuple(s for s in stages if s in panel.shown_stages())
    _, pixels = panel.lines_needed(stages)
    too_tall = pixels > panel.scroll_area().viewport().height()
    panel.gather(stages if len(stages) > 1 and too_tall else ())


def reveal(panel, wanted, order=()) -> tuple[str, ...]:
    """Open the inputs group when an operand is an input, lay the operands out alone (in
    ``order``, else as given) when the full layout cannot hold them all on screen, then
    scroll so that as many of the ``(stage, cells)`` operands as fit are in the viewport, in
    the order given. Returns the stages brought on screen."""
    wanted = tuple((s, c) for s, c in wanted if s in panel.shown_stages())
    gather_if_needed(panel, order or tuple(s for s, _ in wanted))
    if not wanted:
        return ()
    first_input = next((s for s, _ in wanted if s in INPUTS), None)
    panel.bring_into_view(first_input or wanted[0][0])  # opens the inputs group if asked
    scroll = panel.scroll_area()
    panel.layout().activate()
    scroll.widget().layout().activate()
    height = scroll.viewport().height() - 2 * MARGIN
    box, shown = None, []
    for stage, cells in wanted:
        if not panel.view(stage).isVisibleTo(panel):
            continue
        rect = cells_rect(panel, stage, cells)
        joined = rect if box is None else box.united(rect)
        if box is not None and joined.height() > height:
            continue  # would push an earlier operand out of sight
        box = joined
        shown.append(stage)
    if box is None:
        return ()
    bar = scroll.verticalScrollBar()
    lowest = box.top() - MARGIN  # the top of the operands stays in sight
    highest = box.top() + box.height() + MARGIN - scroll.viewport().height()
    bar.setValue(max(min(bar.value(), lowest), min(highest, lowest)))
    return tuple(shown)


#: The dashed frame of a step's operands, drawn twice (dark under light) to show on any colour.
OPERAND_PENS = (
    pg.mkPen("#000000", width=4),
    pg.mkPen("#ff9f1c", width=2, style=Qt.PenStyle.DashLine),
)


def marked_cells(step) -> tuple[tuple[str, tuple], ...]:
    """``(stage, cells)`` a step reads and frames beside the selected cell: the cells of the
    stages it reads (the weight row and V's column of the weighted sum, q's and k's rows of a
    score) and its own cells when it has several, e.g. the mask step's hidden
    keys and the cell of another row its narration refers to."""
    if step is None or step.stage is None:
        return ()
    marks = [(s, cells) for s, cells in step.related if cells and s != step.stage]
    if len(step.cells) > 1:
        marks.append((step.stage, step.cells))  # the selection frames the first again
    return tuple(marks)


def cell_rects(cells) -> list[QRectF]:
    """Rectangles (in cell units: x along the columns, y down the rows) covering ``cells``:
    one when they fill a rectangle (a row, a column), else one per run of adjacent cells of
    a row."""
    cells = sorted(set(cells))
    if not cells:
        return []
    rows = [r for r, _ in cells]
    cols = [c for _, c in cells]
    top, left = min(rows), min(cols)
    height, width = max(rows) - top + 1, max(cols) - left + 1
    if height * width == len(cells):
        return [QRectF(left, top, width, height)]
    rects: list[QRectF] = []
    for r, c in cells:  # sorted by row, then column
        last = rects[-1] if rects else None
        if last is not None and last.top() == r and last.right() == c:
            last.setWidth(last.width() + 1)
        else:
            rects.append(QRectF(c, r, 1, 1))
    return rects


class OperandMarks:
    """The dashed frames of the current step's operands in the stage views of ``panel``."""

    def __init__(self, panel):
        self.panel = panel
        self._items: list[tuple[object, QGraphicsRectItem]] = []
        self._rects: dict[str, list[QRectF]] = {}

    def show(self, step) -> None:
        """Frame the operands of ``step`` (and nothing else)."""
        self.clear()
        for stage, cells in marked_cells(step):
            if stage not in self.panel.views():
                continue
            plot = self.panel.view(stage).plot
            rects = cell_rects(cells)
            self._rects[stage] = rects
            for rect in rects:
                for depth, pen in enumerate(OPERAND_PENS):
                    item = QGraphicsRectItem(rect)
                    item.setPen(pen)
                    item.setZValue(18 + depth)  # over the cells, under the selection's frame
                    plot.addItem(item)
                    self._items.append((plot, item))

    def clear(self) -> None:
        """Remove every frame."""
        for plot, item in self._items:
            try:
                plot.removeItem(item)
            except RuntimeError:  # the view was rebuilt
                pass
        self._items, self._rects = [], {}

    def rects(self, stage: str) -> list[QRectF]:
        """The rectangles framed in the view of ``stage`` now (cell units)."""
        return list(self._rects.get(stage, ()))
