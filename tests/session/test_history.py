"""Undo/redo restores exact matrices and settings; grouped and merged edits undo as one."""

import numpy as np

from attention_explorer.session import History, Session, resize, starter_session


def make():
    session = Session.from_data(starter_session())
    return session, History(session)


def test_undo_redo_restores_exact_matrix():
    session, history = make()
    before = session.inputs.X.copy()
    session.inputs = session.inputs.with_array("X", before * 3)
    assert history.can_undo and history.is_dirty
    history.undo()
    assert np.array_equal(session.inputs.X, before)
    assert not history.is_dirty
    history.redo()
    assert np.array_equal(session.inputs.X, before * 3)


def test_transaction_undoes_several_fields_at_once():
    session, history = make()
    old = session.data()
    new = resize.set_token_count(old, 7)
    with history.transaction("Tokens"):
        session.update(tokens=new.tokens, config=new.config, inputs=new.inputs)
    assert len(session.tokens) == 7
    assert history.undo_label == "Tokens"
    history.undo()
    assert session.data() == old
    assert not history.can_undo


def test_merged_slider_drag_is_one_step():
    session, history = make()
    start = session.config.temperature
    for value in (0.5, 0.6, 0.7):
        with history.transaction("Temperature", merge="temperature"):
            session.config = session.config.with_changes(temperature=value)
    history.undo()
    assert session.config.temperature == start
    assert not history.can_undo


def test_view_fields_are_not_recorded():
    session, history = make()
    session.selected_head = 1
    session.selected_cell = (1, 0)
    assert not history.can_undo


def test_new_edit_after_undo_drops_redo():
    session, history = make()
    session.name = "a"
    history.undo()
    assert history.can_redo
    session.name = "b"
    assert not history.can_redo
