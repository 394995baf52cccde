"""The walkthrough follows the head and the query the learner chooses (issue 20, items 1, 9)."""

import pytest
from PySide6.QtCore import Qt
from window_fixtures import RECOMPUTE_MS, explorer_window

from attention_explorer.session import Session, resize, starter_session
from attention_explorer.ui.state.live_trace import LiveTrace
from attention_explorer.ui.walkthrough.walkthrough_panel import WalkthroughPanel
from attention_explorer.walkthrough.focus import choose_focus, is_content
from attention_explorer.walkthrough.follow import Followed, remap_row


def make_panel(qtbot, data=None):
    session = Session.from_data(data or starter_session())
    live = LiveTrace(session)
    panel = WalkthroughPanel(session, live)
    qtbot.addWidget(panel)
    panel.show()
    live.recompute_now()
    return panel, session, live


def test_selecting_head_1_then_next_keeps_head_1(qtbot):
    panel, session, _ = make_panel(qtbot)
    panel.go_next()
    session.selected_head = 1  # the learner picks head 1 (heads grid, head box)
    panel.go_next()
    assert panel.current().head == 1 and session.selected_head == 1
    panel.go_next()
    assert panel.current().head == 1 and session.selected_head == 1
    scores = next(s for s in panel.steps() if s.key == "scores")
    assert scores.head == 1


def test_a_token_chosen_in_the_strip_is_followed(qtbot, tmp_path, dialogs):
    with explorer_window(qtbot, tmp_path) as win:
        walk = win.walkthrough
        row = 0 if walk.followed().row != 0 else 1
        edit = win.tokens.edits()[row]
        qtbot.mouseClick(edit, Qt.MouseButton.LeftButton)
        assert walk.followed().row == row and walk.followed().by == "you"
        scores = next(s for s in walk.steps() if s.key == "scores")
        assert scores.cells[0][0] == row
        walk.restart()  # Restart keeps the learner's choice
        assert next(s for s in walk.steps() if s.key == "scores").cells[0][0] == row


def test_a_cell_selected_in_a_view_is_followed(qtbot):
    panel, session, _ = make_panel(qtbot)
    session.selected_cell = (1, 0)
    scores = next(s for s in panel.steps() if s.key == "scores")
    assert scores.cells[0] == (1, 0)


def test_adding_a_token_keeps_the_followed_query(qtbot):
    panel, session, live = make_panel(qtbot)
    row = panel.followed().row
    name = live.trace.tokens[row]
    with qtbot.waitSignal(live.updated, timeout=RECOMPUTE_MS):
        session.load(resize.set_token_count(session.data(), len(session.tokens) + 1))
    assert live.trace.tokens[panel.followed().row] == name
    scores = next(s for s in panel.steps() if s.key == "scores")
    assert scores.cells[0][0] == row


def test_remap_row_follows_the_token():
    assert remap_row(("a", "b", "c"), ("a", "b", "c", "d"), 2) == 2
    assert remap_row(("a", "b", "c"), ("x", "a", "b", "c"), 1) == 2  # added in front
    assert remap_row(("a", "b", "c"), ("a", "c"), 2) == 1  # the one before it removed
    assert remap_row(("a", "b", "c"), ("a", "z", "c"), 1) == 1  # renamed in place
    assert remap_row(("a", "b", "c"), ("a", "c"), 1) is None  # the followed token removed
    f = Followed(head=0, row=1, tokens=("a", "b")).on_tokens(("q", "a", "b"))
    assert f.row == 2


def test_special_tokens_are_never_the_default_query():
    assert not any(is_content(t) for t in ("[CLS]", "[SEP]", "<s>", "</s>", "<|endoftext|>", "."))
    assert all(is_content(t) for t in ("it", "##ing", "Ġcat", "t0"))
    from attention_explorer.engine import compute

    data = starter_session()
    tokens = ("[CLS]", "cat", "sat", "[SEP]")
    data = data.with_changes(tokens=tokens, config=data.config.with_changes(mask="none"))
    trace = compute(data.inputs, data.config, tokens=tokens)
    assert tokens[choose_focus(trace, 0).row] in ("cat", "sat")


