"""Shrink, then regrow: what a size change cut comes back within the session; undo works."""

from __future__ import annotations

import numpy as np

from attention_explorer.session.cut_memory import CutMemory
from attention_explorer.session.evented_session import Session
from attention_explorer.session.history import History
from attention_explorer.session.resize import fit, set_d_model, set_heads, set_token_count
from attention_explorer.session.starter import starter_session


def test_tokens_four_to_two_to_four_bring_back_rows_and_names():
    data = starter_session()
    assert len(data.tokens) == 4
    back = set_token_count(set_token_count(data, 2), 4)
    assert back.tokens == data.tokens
    np.testing.assert_array_equal(back.inputs.X, data.inputs.X)


def test_a_chain_of_cuts_comes_back_whole():
    data = starter_session()
    back = set_token_count(set_token_count(set_token_count(data, 3), 1), 4)
    assert back.tokens == data.tokens
    np.testing.assert_array_equal(back.inputs.X, data.inputs.X)
    five = set_token_count(back, 5)  # past what was ever there: a new name and new numbers
    assert five.tokens[:4] == data.tokens and five.tokens[4] not in data.tokens
    np.testing.assert_array_equal(five.inputs.X[:4], data.inputs.X)


def test_d_model_eight_to_four_to_eight_brings_back_the_columns():
    data = starter_session()
    assert data.config.d_model == 8
    back = set_d_model(set_d_model(data, 4), 8)
    for name in ("X", "W_Q", "W_K", "W_V", "W_O"):
        np.testing.assert_array_equal(getattr(back.inputs, name), getattr(data.inputs, name))
    heads = set_heads(set_heads(data, 1), 2)  # a regroup only: the same numbers
    np.testing.assert_array_equal(heads.inputs.W_Q, data.inputs.W_Q)


def test_an_edited_matrix_grows_with_new_numbers():
    data = starter_session()
    two = set_token_count(data, 2)
    edited = two.with_changes(inputs=two.inputs.with_changes(X=two.inputs.X + 1.0))
    back = set_token_count(edited, 4)
    np.testing.assert_array_equal(back.inputs.X[:2], two.inputs.X + 1.0)
    assert not np.array_equal(back.inputs.X[2:], data.inputs.X[2:])


def test_memory_by_content_and_capacity():
    memory = CutMemory(capacity=2)
    full = np.arange(12.0).reshape(3, 4)  # [3, 4]
    kept = full[:2, :2].copy()
    memory.remember(kept, full)
    out = np.zeros((3, 3))
    memory.regrow(kept.copy(), out)  # a copy with the same numbers is the same cut
    np.testing.assert_array_equal(out, full[:3, :3])
    for k in range(3):
        memory.remember(np.full((1, 1), float(k)), full)
    untouched = np.zeros((3, 3))
    memory.regrow(kept, untouched)  # forgotten: the oldest went first
    assert not untouched.any()
    assert fit(None, (2, 2)).shape == (2, 2)


def test_undo_after_regrow_restores_each_state(qtbot=None):
    session = Session.from_data(starter_session()) if hasattr(Session, "from_data") else None
    if session is None:
        session = Session()
        session.load(starter_session())
    history = History(session)
    start = session.data()
    for n in (2, 4):
        new = set_token_count(session.data(), n)
        with history.transaction(f"tokens {n}"):
            session.update(tokens=new.tokens, inputs=new.inputs, config=new.config)
    assert session.tokens == start.tokens
    history.undo()
    assert len(session.tokens) == 2
    history.undo()
    assert session.tokens == start.tokens
    np.testing.assert_array_equal(session.inputs.X, start.inputs.X)
