"""An edit redraws what it changed and skips the rest, and no skip ever leaves a stale number,
colour or tint on screen (the caches behind the one-frame edit of issue 13)."""

import math
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtCore import QPointF, Qt  # noqa: E402
from PySide6.QtGui import QImage  # noqa: E402

from attention_explorer.display.cells import cell_rgb, dark_text  # noqa: E402
from attention_explorer.engine import compute  # noqa: E402
from attention_explorer.session import Session, starter_session  # noqa: E402
from attention_explorer.ui.heatmap.heatmap_view import HeatmapView  # noqa: E402
from attention_explorer.ui.state.preferences import ViewPreferences  # noqa: E402
from attention_explorer.ui.widgets.colormaps import table_for  # noqa: E402


def trace_of(session: Session):
    """The trace of the session's numbers now."""
    data = session.data()
    return compute(data.inputs, data.config, tokens=data.tokens, kv_tokens=data.kv_tokens)


def edit_x(session: Session, row: int, col: int, value: float) -> None:
    """Write one cell of X, as the X editor does (a new array)."""
    x = np.array(session.inputs.X)  # [n, d_model]
    x[row, col] = value
    session.inputs = session.inputs.with_array("X", x)


@pytest.fixture
def show(qtbot):
    """A function showing one stage of the starter session (4 tokens, causal, 2 heads)."""
    session, prefs = Session.from_data(starter_session()), ViewPreferences()

    def shown(stage: str) -> HeatmapView:
        view = HeatmapView(stage, session, prefs)
        qtbot.addWidget(view)
        view.resize(900, 600)
        view.show()
        qtbot.waitExposed(view)
        view.set_trace(trace_of(session), 0)
        return view

    shown.session, shown.prefs = session, prefs
    return shown


