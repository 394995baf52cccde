"""The walkthrough panel: Back / Next through every stage, live narration, selection, keys."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402

from attention_explorer.engine.explain import format_number  # noqa: E402
from attention_explorer.session import Session, resize, starter_session  # noqa: E402
from attention_explorer.ui.state.live_trace import LiveTrace  # noqa: E402
from attention_explorer.ui.walkthrough.walkthrough_panel import WalkthroughPanel  # noqa: E402
from attention_explorer.walkthrough import choose_focus  # noqa: E402

PIPELINE = ["Q", "K", "V", "scores", "scaled", "masked", "weights", "head_outputs"]


def make_panel(qtbot, data):
    session = Session.from_data(data)
    live = LiveTrace(session)
    panel = WalkthroughPanel(session, live)
    qtbot.addWidget(panel)
    panel.resize(760, 520)
    panel.show()
    qtbot.waitExposed(panel)
    live.recompute_now()
    return panel, session, live


def one_head_direct():
    data = resize.set_heads(resize.set_mode(starter_session(), "direct"), 1)
    inputs = data.inputs.with_changes(W_O=None, b_O=None)
    return data.with_changes(inputs=inputs, description="")


@pytest.fixture
def starter(qtbot):
    return make_panel(qtbot, starter_session())


def click_through(qtbot, panel):
    """Press Next until it is disabled; return the stages shown on the way."""
    shown = [panel.current().stage]
    while panel.next_button.isEnabled():
        with qtbot.waitSignal(panel.step_changed) as signal:
            qtbot.mouseClick(panel.next_button, Qt.MouseButton.LeftButton)
        assert signal.args[0] is panel.current()
        shown.append(signal.args[0].stage)
    return shown


def narration(panel) -> str:
    return panel.narration.toPlainText()


def go_to(panel, key):
    panel.restart()
    while panel.current().key != key:
        panel.go_next()


def test_buttons_walk_every_stage_with_several_heads(qtbot, starter):
    panel, session, _ = starter
    assert panel.index() == 0 and panel.current().key == "about"
    assert not panel.back_button.isEnabled() and panel.next_button.isEnabled()
    assert panel.counter.text() == f"Step 1 of {len(panel.steps())}"
    shown = click_through(qtbot, panel)
    assert shown == [None, "X", *PIPELINE, "weights", "concat", "output"]
    assert panel.index() == len(panel.steps()) - 1
    assert not panel.next_button.isEnabled() and panel.back_button.isEnabled()
    assert panel.counter.text() == f"Step {len(shown)} of {len(shown)}"
    while panel.back_button.isEnabled():
        qtbot.mouseClick(panel.back_button, Qt.MouseButton.LeftButton)
    assert panel.index() == 0 and not panel.back_button.isEnabled()


def test_buttons_walk_every_stage_with_one_head(qtbot):
    panel, _, _ = make_panel(qtbot, one_head_direct())
    assert click_through(qtbot, panel) == PIPELINE
    assert [s.key for s in panel.steps()][-1] == "weighted_sum"


def test_projection_one_head_with_positions(qtbot):
    data = resize.set_heads(starter_session(), 1)
    data = data.with_changes(config=data.config.with_changes(positional="sinusoidal"))
    panel, _, _ = make_panel(qtbot, data)
    assert click_through(qtbot, panel) == [None, "X", *PIPELINE, "output"]
    assert panel.steps()[1].title == "Embeddings + positions"


def test_step_changed_carries_stage_head_and_cells(qtbot, starter):
    panel, session, _ = starter
    go_to(panel, "scale")
    with qtbot.waitSignal(panel.step_changed) as signal:
        panel.go_next()
    step = signal.args[0]
    assert step.stage == "masked" and step.key == "mask"
    assert session.selected_cell == step.cells[0]
    with qtbot.waitSignal(panel.step_changed) as signal:
        panel.go_next()
    assert signal.args[0].stage == "weights"


def test_navigation_points_the_views_at_head_and_cell(qtbot, starter):
    panel, session, _ = starter
    go_to(panel, "head_1")
    assert session.selected_head == 1
    assert session.selected_cell == panel.current().cells[0]
    panel.go_next()  # concat: back to the walkthrough's head
    assert session.selected_head == 0


def test_editing_a_number_updates_the_softmax_narration_at_once(qtbot, starter):
    panel, session, live = starter
    go_to(panel, "weights")
    index, before = panel.index(), narration(panel)
    i, j = panel.current().cells[0]
    old_weight = format_number(live.trace.stage("weights", 0)[i, j])
    assert old_weight in before
    X = session.inputs.X.copy()
    X[i, 0] += 2.0
    with qtbot.waitSignal(live.updated):
        session.inputs = session.inputs.with_array("X", X)
    assert panel.index() == index and panel.current().key == "weights"
    after = narration(panel)
    assert after != before
    new_weight = format_number(live.trace.stage("weights", 0)[i, j])
    assert new_weight != old_weight and new_weight in after
    assert "nan" not in after.lower()


def test_a_recompute_leaves_the_users_own_cell_alone(qtbot, starter):
    panel, session, live = starter
    go_to(panel, "scores")
    session.selected_cell = (0, 0)  # the user clicks a cell in a view
    with qtbot.waitSignal(live.updated):
        session.inputs = session.inputs.with_array("X", session.inputs.X + 0.5)
    assert session.selected_cell == (0, 0)
    assert panel.current().key == "scores"


def test_index_is_clamped_when_steps_disappear(qtbot, starter):
    panel, session, live = starter
    while panel.next_button.isEnabled():
        panel.go_next()
    assert panel.current().key == "output"
    with qtbot.waitSignal(live.updated):
        session.config = session.config.with_changes(use_output_projection=False)
    assert panel.current().key == "concat"
    assert panel.index() == len(panel.steps()) - 1
    assert not panel.next_button.isEnabled()


def test_keyboard_moves_while_the_panel_has_focus(qtbot, starter):
    panel, _, _ = starter
    panel.setFocus()
    qtbot.keyClick(panel, Qt.Key.Key_PageDown)
    assert panel.index() == 1
    qtbot.keyClick(panel, Qt.Key.Key_Right, Qt.KeyboardModifier.AltModifier)
    assert panel.index() == 2
    qtbot.keyClick(panel, Qt.Key.Key_Right)  # a plain arrow is not a walkthrough key
    assert panel.index() == 2
    qtbot.keyClick(panel, Qt.Key.Key_PageUp)
    qtbot.keyClick(panel, Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)
    assert panel.index() == 0
    qtbot.keyClick(panel, Qt.Key.Key_PageDown)
    qtbot.keyClick(panel, Qt.Key.Key_Home)
    assert panel.index() == 0


def test_restart_follows_a_cell_the_user_picked(qtbot, starter):
    panel, session, _ = starter
    session.selected_cell = (2, 0)
    panel.restart()
    scores = next(s for s in panel.steps() if s.key == "scores")
    assert scores.cells == ((2, 0),)


def test_loading_another_session_then_restarting(qtbot, starter):
    panel, session, live = starter
    go_to(panel, "weights")
    session.load(one_head_direct().with_changes(tokens=("a", "b", "c", "d")))
    panel.restart()
    with qtbot.waitSignal(live.updated):
        pass
    assert panel.index() == 0
    assert [s.stage for s in panel.steps()] == PIPELINE
    scores = next(s for s in panel.steps() if s.key == "scores")
    focus = choose_focus(live.trace, 0)  # the informative query, not the last one
    assert scores.cells == ((focus.row, focus.col),)


def test_failure_is_noted_and_cleared(qtbot, starter):
    panel, session, live = starter
    go_to(panel, "scores")
    text = narration(panel)
    with qtbot.waitSignal(live.failed):
        session.config = session.config.with_changes(heads=3)  # 8 is not divisible by 3
    assert panel.notice.isVisible() and "last numbers that worked" in panel.notice.text()
    assert narration(panel) == text
    with qtbot.waitSignal(live.updated):
        session.config = session.config.with_changes(heads=2)
    assert not panel.notice.isVisible()


def test_no_trace_yet_shows_a_friendly_line(qtbot):
    session = Session.from_data(starter_session())
    live = LiveTrace(session)
    panel = WalkthroughPanel(session, live)
    qtbot.addWidget(panel)
    assert panel.current() is None and panel.steps() == []
    assert "as soon as" in narration(panel)
    assert not panel.next_button.isEnabled() and not panel.back_button.isEnabled()
    panel.go_next()
    panel.go_back()
    assert panel.index() == 0


def test_fully_masked_row_in_the_panel(qtbot):
    data = one_head_direct()
    n = len(data.tokens)
    custom = tuple(tuple(i > 0 and j < i for j in range(n)) for i in range(n))
    data = data.with_changes(config=data.config.with_changes(mask="custom", custom_mask=custom))
    panel, session, _ = make_panel(qtbot, data)
    session.selected_cell = (0, 1)
    panel.restart()
    go_to_key = next(k for k, s in enumerate(panel.steps()) if s.key == "weights")
    for _ in range(go_to_key):
        panel.go_next()
    text = narration(panel)
    assert "[0, 0, 0, 0]" in text and "nan" not in text.lower()


def test_render_for_a_look(qtbot, starter, tmp_path):
    panel, _, _ = starter
    go_to(panel, "weights")
    assert not panel.grab().isNull()
    panel.grab().save(str(tmp_path / "walk.png"))
    assert (tmp_path / "walk.png").stat().st_size > 0


def test_an_example_walks_the_token_it_names(qtbot, starter):
    """three-tokens follows the middle token (its experiment.focus), as the tutorial does."""
    from attention_explorer.session.examples import load_example

    panel, session, live = starter
    data = load_example("three-tokens")
    session.load(data)
    panel.restart()
    live.recompute_now()
    scores = next(step for step in panel.steps() if step.key == "scores")
    focus = data.experiment["focus"]
    assert scores.cells[0] == (focus["row"], focus["col"])
    assert "t2" in scores.text


def test_failure_notice_quotes_the_message_literally(qtbot, starter):
    # A message with quotes and no tag (Apple's mps, 'float16') must not show &#x27; entities,
    # and one with a tag must not render it.
    panel, _session, live = starter
    message = "Apple's mps device has no 'float64' <b>here</b>"
    live.failed.emit("dtype", message)
    assert panel.notice.textFormat() == Qt.TextFormat.PlainText
    assert message in panel.notice.text()
