"""The live stage views: heatmaps per stage, the stage panel and the heads grid."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QToolTip
from window_fixtures import shown_stage_panel

from attention_explorer.display import DISPLAY_LIMIT, shrink
from attention_explorer.engine import compute, explain
from attention_explorer.session.evented_session import Session
from attention_explorer.session.resize import set_heads, set_token_count
from attention_explorer.session.starter import starter_session
from attention_explorer.ui.heatmap.heatmap_view import HeatmapView
from attention_explorer.ui.pipeline.heads_grid import HeadsGrid
from attention_explorer.ui.pipeline.stage_panel import StagePanel
from attention_explorer.ui.state.live_trace import LiveTrace
from attention_explorer.ui.state.preferences import ViewPreferences


@pytest.fixture
def setup(qtbot):
    """A starter session (4 tokens, 2 heads, causal), its LiveTrace, a panel and a grid."""
    session = Session.from_data(starter_session())
    live = LiveTrace(session)
    prefs = ViewPreferences()
    panel = StagePanel(session, live, prefs)
    grid = HeadsGrid(session, live, prefs)
    for widget in (panel, grid):
        qtbot.addWidget(widget)
    panel.resize(1100, 850)
    grid.resize(320, 320)
    panel.show()
    grid.show()
    qtbot.waitExposed(panel)
    live.recompute_now()
    yield session, live, prefs, panel, grid
    live.shutdown()


def drawn_texts(view: HeatmapView) -> list[str]:
    """The numbers drawn in the view's cells, in reading order (what a person sees)."""
    return view.texts.drawn()


def placeholder(view: HeatmapView) -> str | None:
    """The text shown instead of the heatmap, or None when the heatmap is shown."""
    return view.placeholder.text() if view.frame is None else None


def selection_frames(view: HeatmapView) -> list[tuple[float, float, float, float]]:
    """(x, y, width, height) of every selection frame drawn in the view, in cell units."""
    from PySide6.QtWidgets import QGraphicsRectItem

    frames = {
        (r.x(), r.y(), r.width(), r.height())
        for item in view.plot.items
        if isinstance(item, QGraphicsRectItem) and item.isVisible()
        for r in [item.rect()]
    }
    return sorted(frames)


def _viewport_point(graphics, scene_point):
    return graphics.mapFromScene(scene_point)


def _cell_point(view: HeatmapView, row: int, col: int):
    """Where the centre of cell (row, col) lies in the view's viewport coordinates."""
    scene = view.plot.getViewBox().mapViewToScene(QPointF(col + 0.5, row + 0.5))
    return _viewport_point(view.graphics, scene)


def test_weights_view_shows_the_engine_weights_of_the_selected_head(setup):
    session, live, _, panel, _ = setup
    image = panel.view("weights").frame.image
    expected = live.trace.stage("weights", session.selected_head)
    assert image.dtype == np.float32 and image.flags.c_contiguous
    np.testing.assert_allclose(image, expected, rtol=1e-6)
    assert panel.view("weights").frame.levels == (0.0, 1.0)
    assert panel.view("weights").frame.heading == "softmax weights · head 0"


def test_score_levels_are_symmetric_about_zero(setup):
    _, live, _, panel, _ = setup
    low, high = panel.view("scores").frame.levels
    assert low == -high
    assert high == pytest.approx(np.abs(live.trace.stage("scores", 0)).max())


def test_selecting_another_head_shows_its_data(setup):
    session, live, _, panel, _ = setup
    before = panel.view("scores").frame.image.copy()
    session.selected_head = 1
    for stage in ("scores", "weights", "head_outputs"):
        np.testing.assert_allclose(
            panel.view(stage).frame.image, live.trace.stage(stage, 1), rtol=1e-6
        )
    assert not np.allclose(before, panel.view("scores").frame.image)
    assert panel.view("weights").frame.heading.endswith("head 1")


