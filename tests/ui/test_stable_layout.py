"""Views never rearrange on an edit: changing heads, editing X or changing tokens keeps which
views sit side by side; only the learner (a new session, numbers on or off, the inputs
toggle) or a new panel size lays them out afresh."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from window_fixtures import shown_stage_panel  # noqa: E402

from attention_explorer.session import Session, resize, starter_session  # noqa: E402


def _lines(panel) -> tuple[tuple[str, ...], ...]:
    return panel._arrangement[1]


def _sharing(panel) -> dict[str, tuple[str, ...]]:
    """For each view on screen, the views on its line (side by side or alone)."""
    return {s: line for line in _lines(panel) for s in line}


def _settle(qtbot, live, panel):
    live.recompute_now()
    qtbot.wait(30)  # the views' width requests are queued: let them arrive


def _edits():
    """Edits that change what the views want: more columns, wider numbers, other d_k."""

    def heads(data):
        return resize.set_heads(data, 4)

    def x_edit(data):
        X = np.array(data.inputs.X, copy=True)
        X[:, :] *= -123.4567  # long negative numbers: wider cells everywhere downstream
        return data.with_changes(inputs=data.inputs.with_changes(X=X))

    def tokens(data):
        return resize.set_token_count(data, 9)

    return {"heads 2 -> 4": heads, "edit X": x_edit, "tokens 4 -> 9": tokens}


@pytest.mark.parametrize("edit", sorted(_edits()))
@pytest.mark.parametrize("size", [(1100, 850), (760, 700)])
def test_an_edit_never_moves_views_between_side_by_side_and_full_width(qtbot, edit, size):
    session = Session.from_data(starter_session())
    live, panel = shown_stage_panel(qtbot, session, size)
    _settle(qtbot, live, panel)
    before, columns = _sharing(panel), panel.columns()
    session.load(_edits()[edit](session.data()))
    _settle(qtbot, live, panel)
    after = _sharing(panel)
    for name in set(before) & set(after):
        assert after[name] == before[name], (edit, name, before[name], after[name])
    assert panel.columns() == columns


def test_a_new_size_or_the_learners_choice_lays_the_views_out_afresh(qtbot):
    session = Session.from_data(starter_session())
    live, panel = shown_stage_panel(qtbot, session, (1100, 850))
    _settle(qtbot, live, panel)
    four = _sharing(panel)["scores"]  # four tokens: their numbers need room
    session.load(resize.set_token_count(session.data(), 14))
    _settle(qtbot, live, panel)
    assert _sharing(panel)["scores"] == four  # laid out for four tokens: kept while editing
    panel.resize(1101, 850)  # the window changes size: the views get the room they ask for
    qtbot.waitUntil(lambda: len(_sharing(panel)["scores"]) > len(four))  # 14: no numbers
    fresh = _lines(panel)
    session.load(starter_session())  # back to four tokens, an edit: the layout stays
    _settle(qtbot, live, panel)
    assert _lines(panel) == fresh
    session.name = "another session"  # the learner opened another session: afresh
    _settle(qtbot, live, panel)
    assert _sharing(panel)["scores"] == four


def test_a_view_asking_for_more_room_after_an_edit_keeps_its_place(qtbot):
    """What an edit does to a view (wider numbers: it asks for more room) moves nothing; the
    next resize gives it the room."""
    session = Session.from_data(starter_session())
    live, panel = shown_stage_panel(qtbot, session, (1100, 850))
    _settle(qtbot, live, panel)
    before = _sharing(panel)
    assert len(before["scores"]) > 1  # side by side
    scores = panel.view("scores")
    scores._wanted_width = 1000  # the numbers of an edit need the full width now
    scores.wanted_width_changed.emit(1000)
    _settle(qtbot, live, panel)
    assert _sharing(panel) == before
    panel.resize(1090, 850)
    qtbot.waitUntil(lambda: _sharing(panel)["scores"] == ("scores",))
