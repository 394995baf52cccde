"""The Controls panel's Sinks row (gpt-oss's attention sinks): turning it on writes the
session in one undo step with a logit of 0 per head, the trace gains the sink_weight stage
and each row's weights sum to 1 minus the sink's share; off removes the logits; a normaliser
other than softmax is refused with the engine's message and the session is left as it was;
the box follows a session opened with sinks."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402

from attention_explorer.session import History, Session, starter_session  # noqa: E402
from attention_explorer.session.compute_session import compute_session  # noqa: E402
from attention_explorer.ui.editing.controls_panel import ControlsPanel  # noqa: E402


def _panel(qtbot):
    session = Session.from_data(starter_session())
    history = History(session)
    panel = ControlsPanel(session, history)
    qtbot.addWidget(panel)
    return session, history, panel


def test_sinks_turn_on_with_a_logit_per_head_and_undo(qtbot):
    session, history, panel = _panel(qtbot)
    box = panel.sinks.box
    assert box.currentData() is False
    box.setCurrentIndex(box.findData(True))
    heads = session.config.heads
    assert session.config.attention_sinks
    assert np.array_equal(session.inputs.sinks, np.zeros(heads))
    trace = compute_session(session.data(), dtype="float64")
    taken = np.asarray(trace.stages["sink_weight"])[..., 0]  # [heads, n]
    sums = np.asarray(trace["weights"]).sum(axis=-1)  # [heads, n]
    np.testing.assert_allclose(sums + taken, 1.0, atol=1e-12)
    assert taken.min() > 0.0  # a logit of 0 takes a visible share of every row
    history.undo()
    assert not session.config.attention_sinks and session.inputs.sinks is None
    assert box.currentData() is False  # the box follows the undo
    history.redo()
    box.setCurrentIndex(box.findData(False))
    assert not session.config.attention_sinks and session.inputs.sinks is None


def test_sinks_with_another_normaliser_are_refused_by_name(qtbot):
    session, _history, panel = _panel(qtbot)
    panel.normalizer.setCurrentIndex(panel.normalizer.findData("sigmoid"))
    assert session.config.normalizer == "sigmoid"
    box = panel.sinks.box
    box.setCurrentIndex(box.findData(True))
    assert not session.config.attention_sinks and session.inputs.sinks is None
    assert box.currentData() is False  # shows the session's value again
    assert "attention_sinks" in panel.error.text() and "softmax" in panel.error.text()


def test_the_box_follows_a_session_with_sinks(qtbot):
    session, _history, panel = _panel(qtbot)
    heads = session.config.heads
    session.update(
        config=session.config.with_changes(attention_sinks=True),
        inputs=session.inputs.with_changes(sinks=np.full(heads, -1.0)),
    )
    assert panel.sinks.box.currentData() is True
