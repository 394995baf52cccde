"""The walkthrough in the real window: the editor tab follows the step, the views select the
followed query and key, and the narration never cuts a step off."""

from PySide6.QtCore import Qt
from window_fixtures import RECOMPUTE_MS, dialogs, window  # noqa: F401

from attention_explorer.walkthrough import choose_focus


def walk_to(window, key):  # noqa: F811
    panel = window.walkthrough
    panel.restart()
    while panel.current().key != key:
        assert panel.next_button.isEnabled(), f"no step {key!r}"
        panel.go_next()
    return panel.current()


def test_the_editor_tab_follows_the_step_in_projection_mode(qtbot, window):  # noqa: F811
    expected = {"embeddings": "X", "Q": "W_Q", "K": "W_K", "V": "W_V", "output": "W_O"}
    for key, tab in expected.items():
        walk_to(window, key)
        assert window.matrices.current_array() == tab, key


def test_the_editor_tab_follows_the_step_in_direct_mode(qtbot, window):  # noqa: F811
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        assert window.open_example("three-tokens")
    for key, tab in {"Q": "Q", "K": "K", "V": "V"}.items():
        walk_to(window, key)
        assert window.matrices.current_array() == tab, key


def test_every_step_selects_the_followed_query_and_key(qtbot, window):  # noqa: F811
    trace = window.live.trace
    focus = choose_focus(trace, window.session.selected_head)
    for key in ("Q", "K", "V", "scores", "mask", "weights"):
        step = walk_to(window, key)
        assert window.session.selected_cell == (focus.row, focus.col), key
        assert step.selection == (focus.row, focus.col)
    # at the K step the embeddings editor still marks the followed query, and only it
    walk_to(window, "K")
    x_model = window.matrices.editor("X").model()
    bold = [
        r
        for r in range(x_model.rowCount())
        if x_model.headerData(r, Qt.Orientation.Vertical, Qt.ItemDataRole.FontRole) is not None
    ]
    assert bold == [focus.row]


def test_the_narration_scrolls_to_its_last_line(qtbot, window):  # noqa: F811
    window.resize(1366, 768)
    walk_to(window, "weights")  # the softmax table: the longest step
    narration = window.walkthrough.narration
    narration.verticalScrollBar().setValue(narration.verticalScrollBar().maximum())
    document_height = narration.document().size().height()
    shown = narration.viewport().height() + narration.verticalScrollBar().maximum()
    assert shown >= document_height - 1
    assert narration.height() >= narration.fontMetrics().lineSpacing() * 5
    assert "attends to" in narration.toPlainText()  # the result line is in the text


def test_opening_an_example_selects_its_own_followed_cell(qtbot, window):  # noqa: F811
    with qtbot.waitSignal(window.live.updated, timeout=RECOMPUTE_MS):
        assert window.open_example("causal-mask")
    qtbot.waitUntil(lambda: window.live.trace is not None and window.live.trace.n_queries == 3)
    focus = choose_focus(window.live.trace, 0)
    qtbot.waitUntil(lambda: window.session.selected_cell == (focus.row, focus.col))
    assert window.walkthrough.index() == 0
