# ruff: noqa: F811 - the fixtures imported from model_folders are redefined as parameters
"""Model mode's evented state (ui/state/model_state.py), driven through the real window: a Load
and an opened layer fill it, a saved model session's record is read into it, a knockout made
in the Knockouts menu changes it and the session's record (and Undo restores both), the output
panel and the sweep follow it, and a panel made on its own gets the same state."""

from __future__ import annotations

import dataclasses

from model_folders import load, model_window, open_head  # noqa: F401 - fixtures pytest finds

from attention_explorer.pretrained import from_model
from attention_explorer.session import Session, save_session
from attention_explorer.session.starter import starter_session
from attention_explorer.ui.state.model_state import (
    ModelOrigin,
    ModelRecord,
    read_record,
    with_knockouts,
)
from attention_explorer.ui.state.panel_context import PanelContext

TINY = "tiny-induction"
TEXT = "owl duck frog cat bee owl duck frog cat bee"
RUN_MS = 60000


def _record(state, name: str) -> list:
    """Every emission of ``state.events.<name>``, in order."""
    seen: list = []
    getattr(state.events, name).connect(lambda *args: seen.append(args[0] if args else None))
    return seen


def _ran(qtbot, window):
    live = window.model_live
    qtbot.waitUntil(
        lambda: live.edited is not None and live.runner.request_id == live.shown_request,
        timeout=RUN_MS,
    )
    return live


def test_a_load_and_an_opened_layer_fill_the_state(qtbot, model_window):
    window = model_window
    state = window.context.model
    assert window.model_panel.state is state and window.model_live.state is state
    loaded, origins = _record(state, "loaded"), _record(state, "origin")
    assert state.loaded is None and state.origin is None and not state.active()
    load(qtbot, window, TINY, TEXT)
    assert loaded == [state.loaded] and state.loaded.name == TINY and state.text == TEXT
    assert state.origin is None  # loaded, no layer open yet
    open_head(qtbot, window, 1, 0)
    assert state.origin == ModelOrigin(TINY, state.origin.folder, TEXT, 1)
    assert origins[-1] == state.origin and state.active()
    assert state.origin_data.tokens == window.session.tokens  # the model's own numbers
    assert not state.is_edited() and state.edits() == {}
    assert window.model_panel.origin_label.text() == f"The numbers of layer 1 of {TINY}"
    window.document.new()  # another document: no origin
    assert state.origin is None and origins[-1] is None and not state.active()


def test_a_model_session_is_read_into_the_state(qtbot, model_window, tmp_path):
    window = model_window
    data = from_model(TINY, TEXT, layer=1)
    path = tmp_path / "layer1.json"
    save_session(path, data)
    state = window.context.model
    assert window.document.open(path)
    assert state.record().layer == 1 and state.record().text == TEXT
    assert state.knockouts == frozenset() and state.origin is None
    knocked = _record(state, "knockouts")
    knocked_out = with_knockouts(data.experiment, frozenset({(0, 0)}))
    window.document.replace(dataclasses.replace(data, experiment=knocked_out))
    assert state.knockouts == frozenset({(0, 0)}) and knocked == [frozenset({(0, 0)})]
    load(qtbot, window, TINY, TEXT)  # the panel rebuilds the model's numbers of that layer
    qtbot.waitUntil(lambda: state.origin is not None, timeout=RUN_MS)
    assert (state.origin.layer, state.origin.text) == (1, TEXT)
    live = _ran(qtbot, window)
    assert [tuple(pair) for pair in live.edited.knockout] == [(0, 0)]


def test_a_knockout_from_its_menu_changes_the_state_and_the_record(qtbot, model_window):
    window = model_window
    state = window.context.model
    load(qtbot, window, TINY, TEXT)
    open_head(qtbot, window, 1, 0)
    live = _ran(qtbot, window)
    knocked, before = _record(state, "knockouts"), window.session.experiment
    menu = window.knockouts.menu(1, 0)
    assert menu.actions()[0].text() == "Knock out layer 1 head 0"
    menu.actions()[0].trigger()
    assert state.knockouts == frozenset({(1, 0)}) and knocked == [frozenset({(1, 0)})]
    assert window.session.experiment["model"]["knockout"] == [[1, 0]]
    assert read_record(window.session.data()).knockouts == state.knockouts
    assert window.history.undo_label == "Knock out layer 1 head 0"
    # The output panel follows: it shows the knocked-out run beside the model's own.
    qtbot.waitUntil(lambda: live.edited is not live.original, timeout=RUN_MS)
    _ran(qtbot, window)
    output = window.model_output
    assert output.edited is live.edited and output.original is live.original
    assert output.edited is not output.original
    assert window.heads_grid.crossed_count() == 1
    window.history.undo()
    assert state.knockouts == frozenset() and knocked[-1] == frozenset()
    assert window.session.experiment == before  # the record as it was
    qtbot.waitUntil(lambda: output.edited is output.original, timeout=RUN_MS)
    assert window.heads_grid.crossed_count() == 0


def test_an_edit_is_in_the_state_and_the_sweep_takes_it(qtbot, model_window):
    window = model_window
    state = window.context.model
    load(qtbot, window, TINY, TEXT)
    open_head(qtbot, window, 1, 0)
    _ran(qtbot, window)
    inputs = window.session.inputs
    w_q = inputs.W_Q.copy()
    w_q[0, 0] += 1.0
    with window.history.transaction("Edit W_Q"):
        window.session.inputs = inputs.with_array("W_Q", w_q)
    assert state.is_edited() and state.edited_layer() == 1
    assert list(state.edits()) == [1] and state.edits()[1].inputs.W_Q[0, 0] == w_q[0, 0]
    window.sweep.action.trigger()
    dialog = window.sweep.dialog
    assert dialog.state is state and list(dialog.edits) == [1]
    dialog.close()
    window.history.undo()
    assert not state.is_edited() and state.edits() == {}


def test_the_record_is_read_in_one_place_and_bad_entries_are_dropped():
    session = Session.from_data(starter_session())
    assert read_record(session) is None
    context = PanelContext.for_session(session)  # a panel on its own gets a state too
    state = context.model
    bad = [[0, 1], [True, 0], [-1, 2], [1], "x", [2, 3, 4], [1, 2]]
    session.experiment = {"model": {"name": "m", "layer": 3, "text": "t", "knockout": bad}}
    assert state.knockouts == frozenset({(0, 1), (1, 2)})
    assert read_record(session) == ModelRecord("m", "", "t", 3, frozenset({(0, 1), (1, 2)}))
    assert read_record(session).origin() == ModelOrigin("m", "", "t", 3)
    state.set_knockouts(frozenset({(2, 0)}), "Knock out layer 2 head 0")
    assert session.experiment["model"]["knockout"] == [[2, 0]]
    assert session.experiment["model"]["layer"] == 3  # the rest of the record kept
    context.history.undo()
    assert state.knockouts == frozenset({(0, 1), (1, 2)})
