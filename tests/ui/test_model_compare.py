"""The compare view (View > Compare with original, Ctrl+Shift+D): the selected stage of the
open head as opened, as edited and their difference, drawn from DisplayFrames, exportable."""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QImage

from attention_explorer.session.compute_session import compute_session
from attention_explorer.ui.model.compare_frames import difference_frame


def shown(qtbot, compare):
    qtbot.waitUntil(lambda: all(v.frame is not None for v in compare.views.values()), timeout=10000)


def test_ctrl_shift_d_compares_the_selected_stage(qtbot, window):
    assert window.compare_action.shortcut().toString() == "Ctrl+Shift+D"
    window.session.selected_stage = "scores"
    window.compare_action.trigger()
    compare = window.compare
    assert window.compare_dock.isVisible() and compare.stage == "scores"
    shown(qtbot, compare)
    assert compare.note.text().endswith("no cell of this stage changed")
    assert not compare.views["difference"].frame.image.any()


def test_an_edit_shows_as_the_difference_of_the_two_traces(qtbot, window):
    window.compare_action.trigger()
    compare = window.compare
    compare.set_stage("weights")
    shown(qtbot, compare)
    original = window.session.data()
    window.session.selected_head = 1
    with window.history.transaction("Edit W_Q"):
        window.session.inputs = original.inputs.with_array("W_Q", original.inputs.W_Q * 3.0)
    qtbot.waitUntil(lambda: "largest change" in compare.note.text(), timeout=10000)
    before = compute_session(original).stage("weights", 1)  # [n, n]
    after = compute_session(window.session.data()).stage("weights", 1)
    frame = compare.views["difference"].frame
    diff = np.where(np.isneginf(before) & np.isneginf(after), 0.0, after - before)
    np.testing.assert_allclose(
        frame.image[~frame.masked_cells], diff[~frame.masked_cells], atol=1e-6
    )
    bound = np.abs(diff[np.isfinite(diff)]).max()
    assert frame.levels == (-bound, bound) or np.allclose(frame.levels, (-bound, bound))
    assert frame.masked_cells.sum() == np.isneginf(after).sum()  # causal: masked in both
    assert compare.views["original"].frame.levels == (0.0, 1.0)
    assert compare.views["edited"].frame.heading.startswith("edited: ")


def test_original_and_edited_scores_share_their_levels(qtbot, window):
    window.compare_action.trigger()
    compare = window.compare
    compare.set_stage("scores")
    shown(qtbot, compare)
    data = window.session.data()
    with window.history.transaction("Edit W_K"):
        window.session.inputs = data.inputs.with_array("W_K", data.inputs.W_K * 4.0)
    qtbot.waitUntil(lambda: "largest change" in compare.note.text(), timeout=10000)
    left, right = compare.views["original"].frame, compare.views["edited"].frame
    assert left.levels == right.levels
    scores = compute_session(window.session.data()).stage("scores", 0)  # [n, n]
    assert right.levels[1] >= np.abs(scores).max() - 1e-9


def test_a_new_token_has_no_cell_by_cell_difference(qtbot, window):
    data = window.session.data()
    trace = compute_session(data)
    bigger = compute_session(
        data.with_changes(
            tokens=(*data.tokens, "new"),
            inputs=data.inputs.with_array("X", np.vstack([data.inputs.X, data.inputs.X[:1]])),
        )
    )
    frame, why = difference_frame(trace, bigger, "weights", 0)
    assert frame is None and "the shapes differ" in why


def test_the_difference_exports_as_a_picture(qtbot, window, tmp_path):
    window.compare_action.trigger()
    compare = window.compare
    shown(qtbot, compare)
    path = tmp_path / "difference.png"
    assert compare.export_difference(str(path))
    image = QImage(str(path))
    assert image.width() > 400 and image.height() > 300
    assert not compare.export_difference(str(tmp_path / "difference.txt"))
    assert "png" in compare.note.text()
