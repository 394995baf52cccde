"""Issues 31.11 and 31.13: a step frames the cells it reads. The weighted sum frames the whole
weight row of the query (not only the selected cell) and the column of V its number uses; the
mask step frames the cell its sentence about another row refers to, and says it plainly."""

from main_window_checks import open_example
from PySide6.QtCore import QRectF, Qt
from PySide6.QtWidgets import QGraphicsRectItem


def dashed_frames(view) -> list[QRectF]:
    """The dashed rectangles (cell units) drawn over a stage view: the operands' frames."""
    return sorted(
        (
            item.rect()
            for item in view.plot.items
            if isinstance(item, QGraphicsRectItem)
            and item.isVisible()
            and item.pen().style() == Qt.PenStyle.DashLine
        ),
        key=lambda r: (r.top(), r.left()),
    )


def go_to(walk, key):
    walk.restart()
    while walk.current().key != key:
        assert walk.index() + 1 < len(walk.steps()), f"no {key} step"
        walk.go_next()
    return walk.current()


def test_the_weighted_sum_frames_the_weight_row_and_the_column_of_v(qtbot, window):
    walk = window.walkthrough
    qtbot.waitUntil(lambda: walk.current() is not None)
    step = go_to(walk, "weighted_sum")
    i, n = step.cells[0][0], len(window.session.tokens)
    assert dashed_frames(window.stages.view("weights")) == [QRectF(0, i, n, 1)]
    assert dashed_frames(window.stages.view("V")) == [QRectF(0, 0, 1, n)]  # output[i, 0]
    walk.go_back()  # the frames belong to their step
    assert walk.current().key == "weights"
    assert QRectF(0, 0, 1, n) not in dashed_frames(window.stages.view("V"))


def test_the_mask_step_frames_the_cell_elsewhere(qtbot, window):
    """On the causal example following its last token, nothing is hidden in the followed
    row: the sentence refers to another row's hidden key, and that cell is framed."""
    open_example(qtbot, window, "causal-mask")
    walk = window.walkthrough
    qtbot.waitUntil(lambda: walk.current() is not None)
    last = len(window.session.tokens) - 1
    walk.follow_token(last)
    step = go_to(walk, "mask")
    assert step.cells[0][0] == last
    assert "Elsewhere it does" not in step.plain()
    said = "Other queries do have hidden keys (framed): “t1” may not look at “t2”, because "
    assert said + "“t2” comes after “t1”." in step.plain()
    r, c = step.cells[-1]
    assert r != last
    assert QRectF(c, r, 1, 1) in dashed_frames(window.stages.view("masked"))