@pytest.mark.parametrize("size", [(1600, 1000)])
def test_the_minilm_example_opens_on_head_11_it_to_cat(qtbot, tmp_path, dialogs, size):
    with explorer_window(qtbot, tmp_path) as win:
        with qtbot.waitSignal(win.live.updated, timeout=RECOMPUTE_MS * 4):
            assert win.open_example("minilm-it-cat")
        qtbot.waitUntil(lambda: win.live.trace is not None and "it" in win.live.trace.tokens)
        walk = win.walkthrough
        scores = next(s for s in walk.steps() if s.key == "scores")
        tokens = win.live.trace.tokens
        row, col = scores.cells[0]
        assert (tokens[row], tokens[col], scores.head) == ("it", "cat", 11)
        walk.go_next()
        assert win.session.selected_head == 11
        assert win.session.selected_cell == (row, col)


def _lines(narration):
    """The bottom edge (document y) of every laid-out line of text in the narration."""
    doc = narration.document()
    block, bottoms = doc.begin(), []
    while block.isValid():
        layout = block.layout()
        top = layout.position().y()
        bottoms += [top + layout.lineAt(i).rect().bottom() for i in range(layout.lineCount())]
        block = block.next()
    return bottoms


def lines_in_sight(narration) -> int:
    """Lines of text wholly inside the narration's viewport, from the top."""
    return sum(b <= narration.viewport().height() for b in _lines(narration))


def lines_in_all(narration) -> int:
    """Lines of text in the whole narration."""
    return len(_lines(narration))


def test_at_1366x768_the_narration_shows_six_lines_and_restart_goes_to_the_top(
    qtbot, tmp_path, dialogs
):
    with explorer_window(qtbot, tmp_path) as win:
        win.setWindowState(Qt.WindowState.WindowNoState)
        win.resize(1366, 768)
        win.fit_docks(1366, 768)
        qtbot.waitUntil(lambda: win.size().width() == 1366)
        walk = win.walkthrough
        narration = walk.narration
        for _ in walk.steps():  # at every step, six lines of text show without scrolling
            assert lines_in_sight(narration) >= min(6, lines_in_all(narration)), walk.index()
            walk.go_next()
        walk.restart()
        while walk.current().key != "weights":  # the long softmax table scrolls
            walk.go_next()
        bar = narration.verticalScrollBar()
        assert bar.maximum() > 0
        bar.setValue(bar.maximum())
        win.stages.scroll_area().verticalScrollBar().setValue(10_000)
        qtbot.mouseClick(walk.restart_button, Qt.MouseButton.LeftButton)
        assert walk.index() == 0 and bar.value() == 0
        assert win.stages.scroll_area().verticalScrollBar().value() == 0


def test_opening_a_head_of_a_model_follows_that_head_and_a_content_token(qtbot, tmp_path, dialogs):
    """As the model overview does: replace the document, then select the head clicked."""
    from attention_explorer.session.examples import load_example

    data = load_example("minilm-it-cat")
    data = data.with_changes(experiment={}, notes=(), description="")  # no example focus
    with explorer_window(qtbot, tmp_path) as win:
        with qtbot.waitSignal(win.live.updated, timeout=RECOMPUTE_MS * 4):
            win.document.replace(data)
            win.session.selected_head = 3
        walk = win.walkthrough
        qtbot.waitUntil(lambda: walk.steps() and walk.steps()[0].head == 3)
        walk.go_next()
        assert walk.current().head == 3 and win.session.selected_head == 3
        scores = next(s for s in walk.steps() if s.key == "scores")
        token = win.live.trace.tokens[scores.cells[0][0]]
        assert token not in ("[CLS]", "[SEP]", ".") and is_content(token)


def test_a_click_on_a_row_label_follows_that_token(qtbot, tmp_path, dialogs):
    from PySide6.QtCore import QPointF

    with explorer_window(qtbot, tmp_path) as win:
        walk, view = win.walkthrough, win.stages.view("weights")
        row = 0 if walk.followed().row != 0 else 2
        key = (win.session.selected_cell or (0, 0))[1]
        axis = view.plot.getAxis("left")
        y = view.plot.getViewBox().mapViewToScene(QPointF(0.0, row + 0.5)).y()
        at = view.graphics.mapFromScene(QPointF(axis.sceneBoundingRect().center().x(), y))
        qtbot.mouseClick(view.graphics.viewport(), Qt.MouseButton.LeftButton, pos=at)
        assert win.session.selected_cell == (row, key)  # the key stays, the query is the row's
        assert walk.followed().row == row
