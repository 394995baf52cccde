"""Bring a walkthrough step's operands on screen: the cells of the stage views it reads.

The step's own (framed) view is always wholly in sight; then the cells it reads: at
"Scores: q · k" the q row of Q and the k row of K (in the inputs group, which folds on short
windows, and opens for them), at the weighted sum the weights and V. When the full layout
cannot hold them all on screen (at 1366x768 V sits lines above the weights), the panel lays
out the step's views alone until the next step ("Show every view" brings the rest back).
Works from outside the stage panel, through its public API: ``bring_into_view`` (which opens
the inputs group for an input stage), ``gather``, ``lines_needed``, ``view``,
``shown_stages`` and ``scroll_area``.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, QRect

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