def test_causal_mask_marks_hidden_cells_without_non_finite_data(setup, qtbot):
    _, live, _, panel, _ = setup
    view = panel.view("masked")
    qtbot.waitUntil(lambda: len(drawn_texts(view)) == 16)
    hidden_by_mask = ~live.trace["mask"]  # [n, m]
    assert hidden_by_mask.any()
    assert np.isfinite(view.frame.image).all()
    np.testing.assert_array_equal(view.frame.masked_cells, hidden_by_mask)
    assert view.masked_overlay.isVisible()
    texts = np.array(drawn_texts(view)).reshape(hidden_by_mask.shape)
    assert (texts[hidden_by_mask] == "−∞").all()
    assert "−∞" not in texts[~hidden_by_mask]
    assert not panel.view("scores").frame.masked_cells.any()
    for stage in panel.shown_stages():
        stage_view = panel.view(stage)
        assert np.isfinite(stage_view.frame.image).all()
        assert not any("nan" in t.lower() for t in drawn_texts(stage_view))


def test_clicking_a_cell_selects_it_in_the_session(setup, qtbot):
    session, _, _, panel, _ = setup
    view = panel.view("weights")
    with qtbot.waitSignal(view.cell_clicked) as clicked:
        qtbot.mouseClick(
            view.graphics.viewport(), Qt.MouseButton.LeftButton, pos=_cell_point(view, 2, 1)
        )
    assert clicked.args == [2, 1]
    assert session.selected_cell == (2, 1)
    assert session.selected_stage == "weights"
    assert selection_frames(panel.view("scores")) == [(1, 2, 1, 1)]
    assert selection_frames(panel.view("head_outputs")) == [(0, 2, 4, 1)]


def test_tooltip_explains_the_hovered_cell(setup, qtbot):
    _, live, _, panel, _ = setup
    view = panel.view("weights")
    headline = explain(live.trace, "weights", 0, 2, 1).headline
    assert view.tooltip_text(2, 1).startswith(headline)
    panel.highlight_stage("weights")  # scrolls the stage column to the view
    qtbot.wait(100)  # let the scroll area settle
    qtbot.mouseMove(view.graphics.viewport(), _cell_point(view, 2, 1))
    qtbot.waitUntil(lambda: headline.split(" = ")[0] in QToolTip.text(), timeout=2000)


def test_show_values_off_hides_the_numbers(setup):
    _, _, prefs, panel, _ = setup
    view = panel.view("weights")
    assert len(drawn_texts(view)) == 16
    prefs.show_values = False
    assert drawn_texts(view) == []
    prefs.show_values = True
    assert len(drawn_texts(view)) == 16


def test_text_items_are_reused_between_updates(setup, qtbot):
    session, live, _, panel, _ = setup
    view = panel.view("scores")
    qtbot.waitUntil(lambda: len(drawn_texts(view)) == 16)
    layer = view.texts
    before = drawn_texts(view)
    session.inputs = session.inputs.with_changes(X=session.inputs.X * 2)
    live.recompute_now()
    assert view.texts is layer and layer in view.plot.items
    assert not [i for i in view.plot.items if isinstance(i, pg.TextItem)]  # no item per cell
    assert drawn_texts(view) != before
    np.testing.assert_allclose(view.frame.image, live.trace.stage("scores", 0), rtol=1e-5)


def test_long_sequences_are_downsampled(setup, qtbot):
    session, live, _, panel, grid = setup
    with qtbot.waitSignal(live.updated, timeout=20000):
        session.load(set_token_count(session.data(), 600))
    for view in map(panel.view, panel.shown_stages()):
        rows, cols = view.frame.image.shape
        assert rows <= DISPLAY_LIMIT and cols <= DISPLAY_LIMIT
        assert drawn_texts(view) == []
    weights = live.trace.stage("weights", 0)  # [600, 600]
    shown = panel.view("weights").frame.image
    assert shown.shape == (300, 300)
    np.testing.assert_allclose(shown, weights.reshape(300, 2, 300, 2).max(axis=(1, 3)), atol=1e-6)
    assert np.isfinite(panel.view("masked").frame.image).all()
    assert grid.head_image(0).shape[0] <= 128


def test_downsample_marks_only_fully_hidden_blocks():
    data = np.arange(16, dtype=np.float64).reshape(4, 4)
    data[0, 2:] = -np.inf
    data[1, 3] = -np.inf
    shrunk = shrink(data, "mean", limit=2)
    image, masked_cells = shrunk.image, shrunk.masked_cells
    np.testing.assert_array_equal(masked_cells, [[False, False], [False, False]])
    assert image[0, 1] == pytest.approx(6.0)  # only the finite cell (1, 2) counts
    data[1, 2] = -np.inf
    shrunk = shrink(data, "mean", limit=2)
    image, masked_cells = shrunk.image, shrunk.masked_cells
    np.testing.assert_array_equal(masked_cells, [[False, True], [False, False]])
    assert np.isfinite(image).all()


