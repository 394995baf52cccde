"""The whole window: undo and redo, saving, opening and closing.

Every test drives the real MainWindow (with a throwaway QSettings) and compares what the
views show with the engine's own ``compute()`` on the session's data, never with numbers
written into the test.
"""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from cell_typing import type_into_cell  # noqa: E402
from main_window_checks import (  # noqa: E402
    assert_same_arrays,
    assert_views_match,
    choose,
    open_example,
    show_editor,
)
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QMessageBox  # noqa: E402
from window_fixtures import RECOMPUTE_MS  # noqa: E402

from attention_explorer.ui.widgets import dialogs as message_boxes


# -- undo and redo ---------------------------------------------------------------------
def test_undo_and_redo_restore_the_exact_matrices(qtbot, window):
    states = [window.session.data()]
    editor = show_editor(window, "X")
    type_into_cell(qtbot, editor, 0, 0, "0.123456789")
    states.append(window.session.data())
    window.controls.tokens.setValue(5)
    states.append(window.session.data())
    choose(window.controls.heads, 4)
    states.append(window.session.data())
    qtbot.mouseClick(show_editor(window, "W_Q").random_button, Qt.MouseButton.LeftButton)
    states.append(window.session.data())
    assert all(a != b for a, b in zip(states, states[1:]))  # each step changed something

    def step(action, state):
        assert action.isEnabled()
        with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
            action.trigger()
        assert window.session.data() == state
        assert_same_arrays(window.session.inputs.arrays(), state.inputs.arrays())
        assert window.live.trace.config == state.config
        assert_views_match(window)

    for state in reversed(states[:-1]):
        step(window.menus.undo, state)
    assert not window.menus.undo.isEnabled()
    assert "*" not in window.windowTitle()
    for state in states[1:]:
        step(window.menus.redo, state)
    assert not window.menus.redo.isEnabled()
    assert window.controls.heads.currentData() == 4 and window.controls.tokens.value() == 5


def test_a_slider_drag_is_one_undo_step_and_each_list_pick_is_its_own(qtbot, window):
    start = window.session.data()
    for n in (5, 6, 7):  # one drag of the tokens slider
        window.controls.tokens.setValue(n)
    dragged = window.session.data()
    choose(window.controls.heads, 4)
    four = window.session.data()
    choose(window.controls.heads, 8)
    window.menus.undo.trigger()
    assert window.session.data() == four
    window.menus.undo.trigger()
    assert window.session.data() == dragged
    window.menus.undo.trigger()
    assert window.session.data() == start
    assert not window.history.can_undo
    qtbot.waitUntil(lambda: window.controls.tokens.value() == 4)
    assert window.controls.heads.currentData() == 2


CTRL, SHIFT = Qt.KeyboardModifier.ControlModifier, Qt.KeyboardModifier.ShiftModifier


@pytest.mark.parametrize("redo_keys", [(Qt.Key.Key_Y, CTRL), (Qt.Key.Key_Z, CTRL | SHIFT)])
def test_undo_and_redo_keys_in_a_matrix_editor(qtbot, window, redo_keys):
    before = window.session.inputs.X.copy()
    editor = show_editor(window, "X")
    type_into_cell(qtbot, editor, 2, 2, "7")
    edited = window.session.inputs.X.copy()
    assert not np.array_equal(edited, before)
    window.activateWindow()
    qtbot.keyClick(editor.table, Qt.Key.Key_Z, CTRL)
    assert np.array_equal(window.session.inputs.X, before)
    qtbot.keyClick(editor.table, *redo_keys)
    assert np.array_equal(window.session.inputs.X, edited)


# -- files -----------------------------------------------------------------------------
def test_save_then_open_gives_identical_session_data(qtbot, window, tmp_path):
    editor = show_editor(window, "X")
    type_into_cell(qtbot, editor, 3, 5, "0.1234567890123457")
    choose(window.controls.mask, "custom")
    window.toggle_mask_cell(3, 0)
    window.controls.temperature.setValue(1.37)
    saved = window.session.data()
    path = tmp_path / "session.json"
    assert window.document._write(path)
    assert "*" not in window.windowTitle() and window.windowTitle().startswith("session.json")
    open_example(qtbot, window, "three-tokens")
    assert window.session.data() != saved
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        assert window.document.open(path)
    loaded = window.session.data()
    assert loaded == saved
    assert_same_arrays(loaded.inputs.arrays(), saved.inputs.arrays())
    assert loaded.config == saved.config and loaded.tokens == saved.tokens
    assert window.document.path == path
    assert str(path) in window.document.recent_files()
    assert_views_match(window)


def test_opening_a_broken_file_shows_a_message_and_keeps_the_session(window, tmp_path, dialogs):
    path = tmp_path / "broken.json"
    path.write_text('{"format": "attention-explorer-session", "version": 1, "tokens": [')
    before = window.session.data()
    assert not window.document.open(path)
    assert window.session.data() == before
    assert dialogs and dialogs[-1][0] == "warning" and "broken.json" in dialogs[-1][1]
    assert "broken.json" in window.statusBar().currentMessage()
    assert window.document.path is None


def test_closing_with_unsaved_changes_asks_and_cancel_keeps_everything(qtbot, window, monkeypatch):
    asked = []

    def answer_with(button):
        def question(parent, title, text, *args, **kwargs):
            asked.append(text)
            return button

        monkeypatch.setattr(message_boxes, "question", question)

    window.close()  # nothing edited yet: closes without a question
    assert asked == [] and not window.isVisible()
    window.show()
    type_into_cell(qtbot, show_editor(window, "X"), 0, 0, "2.5")
    edited = window.session.data()
    assert "*" in window.windowTitle()
    answer_with(QMessageBox.StandardButton.Cancel)
    assert not window.close()
    assert len(asked) == 1 and window.isVisible() and window.session.data() == edited
    answer_with(QMessageBox.StandardButton.Discard)
    assert window.close()
    assert len(asked) == 2 and not window.isVisible()
