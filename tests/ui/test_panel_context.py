"""The window builds one PanelContext; the matrix panel, its editors and the model panel edit
the window's document through it, so an edit in any of them is undone by the window's history."""

import dataclasses

import numpy as np
import pytest

from attention_explorer.session import Session, starter_session
from attention_explorer.ui.state.panel_context import PanelContext


def test_the_window_hands_its_panels_its_own_session_history_and_prefs(window):
    context = window.context
    assert (context.session, context.history, context.prefs) == (
        window.session,
        window.history,
        window.prefs,
    )
    assert window.matrices.context is context
    model = window.matrices.editor("X").model()
    assert model.prefs is window.prefs
    assert window.model_panel.context is context
    assert window.knockouts.history is window.history  # knockouts are undo steps of the window
    assert window.model_live.prefs is window.prefs


def test_an_edit_in_the_matrix_panel_is_undone_by_the_windows_history(window):
    before = window.session.inputs.X.copy()  # [tokens, d_model]
    model = window.matrices.editor("X").model()
    assert model.setData(model.index(0, 0), 7.5)
    assert window.session.inputs.X[0, 0] == 7.5
    assert window.history.undo()
    np.testing.assert_array_equal(window.session.inputs.X, before)


def test_a_context_for_a_session_alone_has_its_own_history_and_is_frozen():
    session = Session.from_data(starter_session())
    context = PanelContext.for_session(session)
    assert context.session is session and context.history.session is session
    with pytest.raises(dataclasses.FrozenInstanceError):
        context.session = Session.from_data(starter_session())