def calls_of(monkeypatch, obj, name: str) -> list:
    """Record each call of ``obj.name`` (still calling it)."""
    calls, real = [], getattr(obj, name)

    def recorded(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(obj, name, recorded)
    return calls


def expected_colours(view: HeatmapView) -> list[str]:
    """The text colour each cell needs on its background, worked out from the frame."""
    frame = view.frame
    rgb = cell_rgb(frame.positions(), frame.masked_cells, table_for(view.stage, view.prefs))
    return ["#000000" if d else "#ffffff" for d in dark_text(rgb).reshape(-1)]


# -- the heatmap views ---------------------------------------------------------------------
def test_an_edit_rewrites_the_numbers_and_their_colours(show):
    view = show("scores")
    before, colours_before = view.texts.drawn(), view.texts.drawn_colours()
    edit_x(show.session, 0, 0, 3.0)
    view.set_trace(trace_of(show.session), 0)
    assert view.texts.drawn() == view.frame.texts != before
    assert view.texts.drawn_colours() == expected_colours(view) != colours_before


def test_an_image_whose_levels_stay_is_still_redrawn(show, monkeypatch):
    view = show("weights")  # fixed levels 0..1: an edit changes the cells, not the bar
    set_image = calls_of(monkeypatch, view.image, "setImage")
    set_levels = calls_of(monkeypatch, view.bar, "setLevels")
    set_ticks = calls_of(monkeypatch, view.bar.axis, "setTicks")
    edit_x(show.session, 1, 2, -2.0)
    view.set_trace(trace_of(show.session), 0)
    assert len(set_image) == 1
    np.testing.assert_array_equal(view.image.image, view.frame.image)
    assert set_levels == [] and set_ticks == []  # the colour bar did not change
    assert tuple(view.bar.levels()) == view.frame.levels == (0.0, 1.0)


def test_new_levels_reach_the_colour_bar_and_its_ticks(show):
    view = show("scores")
    levels = view.frame.levels
    edit_x(show.session, 0, 0, 9.0)
    view.set_trace(trace_of(show.session), 0)
    assert view.frame.levels != levels
    assert tuple(view.bar.levels()) == view.frame.levels
    assert view.bar.axis._tickLevels == [view.frame.ticks, []]  # pyqtgraph keeps them there
    assert tuple(view.image.getLevels()) == view.frame.levels


def test_the_same_numbers_again_touch_nothing(show, monkeypatch):
    view = show("scores")
    set_image = calls_of(monkeypatch, view.image, "setImage")
    updates = calls_of(monkeypatch, view.texts, "update")
    view.set_trace(trace_of(show.session), 0)  # a new trace with the same numbers
    view.resize(view.width() + 6, view.height())  # the numbers are written again, the same
    view.texts.write(view.frame, table_for("scores", show.prefs), (80.0, 40.0))
    assert set_image == [] and updates == []
    assert view.texts.drawn() == view.frame.texts


def test_a_new_colour_map_recolours_the_same_numbers(show):
    from attention_explorer.core.stage_colours import SEQUENTIAL_MAPS

    view = show("weights")
    texts, colours = view.texts.drawn(), view.texts.drawn_colours()
    view.image.render()  # as a paint does: the picture in the first map
    first = view.image.qimage.pixelColor(0, 0).getRgb()
    for name in SEQUENTIAL_MAPS:
        show.prefs.colormap = name
        if expected_colours(view) != colours:
            break
    assert expected_colours(view) != colours, "no colour map changes a text colour here"
    assert view.texts.drawn() == texts
    assert view.texts.drawn_colours() == expected_colours(view)
    view.image.render()  # what the next paint draws: cell (0, 0) in the new map's colour
    table = table_for("weights", show.prefs)  # [256, 3]
    level = min(255, int(view.frame.positions()[0, 0] * 256))
    now = view.image.qimage.pixelColor(0, 0).getRgb()
    assert now[:3] == tuple(table[level]) and now != first


def _grab(view: HeatmapView) -> np.ndarray:
    """The view's viewport as painted now, ``[height, width, 4]`` bytes."""
    image = view.graphics.viewport().grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    shape = (image.height(), image.width(), 4)
    return np.frombuffer(image.constBits(), np.uint8).reshape(shape).copy()  # outlives image


def _cell_pixels(view: HeatmapView, row: int, col: int) -> tuple[slice, slice]:
    """The viewport pixels inside cell (row, col), a pixel in from its edges."""
    box, graphics = view.plot.getViewBox(), view.graphics
    corners = [graphics.mapFromScene(box.mapViewToScene(QPointF(x, y))) for x, y in
               ((col, row), (col + 1, row + 1))]  # fmt: skip
    (x0, x1), (y0, y1) = sorted(c.x() for c in corners), sorted(c.y() for c in corners)
    return slice(y0 + 1, y1 - 1), slice(x0 + 1, x1 - 1)


def test_every_number_is_painted_in_its_own_cell(show, qtbot):
    view = show("scores")
    qtbot.wait(50)
    with_numbers = _grab(view)
    show.prefs.show_values = False
    qtbot.waitUntil(lambda: view.texts.drawn() == [])
    without = _grab(view)
    rows, cols = view.frame.shape
    for row in range(rows):
        for col in range(cols):
            ys, xs = _cell_pixels(view, row, col)
            assert (with_numbers[ys, xs] != without[ys, xs]).any(), (row, col)


def test_a_changed_number_is_repainted(show, qtbot):
    view = show("weights")
    qtbot.wait(50)
    ys, xs = _cell_pixels(view, 3, 0)
    before = _grab(view)[ys, xs]
    text = view.texts.drawn()[12]
    edit_x(show.session, 3, 0, 4.0)
    view.set_trace(trace_of(show.session), 0)
    assert view.texts.drawn()[12] != text
    qtbot.waitUntil(lambda: not np.array_equal(_grab(view)[ys, xs], before))


# -- the matrix editors --------------------------------------------------------------------
@pytest.fixture
def editors():
    """The X and W_Q editors' models of one starter session, and every dataChanged of each."""
    from attention_explorer.ui.editing.matrix_model import MatrixModel
    from attention_explorer.ui.state.panel_context import PanelContext

    context = PanelContext.for_session(Session.from_data(starter_session()))
    models = {name: MatrixModel(context, name) for name in ("X", "W_Q")}
    changed = {name: [] for name in models}
    for name, model in models.items():
        model.dataChanged.connect(
            lambda a, b, *_, name=name: changed[name].append(
                (a.row(), a.column(), b.row(), b.column())
            )
        )
    yield context, models, changed
    for model in models.values():
        model.detach()


def _fresh_background(context, name, row, col):
    """The tint a model built now would give the cell (no cache can be stale in it)."""
    from attention_explorer.ui.editing.matrix_model import MatrixModel

    fresh = MatrixModel(context, name)
    try:
        return fresh.data(fresh.index(row, col), Qt.ItemDataRole.BackgroundRole).color()
    finally:
        fresh.detach()


def _inner_cell(x: np.ndarray) -> tuple[int, int]:
    """A cell holding neither the lowest nor the highest value (editing it keeps the range)."""
    inner = np.argwhere((x > x.min()) & (x < x.max()))
    return int(inner[0][0]), int(inner[0][1])


def test_an_edit_inside_the_range_announces_only_its_cell(editors):
    context, models, changed = editors
    x = context.session.inputs.X
    row, col = _inner_cell(x)
    inside = float(x.min() + 0.9 * (x.max() - x.min()))
    model = models["X"]
    cell = model.index(row, col)
    background = model.data(cell, Qt.ItemDataRole.BackgroundRole).color()
    assert model.setData(cell, inside)
    assert changed == {"X": [(row, col, row, col)], "W_Q": []}
    assert float(model.data(cell, Qt.ItemDataRole.EditRole)) == pytest.approx(inside)
    now = model.data(cell, Qt.ItemDataRole.BackgroundRole).color()
    assert now == _fresh_background(context, "X", row, col) != background


def test_a_new_highest_value_retints_every_cell(editors):
    context, models, changed = editors
    session = context.session
    model = models["X"]
    other = model.data(model.index(2, 3), Qt.ItemDataRole.BackgroundRole).color()
    assert model.setData(model.index(0, 0), float(session.inputs.X.max()) + 5.0)
    rows, cols = session.inputs.X.shape
    assert changed["X"] == [(0, 0, rows - 1, cols - 1)]
    now = model.data(model.index(2, 3), Qt.ItemDataRole.BackgroundRole).color()
    assert now == _fresh_background(context, "X", 2, 3) != other


def test_undo_announces_the_cell_it_restores(editors):
    context, models, changed = editors
    x = context.session.inputs.X
    row, col = _inner_cell(x)
    model = models["X"]
    old = model.data(model.index(row, col))
    assert model.setData(model.index(row, col), float(x.min() + 0.9 * (x.max() - x.min())))
    changed["X"].clear()
    context.history.undo()
    assert changed["X"] == [(row, col, row, col)]
    assert model.data(model.index(row, col)) == old


def test_changed_box_bounds_every_changed_cell():
    from attention_explorer.ui.editing.matrix_changes import changed_box

    old = np.zeros((4, 5))  # [rows, cols]
    assert changed_box(old, old.copy()) is None
    new = old.copy()
    new[1, 3], new[2, 0] = 1.0, -1.0
    assert changed_box(old, new) == (1, 2, 0, 3)
    assert changed_box(None, new) == (0, 3, 0, 4)
    assert changed_box(np.zeros((2, 2)), new) == (0, 3, 0, 4)


def test_the_font_fits_the_widest_number_and_the_cell_height(qapp):
    from attention_explorer.ui.heatmap.heatmap_texts import (
        MIN_VALUE_POINT_SIZE,
        VALUE_POINT_SIZE,
        fitting_point_size,
        text_width,
    )

    texts = ["0.2483", "1", "−∞"]
    assert fitting_point_size(texts, 200.0, 60.0) == VALUE_POINT_SIZE  # roomy cells
    assert fitting_point_size(texts, 200.0, 4.0) == 0.0  # too low for any text
    widest = text_width("0.2483", VALUE_POINT_SIZE)
    size = fitting_point_size(texts, 4 + widest * 0.8, 60.0)  # 80 % of the widest
    assert MIN_VALUE_POINT_SIZE <= size < VALUE_POINT_SIZE
    assert size == math.floor(VALUE_POINT_SIZE * 0.8 * 2) / 2
    assert fitting_point_size(texts, 4 + widest * 0.5, 60.0) == 0.0  # below the minimum
