"""The whole window: the torch backend, exports, and examples with their walkthrough.

Every test drives the real MainWindow (with a throwaway QSettings) and compares what the
views show with the engine's own ``compute()`` on the session's data, never with numbers
written into the test.
"""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from main_window_checks import (  # noqa: E402
    assert_views_match,
    open_example,
    reference,
    weights,
)
from PySide6.QtGui import QImage  # noqa: E402
from window_fixtures import RECOMPUTE_MS  # noqa: E402

from attention_explorer.exporting.numbers import read_csv_matrix  # noqa: E402
from attention_explorer.ui.export.export_all_dialog import ExportAllDialog  # noqa: E402
from attention_explorer.ui.export.export_dialog import ExportDialog  # noqa: E402


# -- backends --------------------------------------------------------------------------
def test_torch_backend_gives_the_numpy_weights(qtbot, window):
    pytest.importorskip("torch")
    numpy_trace = reference(window)
    combo = window.controls.backend
    offered = [combo.itemData(k) for k in range(combo.count())]
    index = next(k for k, b in enumerate(offered) if b is not None and b.name == "torch")
    with qtbot.waitSignal(window.live.updated, timeout=30000):
        combo.setCurrentIndex(index)
    assert window.session.backend.name == "torch"
    assert window.live.trace.backend.name == "torch"
    for head in range(window.session.config.heads):
        window.session.selected_head = head
        np.testing.assert_allclose(weights(window), numpy_trace.stage("weights", head), atol=1e-6)
        for stage in ("scores", "head_outputs", "output"):
            shown = window.stages.view(stage).frame.image
            np.testing.assert_allclose(shown, numpy_trace.stage(stage, head), rtol=1e-5, atol=1e-6)
    assert_views_match(window)


# -- exports ---------------------------------------------------------------------------
def test_export_dialog_writes_a_png(window, tmp_path):
    dialog = window.export_dialog("weights", 1)
    assert isinstance(dialog, ExportDialog)
    assert (dialog.stage(), dialog.head(), dialog.fmt()) == ("weights", 1, "png")
    assert dialog.path_edit.text().endswith("weights_head1.png")
    path = tmp_path / "picture.png"
    dialog.path_edit.setText(str(path))
    assert dialog.export()
    assert dialog.written == path
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = QImage(str(path))
    assert not image.isNull() and image.width() > 100 and image.height() > 100


@pytest.mark.parametrize("where", ["missing", "a_file"])
def test_export_dialog_refuses_a_folder_it_cannot_write(window, tmp_path, where):
    exports = tmp_path / "exports"
    exports.mkdir()
    (exports / "a_file").write_text("not a folder")
    target = exports / where / "picture.png"
    dialog = window.export_dialog("scores", 0)
    dialog.path_edit.setText(str(target))
    assert not dialog.export()
    assert dialog.message.text().startswith("Not exported:")
    assert dialog.written is None
    assert [p.name for p in exports.iterdir()] == ["a_file"]  # nothing written, nothing made


def test_export_all_writes_every_stage_with_predictable_names(window, tmp_path):
    dialog = window.export_all_dialog()
    assert isinstance(dialog, ExportAllDialog)
    for fmt, box in dialog.format_boxes.items():
        box.setChecked(fmt in ("png", "csv"))
    folder = tmp_path / "out"
    folder.mkdir()
    dialog.folder_edit.setText(str(folder))
    assert dialog.export(), dialog.message.text()
    names = {p.name for p in folder.iterdir()}
    assert names == {p.name for p in dialog.written}
    for name in (
        "weights_head0.png",
        "weights_head1.png",
        "weights_grid.png",
        "scores_head0.csv",
        "masked_head1.png",
        "concat.csv",
        "output.png",
        "mask.png",
        "X.csv",
    ):
        assert name in names
    trace = reference(window)
    rows, cols, values = read_csv_matrix(folder / "weights_head1.csv")
    assert rows == list(window.session.tokens) and cols == list(window.session.tokens)
    np.testing.assert_allclose(values, trace.stage("weights", 1), rtol=1e-6)
    assert QImage(str(folder / "weights_head0.png")).width() > 100


def test_export_all_refuses_a_missing_folder_and_writes_nothing(window, tmp_path):
    dialog = window.export_all_dialog()
    dialog.folder_edit.setText(str(tmp_path / "nowhere"))
    assert not dialog.export()
    assert "does not exist" in dialog.message.text()
    assert dialog.written == []
    assert not (tmp_path / "nowhere").exists()


# -- examples and the walkthrough ------------------------------------------------------
def test_opening_an_example_restarts_the_walkthrough_and_steps_highlight_views(qtbot, window):
    walk = window.walkthrough
    walk.go_next()
    walk.go_next()
    assert walk.index() == 2
    open_example(qtbot, window, "three-tokens")
    assert window.session.tokens == ("t1", "t2", "t3")
    assert walk.index() == 0
    assert "*" not in window.windowTitle()
    trace = reference(window)
    assert walk.current() is not None and walk.steps()[0] is walk.current()
    stepped = 0
    while walk.next_button.isEnabled():
        with qtbot.waitSignal(walk.step_changed, timeout=RECOMPUTE_MS):
            walk.go_next()
        step = walk.current()
        highlighted = {s for s, v in window.stages.views().items() if v.is_highlighted()}
        if step.stage in window.stages.views():
            assert highlighted == {step.stage}, step.key
            assert window.session.selected_head == step.head
            # every step selects the followed (query, key), so the views agree on one cell
            assert window.session.selected_cell == step.selection
            stepped += 1
        else:
            assert highlighted == set(), step.key
    assert stepped >= 4  # scores, scaled, masked, weights at least
    assert trace.stage("weights", 0).shape == (3, 3)


def test_walkthrough_menu_actions_step_and_highlight(qtbot, window):
    walk = window.walkthrough
    walk.restart()
    seen = []
    while window.menus.next_step.isEnabled() and walk.next_button.isEnabled():
        window.menus.next_step.trigger()
        step = walk.current()
        if step.stage in window.stages.views():
            assert window.stages.view(step.stage).is_highlighted()
            seen.append(step.stage)
    assert {"scores", "weights", "head_outputs"} <= set(seen)
    window.menus.back_step.trigger()
    assert walk.index() == len(walk.steps()) - 2