def test_heads_grid_click_selects_a_head(setup, qtbot):
    session, _, _, panel, grid = setup
    assert grid.head_count() == 2 and grid.selected_frame() == 0
    box = grid.head_box(1)
    point = _viewport_point(grid.graphics, box.sceneBoundingRect().center())
    qtbot.mouseClick(grid.graphics.viewport(), Qt.MouseButton.LeftButton, pos=point)
    assert session.selected_head == 1
    assert grid.selected_frame() == 1
    assert panel.view("weights").frame.heading.endswith("head 1")


def test_heads_missing_from_the_trace_show_a_placeholder(setup):
    session, live, _, panel, grid = setup
    partial = compute(session.inputs, session.config, heads=[0], tokens=session.tokens)
    live.trace = partial
    live.updated.emit(partial)
    assert not grid.is_missing(0) and grid.is_missing(1)
    session.selected_head = 1
    assert "computed on selection" in placeholder(panel.view("weights"))
    assert panel.view("concat").frame is not None


def test_single_head_without_projection_hides_concat_and_output(setup):
    session, live, _, panel, grid = setup
    data = set_heads(session.data(), 1)
    data = data.with_changes(config=data.config.with_changes(use_output_projection=False))
    session.load(data)
    live.recompute_now()
    assert not panel.combine_row_shown()
    assert grid.head_count() == 1
    session.load(set_heads(data, 2))
    live.recompute_now()
    assert panel.combine_row_shown()


def test_context_menu_requests_export_and_copy(setup, qtbot):
    session, _, _, panel, _ = setup
    session.selected_head = 1
    menu = panel.view("scaled").context_menu()
    export, copy = menu.actions()[:2]
    assert export.text() == "Export this view…" and copy.text() == "Copy image"
    with qtbot.waitSignal(panel.export_requested) as exported:
        export.trigger()
    assert exported.args == ["scaled", 1]
    with qtbot.waitSignal(panel.copy_requested) as copied:
        copy.trigger()
    assert copied.args == ["scaled", 1]


def test_highlight_stage_frames_one_view(setup):
    _, _, _, panel, _ = setup
    panel.highlight_stage("weights")
    assert panel.view("weights").is_highlighted()
    assert not panel.view("scores").is_highlighted()
    panel.highlight_stage(None)
    assert not any(v.is_highlighted() for v in panel.views().values())


def test_colormap_preference_reaches_the_views(setup):
    _, _, prefs, panel, _ = setup
    prefs.colormap = "magma"
    assert panel.view("weights").bar.colorMap().name == "magma"
    prefs.diverging_colormap = "CET-D3"
    assert panel.view("scores").bar.colorMap().name == "CET-D3"
    assert panel.view("weights").bar.colorMap().name == "magma"


def test_panel_renders_to_a_png(setup, tmp_path):
    _, _, _, panel, _ = setup
    target = tmp_path / "stage_panel.png"
    assert panel.grab().save(str(target))
    assert target.stat().st_size > 10_000


def test_numbers_keep_their_digits_at_any_size_or_give_way(setup, qtbot):
    """One number policy: a cell reads the same at any view size; a view too small for the
    numbers at the smallest font hides them (the tooltip has them) instead of cutting digits."""
    session, live, _, panel, _ = setup
    session.load(set_token_count(session.data(), 12))
    live.recompute_now()
    scores = panel.view("scores")
    expected = scores.frame.texts  # from the one formatter, 4 decimals
    assert len(expected) == 144 and all(len(t.split(".")[-1]) <= 4 for t in expected)
    panel.resize(2400, 1400)
    qtbot.waitUntil(lambda: drawn_texts(scores) == expected, timeout=10000)
    panel.resize(420, 700)
    qtbot.waitUntil(lambda: drawn_texts(scores) == [])
    assert scores.frame.texts == expected


