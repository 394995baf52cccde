"""Only what is on screen is drawn: a view scrolled out of sight waits for its next paint,
and a view whose stage did not change keeps what it drew."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
import pytest
from PySide6.QtWidgets import QLabel, QScrollArea, QVBoxLayout, QWidget

from attention_explorer.engine import compute
from attention_explorer.session.evented_session import Session
from attention_explorer.session.starter import starter_session
from attention_explorer.ui.heatmap.heatmap_view import HeatmapView
from attention_explorer.ui.state.preferences import ViewPreferences


def trace_of(session: Session):
    d = session.data()
    return compute(d.inputs, d.config, tokens=d.tokens)


@pytest.fixture
def scrolled(qtbot):
    """A weights view below a tall label in a scroll area: out of sight until scrolled to."""
    session = Session.from_data(starter_session())
    area = QScrollArea()
    area.setWidgetResizable(True)
    content = QWidget()
    layout = QVBoxLayout(content)
    spacer = QLabel("above the view")
    spacer.setMinimumHeight(2000)
    view = HeatmapView("weights", session, ViewPreferences())
    view.setMinimumHeight(300)
    layout.addWidget(spacer)
    layout.addWidget(view)
    area.setWidget(content)
    area.resize(500, 400)
    qtbot.addWidget(area)
    area.show()
    qtbot.waitExposed(area)
    return session, area, view


def test_a_view_out_of_sight_is_drawn_when_scrolled_into_sight(qtbot, scrolled):
    session, area, view = scrolled
    trace = trace_of(session)
    view.set_trace(trace, 0)
    assert view._deferral.stale  # nothing built or drawn yet
    assert view._frame is None
    area.ensureWidgetVisible(view)
    qtbot.waitUntil(lambda: not view._deferral.stale, timeout=3000)  # built by its paint
    np.testing.assert_allclose(view._frame.image, trace.stage("weights", 0), rtol=1e-6)


def test_reading_the_frame_of_a_view_out_of_sight_builds_it_now(scrolled):
    session, _area, view = scrolled
    trace = trace_of(session)
    view.set_trace(trace, 1)
    assert view._deferral.stale
    frame = view.frame  # hover, tests and the walkthrough read it: never stale
    assert not view._deferral.stale
    np.testing.assert_allclose(frame.image, trace.stage("weights", 1), rtol=1e-6)


def test_a_view_shown_in_full_is_drawn_at_once(qtbot, scrolled):
    session, area, view = scrolled
    area.ensureWidgetVisible(view)
    qtbot.waitUntil(lambda: not view.visibleRegion().isEmpty(), timeout=3000)
    view.set_trace(trace_of(session), 0)
    assert not view._deferral.stale
    assert view._frame is not None


def test_a_view_whose_stage_did_not_change_keeps_its_frame(qtbot):
    session = Session.from_data(starter_session())
    view = HeatmapView("scores", session, ViewPreferences())
    qtbot.addWidget(view)
    view.show()
    view.set_trace(trace_of(session), 0)
    drawn = view.frame
    image_calls = []
    view.image.setImage = lambda *a, **k: image_calls.append(a)  # any redraw would call it
    W_V = session.inputs.W_V.copy()
    W_V[0, 0] += 1.0  # changes V and what follows, never the scores
    session.inputs = session.inputs.with_changes(W_V=W_V)
    view.set_trace(trace_of(session), 0)
    assert view.frame is drawn and image_calls == []
    X = session.inputs.X.copy()
    X[0, 0] += 1.0  # changes the scores
    session.inputs = session.inputs.with_changes(X=X)
    view.set_trace(trace_of(session), 0)
    assert view.frame is not drawn and len(image_calls) == 1


def test_hover_at_4096_tokens_reads_the_exact_full_resolution_cell(qtbot):
    """The view draws 512×512 block maxima, yet the tooltip of any cell is that cell's own
    weight, computed from the full-resolution stage (the row blocks keep it exact)."""
    from attention_explorer.core.numbers import format_number
    from attention_explorer.diagnostics.bench_gui_window import make_session
    from attention_explorer.session.compute_session import compute_session
    from attention_explorer.ui.state.live_trace import HEAD_LIMITED_STAGES

    session = make_session(4096, 8, 64)
    trace = compute_session(session.data(), heads=[3], stages=HEAD_LIMITED_STAGES)
    view = HeatmapView("weights", session, ViewPreferences())
    qtbot.addWidget(view)
    view.set_trace(trace, 3)
    assert view.frame.block == (8, 8) and view.frame.image.shape == (512, 512)
    weights = trace.stage("weights", 3)  # [4096, 4096]
    row = 4000
    col = int(np.argmax(weights[row]))  # the peak the block maximum keeps visible
    assert view.frame.image[row // 8, col // 8] >= weights[row, col]  # a block maximum
    text = view.tooltip_text(row, col)
    assert format_number(float(weights[row, col]), display=True) in text
    assert f"{row}" in text and f"{col}" in text
    other = row + 1 if row % 8 < 7 else row - 1  # same block, not its maximum
    exact = float(weights[other, col])
    assert exact != view.frame.image[other // 8, col // 8]
    assert format_number(exact, display=True) in view.tooltip_text(other, col)
