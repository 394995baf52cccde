"""The token strip: rename by typing, add and remove tokens with every matrix following."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtCore import QCoreApplication, QEvent, Qt  # noqa: E402
from PySide6.QtWidgets import QLineEdit, QWidget  # noqa: E402

from attention_explorer.engine import compute, validate_inputs  # noqa: E402
from attention_explorer.session import History, Session, resize, starter_session  # noqa: E402
from attention_explorer.ui.editing.token_strip import MAX_TOKENS, TokenStrip  # noqa: E402


def make_strip(qtbot, data):
    session = Session.from_data(data)
    history = History(session)
    strip = TokenStrip(session, history)
    qtbot.addWidget(strip)
    strip.resize(600, 80)
    strip.show()
    qtbot.waitExposed(strip)
    return strip, session, history


@pytest.fixture
def projection(qtbot):
    return make_strip(qtbot, starter_session())


@pytest.fixture
def direct(qtbot):
    return make_strip(qtbot, resize.set_mode(starter_session(), "direct"))


def cross_data(mode: str):
    data = resize.set_mode(starter_session(), mode)
    config = data.config.with_changes(attention="cross")
    inputs = data.inputs
    if mode == "projection":
        inputs = inputs.with_array("X_kv", np.ones((2, data.config.d_model)))
    return data.with_changes(config=config, kv_tokens=("a", "b"), inputs=inputs)


def retype(qtbot, edit: QLineEdit, text: str) -> None:
    """Replace the box's text by typing, then press Enter."""
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClick(edit, Qt.Key.Key_Backspace)
    qtbot.keyClicks(edit, text)
    qtbot.keyClick(edit, Qt.Key.Key_Return)


def assert_consistent(session: Session) -> None:
    n, m = validate_inputs(session.config, session.inputs)
    assert n == len(session.tokens) and m == len(session.key_tokens)
    compute(session.inputs, session.config, tokens=session.tokens)


def test_shows_one_box_per_token(projection):
    strip, session, _ = projection
    assert [e.text() for e in strip.edits()] == list(session.tokens)
    assert not strip.key_row.scroll.isVisible()


def test_typing_renames_a_token_and_undo_restores_it(qtbot, projection):
    strip, session, history = projection
    retype(qtbot, strip.edits()[1], "dog")
    assert session.tokens == ("The", "dog", "sat", "down")
    assert history.undo_label == "Rename token 1 to 'dog'"
    history.undo()
    assert session.tokens == ("The", "cat", "sat", "down")
    assert strip.edits()[1].text() == "cat"


def test_an_empty_name_is_refused_with_a_message(qtbot, projection):
    strip, session, history = projection
    retype(qtbot, strip.edits()[2], "   ")
    assert session.tokens == ("The", "cat", "sat", "down")
    assert not history.can_undo
    assert strip.message_label.isVisible()
    assert "cannot be empty" in strip.message() and "'sat'" in strip.message()
    assert strip.edits()[2].text() == "sat"
    retype(qtbot, strip.edits()[2], "ran")
    assert session.tokens[2] == "ran" and strip.message() == ""


def test_plus_adds_a_token_and_grows_x(qtbot, projection):
    strip, session, history = projection
    x_before = session.inputs.X.copy()
    qtbot.mouseClick(strip.query_row.add, Qt.MouseButton.LeftButton)
    assert session.tokens == ("The", "cat", "sat", "down", "t4")
    assert session.inputs.X.shape == (5, 8)
    assert np.array_equal(session.inputs.X[:4], x_before)
    assert len(strip.edits()) == 5 and strip.edits()[4].text() == "t4"
    assert_consistent(session)
    assert history.undo_label == "Add token"
    history.undo()
    assert len(strip.edits()) == 4 and session.inputs.X.shape == (4, 8)


def test_plus_and_minus_resize_every_matrix_in_direct_mode(qtbot, direct):
    strip, session, _ = direct
    qtbot.mouseClick(strip.query_row.add, Qt.MouseButton.LeftButton)
    for name in ("Q", "K", "V"):
        assert getattr(session.inputs, name).shape[1] == 5
    assert_consistent(session)
    qtbot.mouseClick(strip.query_row.remove, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(strip.query_row.remove, Qt.MouseButton.LeftButton)
    assert session.tokens == ("The", "cat", "sat")
    for name in ("Q", "K", "V"):
        assert getattr(session.inputs, name).shape[1] == 3
    assert_consistent(session)


def test_counts_stay_between_1_and_64(qtbot, direct):
    strip, session, _ = direct
    for _ in range(3):
        qtbot.mouseClick(strip.query_row.remove, Qt.MouseButton.LeftButton)
    assert session.tokens == ("The",)
    assert not strip.query_row.remove.isEnabled()
    assert not strip.set_count(0)
    assert "1 to 64" in strip.message()
    assert strip.set_count(MAX_TOKENS)
    assert len(session.tokens) == MAX_TOKENS and not strip.query_row.add.isEnabled()
    assert_consistent(session)
    assert not strip.set_count(MAX_TOKENS + 1)
    assert len(session.tokens) == MAX_TOKENS


def test_outside_changes_update_the_boxes_without_echo(qtbot, projection):
    strip, session, history = projection
    emitted = []
    session.events.tokens.connect(lambda *args: emitted.append(args))
    with history.transaction("Load"):
        session.tokens = ("a", "b", "c", "d")
    assert [e.text() for e in strip.edits()] == ["a", "b", "c", "d"]
    assert len(emitted) == 1  # the strip did not write back
    strip.edits()[0].setFocus()
    strip.edits()[1].setFocus()  # leaving an unchanged box writes nothing
    assert len(emitted) == 1


def test_cross_attention_shows_and_resizes_the_key_tokens(qtbot):
    strip, session, history = make_strip(qtbot, cross_data("direct"))
    assert strip.key_row.scroll.isVisible()
    assert [e.text() for e in strip.edits(keys=True)] == ["a", "b"]
    q_before = session.inputs.Q.copy()
    qtbot.mouseClick(strip.key_row.add, Qt.MouseButton.LeftButton)
    assert session.kv_tokens == ("a", "b", "k2")
    assert session.inputs.K.shape[1] == 3 and session.inputs.V.shape[1] == 3
    assert np.array_equal(session.inputs.Q, q_before)
    assert_consistent(session)
    retype(qtbot, strip.edits(keys=True)[0], "key")
    assert session.kv_tokens[0] == "key"
    history.undo()
    history.undo()
    assert session.kv_tokens == ("a", "b")


def test_cross_attention_in_projection_mode_resizes_x_kv(qtbot):
    strip, session, _ = make_strip(qtbot, cross_data("projection"))
    qtbot.mouseClick(strip.key_row.remove, Qt.MouseButton.LeftButton)
    assert session.kv_tokens == ("a",) and session.inputs.X_kv.shape == (1, 8)
    assert not strip.key_row.remove.isEnabled()
    assert_consistent(session)


def test_a_deleted_strip_no_longer_follows_the_session(qtbot):
    session = Session.from_data(starter_session())
    holder = QWidget()
    TokenStrip(session, History(session), holder)
    holder.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    session.tokens = ("a", "b", "c", "d")  # would raise if the deleted strip still listened
