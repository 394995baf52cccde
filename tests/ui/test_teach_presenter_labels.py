"""Presenter mode (F5) at 1920x1080: a heatmap's axis name keeps a clear gap below its token
names, on the staggered lines too (issue 31: the second and third lines of the induction
example's key names touched "key"). The gap is measured between the name's text and the
rectangles pyqtgraph draws the tick names in; the usual size is checked as well."""

from __future__ import annotations

import window_fixtures
from PySide6.QtGui import QFont, QImage, QPainter
from test_layout import sized

from attention_explorer.ui.heatmap.heatmap_axes import NAME_GAP

window, dialogs = window_fixtures.window, window_fixtures.dialogs

#: Pixels that must lie between the lowest tick name and the axis name, at least.
CLEAR = 6


def tick_rects(axis):
    """Where ``axis``'s tick names are drawn (its coordinates): the rectangles painting lays
    them out in, grown to the text they hold (pyqtgraph draws without clipping)."""
    image = QImage(8, 8, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        if axis.style["tickFont"] is not None:
            painter.setFont(axis.style["tickFont"])
        _, _, texts = axis.generateDrawSpecs(painter)
        return [(painter.boundingRect(rect, flags, text), text) for rect, flags, text in texts]
    finally:
        painter.end()


def name_gap(view, clear: float = CLEAR) -> tuple[float, int]:
    """(pixels from the lowest tick name down to the axis name's text, lines of tick names) of
    ``view``'s bottom axis; asserts the name is ``clear`` pixels or more off every tick name."""
    axis = view.plot.getAxis("bottom")
    texts = tick_rects(axis)
    assert texts, view.stage
    name = axis.name_rect()
    assert axis.label.isVisible() and name.height() > 0
    for rect, text in texts:
        assert not rect.adjusted(0, 0, 0, clear).intersects(name), (view.stage, text)
    lines = max(text.count("\n") + 1 for _, text in texts)
    return name.top() - max(rect.bottom() for rect, _ in texts), lines


def _painted(view, qtbot) -> None:
    """Paint ``view`` as the screen does, twice: the axis measures its tick names when it
    paints, and takes the height they need in the layout pass after."""
    for _ in range(2):
        view.graphics.grab()
        qtbot.wait(50)


def _go_to(window, key):
    walk = window.walkthrough
    while walk.current().key != key:
        walk.go_next()


def test_presenter_mode_leaves_a_clear_gap_under_staggered_key_names(window, qtbot):
    sized(window, qtbot, 1920, 1080)
    assert window.open_example("tiny-induction-copy")  # 19 tokens: names on staggered lines
    qtbot.waitUntil(lambda: window.stages.view("scores").frame is not None, timeout=10000)
    window.menus.teaching.presenter_action.trigger()  # F5
    assert window.presenter.active()
    _go_to(window, "scores")
    qtbot.waitUntil(lambda: "scores" in window.stages.gathered())
    scores = window.stages.view("scores")
    qtbot.waitUntil(lambda: scores.isVisible() and scores.frame is not None)
    _painted(scores, qtbot)
    scale = scores.presenting_scale()
    assert scale > 1.5
    gap, lines = name_gap(scores)
    assert lines >= 2  # the staggered case the issue saw
    assert gap >= max(CLEAR, NAME_GAP * scale - 1)
    name = scores.plot.getAxis("bottom").name_rect()
    scene = scores.plot.getAxis("bottom").mapRectToScene(name)
    assert scene.bottom() <= scores.graphics.height()  # the name itself is not cut off
    window.menus.teaching.presenter_action.trigger()  # F5 again: the usual size
    qtbot.waitUntil(lambda: scores.presenting_scale() == 1.0)
    _painted(scores, qtbot)
    gap, _ = name_gap(scores, clear=NAME_GAP - 1)
    assert gap >= NAME_GAP - 1
    assert scores.plot.getAxis("bottom").name_rect().height() < name.height()  # 9 pt again


def test_the_usual_size_keeps_its_height(window, qtbot):
    """At scale 1 the gap is already there: the axis is as tall as pyqtgraph makes it."""
    sized(window, qtbot, 1366, 768)
    weights = window.stages.view("weights")
    _painted(weights, qtbot)
    axis = weights.plot.getAxis("bottom")
    gap, _ = name_gap(weights, clear=NAME_GAP - 1)
    assert gap >= NAME_GAP - 1
    label = axis.label.boundingRect().height()
    assert axis.height() <= axis.textHeight + axis.style["tickTextOffset"][1] + 0.8 * label + 1


def test_presenter_row_names_do_not_overlap(window, qtbot):
    """19 rows at 2.2x: the names are set at the largest size that fits one per row (they
    were drawn at full size, each on top of the next)."""
    sized(window, qtbot, 1920, 1080)
    assert window.open_example("tiny-induction-copy")
    qtbot.waitUntil(lambda: window.stages.view("scores").frame is not None, timeout=10000)
    window.menus.teaching.presenter_action.trigger()  # F5
    _go_to(window, "scores")
    qtbot.waitUntil(lambda: "scores" in window.stages.gathered())
    scores = window.stages.view("scores")
    qtbot.waitUntil(lambda: scores.isVisible() and scores.frame is not None)
    _painted(scores, qtbot)
    axis = scores.plot.getAxis("left")
    rects = sorted((rect for rect, _ in tick_rects(axis)), key=lambda r: r.top())
    assert len(rects) == 19  # every row named
    for upper, lower in zip(rects, rects[1:]):
        assert upper.bottom() <= lower.top() + 2, (upper, lower)  # line spacing, no more
    normal = QFont(scores.plot.getAxis("left").font()).pointSizeF()
    assert axis.style["tickFont"].pointSizeF() > normal  # still larger than usual
