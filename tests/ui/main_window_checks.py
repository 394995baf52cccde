"""What the window tests check: the engine's own trace of the window's session, and small
actions as a user would do them (show an editor, click a cell, pick from a list)."""

import numpy as np
from PySide6.QtCore import QPointF, Qt
from window_fixtures import RECOMPUTE_MS

from attention_explorer.engine import compute


def reference(window):
    """The engine's trace of the window's session, computed here, independently of the views."""
    s = window.session
    d = s.data()
    return compute(
        d.inputs,
        d.config,
        backend=s.backend,
        dtype=s.dtype,
        tokens=d.tokens,
        kv_tokens=d.kv_tokens or None,
    )


def shown_stages(window, trace):
    """The stage views that show something of ``trace`` (concat/output only with several heads)."""
    return {
        stage: view
        for stage, view in window.stages.views().items()
        if trace.has(stage) and view.isVisibleTo(window.stages)
    }


def assert_views_match(window, rtol=1e-6):
    """Every visible stage view shows the engine's numbers for the selected head."""
    trace = reference(window)
    head = window.session.selected_head
    views = shown_stages(window, trace)
    assert {"scores", "scaled", "masked", "weights", "head_outputs"} <= set(views)
    for stage, view in views.items():
        values = trace.stage(stage, head)  # [rows, cols], may hold -inf
        image = view.frame.image
        assert np.isfinite(image).all(), stage
        np.testing.assert_allclose(
            image, np.where(np.isfinite(values), values, 0.0), rtol=rtol, atol=1e-7, err_msg=stage
        )
        np.testing.assert_array_equal(view.frame.masked_cells, ~np.isfinite(values), err_msg=stage)
    return trace


def weights(window) -> np.ndarray:
    return window.stages.view("weights").frame.image.copy()


def all_arrays(window) -> dict[str, np.ndarray]:
    return {name: array.copy() for name, array in window.session.inputs.arrays().items()}


def assert_same_arrays(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for name in a:
        assert np.array_equal(a[name], b[name]), name


def show_editor(window, name: str, head: int | None = None):
    """Bring the editor of ``name`` (head ``head``) to the front, as a click on its tab would."""
    panel = window.matrices
    panel.tabs.setCurrentIndex(panel.tab_names().index(name))
    if head is not None and window.session.selected_head != head:
        window.session.selected_head = head  # the Q/K/V head tabs follow the selected head
    editor = panel.editor(name, head)
    assert editor.isVisible()
    return editor


def click_cell(qtbot, view, row: int, col: int) -> None:
    """A left click in the middle of cell (row, col) of a stage view."""
    scene = view.plot.getViewBox().mapViewToScene(QPointF(col + 0.5, row + 0.5))
    point = view.graphics.mapFromScene(scene)
    qtbot.mouseClick(view.graphics.viewport(), Qt.MouseButton.LeftButton, pos=point)


def choose(combo, key) -> None:
    """Pick the combo box item whose data is ``key``, as the user would from the list."""
    index = combo.findData(key)
    assert index >= 0, f"{key!r} is not offered"
    combo.setCurrentIndex(index)


def open_example(qtbot, window, key: str) -> None:
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        assert window.open_example(key)
