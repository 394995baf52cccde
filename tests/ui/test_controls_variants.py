"""The Controls panel's QK-norm, soft cap, window and rotary fraction: each writes the session
in one undo step (QK-norm makes neutral q_norm/k_norm weights), the trace gains its stage,
undo takes it away, and the boxes follow a session opened with the settings."""

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


def test_qk_norm_turns_on_with_neutral_weights_and_undoes(qtbot):
    session, history, panel = _panel(qtbot)
    panel.qk_norm.setCurrentIndex(panel.qk_norm.findData("rms_one_plus"))
    d_k = session.config.head_dim
    assert session.config.qk_norm == "rms_one_plus"
    assert np.array_equal(session.inputs.q_norm, np.zeros(d_k))  # 1 + 0: leaves x̂ as it is
    trace = compute_session(session.data(), dtype="float64")
    q = trace.stage("Q", 0)
    expected = q / np.sqrt((q * q).mean(-1, keepdims=True) + 1e-6)
    assert np.abs(trace.stage("Q_normed", 0) - expected).max() < 1e-12
    history.undo()
    assert session.config.qk_norm == "none" and session.inputs.q_norm is None


def test_cap_window_and_rotary_fraction_write_the_config(qtbot):
    session, history, panel = _panel(qtbot)
    assert not panel.rotary_fraction.isEnabled()  # no RoPE in the starter
    panel.softcap.setValue(0.5)
    panel.window.setValue(2)
    assert session.config.softcap == 0.5 and session.config.window == 2
    trace = compute_session(session.data(), dtype="float64")
    assert np.abs(np.asarray(trace.stages["capped"])).max() <= 0.5
    assert np.abs(np.asarray(trace.stages["scaled"])).max() > 1.0  # the cap cut something
    assert not trace["mask"][3, 0] and trace["mask"][3, 2]  # 3 positions back: hidden
    panel.softcap.setValue(0.0)
    assert session.config.softcap is None and panel.softcap.text() == "off"
    panel.positional.setCurrentIndex(panel.positional.findData("rope"))
    assert panel.rotary_fraction.isEnabled()
    panel.rotary_fraction.setValue(0.5)
    assert session.config.rotary_fraction == 0.5
    session.update(config=session.config.with_changes(rotary_fraction=1.0, window=None))
    assert panel.rotary_fraction.value() == 1.0 and panel.window.text() == "off"


def test_a_refused_fraction_says_why_and_leaves_the_session(qtbot):
    session, _history, panel = _panel(qtbot)
    panel.positional.setCurrentIndex(panel.positional.findData("rope"))
    panel.rotary_fraction.setValue(0.1)  # 0 of 4 dims would turn
    assert session.config.rotary_fraction == 1.0
    assert "rotary_fraction" in panel.error.text()