def test_views_reflow_to_the_panel_width_in_pipeline_order(setup, qtbot):
    _, _, _, panel, _ = setup
    assert panel.columns() == 3
    panel.resize(480, 850)
    qtbot.waitUntil(lambda: panel.columns() == 1)
    scores, weights = panel.view("scores"), panel.view("weights")
    qtbot.waitUntil(lambda: weights.y() > scores.y() and weights.x() == scores.x())
    panel.resize(760, 850)
    qtbot.waitUntil(lambda: panel.columns() == 2)
    assert all(panel.view(stage).isVisible() for stage in panel.on_screen_stages())


def test_narrow_views_keep_the_colour_bar_and_every_token_name_inside(setup, qtbot):
    """At two columns of narrow views, a long title must not push the colour bar's numbers
    off the view's edge, and four short token names must all label the key axis."""
    names = ["The", "cat", "sat", "down"]
    _, _, _, panel, _ = setup
    panel.resize(700, 850)  # narrow: the views go one or two side by side
    qtbot.waitUntil(lambda: panel.columns() <= 2)
    for stage in ("scores", "weights"):
        view = panel.view(stage)
        qtbot.waitUntil(lambda v=view: v.plot.geometry().right() <= v.graphics.width())
        axis = view.plot.getAxis("bottom")
        qtbot.waitUntil(lambda a=axis: [label for _, label in a._tickLevels[0]] == names)


def test_small_matrices_show_enough_digits_to_beat_a_rounded_tutorial(qtbot):
    """Seed 001 rounds the middle row to [0.25, 0.5, 0.25]; the view must show 0.2483."""
    from attention_explorer.session.examples import load_example

    session = Session.from_data(load_example("three-tokens"))
    live, panel = shown_stage_panel(qtbot, session)
    texts = drawn_texts(panel.view("weights"))  # row-major, 3x3
    expected = live.trace.stage("weights", 0)[1]
    assert texts[3:6] == [f"{v:.4f}".rstrip("0") for v in expected]
    assert texts[3] == "0.2483"
    live.shutdown()


def test_large_sizes_compute_the_selected_head_and_exports_get_every_head(setup, monkeypatch):
    """Above the threshold the window computes one head without concat/W_O, and says why."""
    import attention_explorer.ui.state.live_trace as live_trace_module

    session, live, _, panel, _ = setup
    monkeypatch.setattr(live_trace_module, "SELECTED_HEAD_ONLY_THRESHOLD", 0)
    monkeypatch.setattr(live_trace_module, "WORKER_THRESHOLD", 10**9)  # stay inline
    session.selected_head = 1
    live.recompute_now()
    assert list(live.trace.heads) == [1]
    assert not live.trace.has("concat") and not live.trace.has("output")
    assert "every head" in placeholder(panel.view("concat"))
    full = live.full_trace()
    assert list(full.heads) == [0, 1] and full.has("concat")
    reference = compute(*_inputs_config(session), tokens=session.tokens)
    np.testing.assert_allclose(full["concat"], reference["concat"], rtol=1e-6)
    np.testing.assert_allclose(
        live.trace.stage("weights", 1), reference.stage("weights", 1), rtol=1e-6
    )


def _inputs_config(session):
    data = session.data()
    return data.inputs, data.config


@pytest.mark.parametrize("stage", ["scores", "head_outputs"])
def test_levels_ignore_masked_cells_and_match_the_finite_extremes(stage):
    from attention_explorer.display import levels_for

    data = np.random.default_rng(3).normal(size=(40, 40)).astype(np.float32)  # [n, m]
    data[np.triu_indices(40, 1)] = -np.inf
    finite = data[np.isfinite(data)]
    low, high = levels_for(stage, data)
    if stage == "scores":
        assert high == -low == pytest.approx(float(np.abs(finite).max()))
    else:
        assert (low, high) == (pytest.approx(float(finite.min())), pytest.approx(finite.max()))
    assert levels_for(stage, np.full((3, 3), -np.inf)) in ((-1.0, 1.0), (0.0, 1.0))


def test_several_heads_without_w_o_show_concat_but_no_empty_output_view(setup):
    session, live, _, panel, _ = setup
    data = session.data()
    session.load(data.with_changes(config=data.config.with_changes(use_output_projection=False)))
    live.recompute_now()
    assert "concat" in panel.shown_stages() and "output" not in panel.shown_stages()
    assert not panel.view("output").isVisible()
    assert all(panel.view(stage).frame is not None for stage in panel.shown_stages())
