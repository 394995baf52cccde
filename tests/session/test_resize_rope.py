"""Switching a RoPE projection session to direct mode keeps RoPE (theta, scaling, offset):
the typed Q and K are the projections before rotation and the engine turns them as before,
so Q_rot, K_rot, the scores and the output do not move; back to projection keeps it too;
the Controls panel shows it; Undo restores the projection session."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from attention_explorer.engine import compute  # noqa: E402
from attention_explorer.session import History, Session, resize, starter_session  # noqa: E402

STAGES = ("Q_rot", "K_rot", "scores", "weights", "output")
ROPES = {
    "default": dict(rope_theta=500.0),
    "linear": dict(rope_theta=10000.0, rope_scaling="linear", rope_factor=2.0),
    "offset-gqa": dict(rope_theta=100.0, position_offset=7, kv_heads=1),
}


def _trace(data):
    return compute(data.inputs, data.config, tokens=data.tokens, dtype="float64")


def _rope_session(**rope):
    data = starter_session()  # projection, 2 heads, d_k 4
    data = data.with_changes(config=data.config.with_changes(positional="rope", **rope))
    if data.config.kv_heads is not None:  # K and V weights for the shared heads
        data = resize.set_kv_heads(data, data.config.kv_heads)
    return data


def _rotate_half(x, theta: float, factor: float, offset: int):
    """transformers' Llama rotation by hand: pairs i and i + d/2 at angle pos * freq_i."""
    d = x.shape[-1]
    freqs = theta ** (-np.arange(0, d, 2) / d) / factor  # [d/2] (linear: positions / factor)
    angles = (np.arange(x.shape[-2]) + offset)[:, None] * freqs[None, :]  # [n, d/2]
    cos, sin = np.cos(np.concatenate([angles] * 2, -1)), np.sin(np.concatenate([angles] * 2, -1))
    half = np.concatenate([-x[..., d // 2 :], x[..., : d // 2]], -1)  # [.., n, d]
    return x * cos + half * sin


@pytest.mark.parametrize("case", ROPES)
def test_direct_mode_keeps_rope_and_every_number(case):
    data = _rope_session(**ROPES[case])
    before = _trace(data)
    direct = resize.set_mode(data, "direct")
    c = direct.config
    assert c.mode == "direct" and c.positional == "rope"
    for key in ("rope_theta", "rope_scaling", "rope_factor", "position_offset", "kv_heads"):
        assert getattr(c, key) == getattr(data.config, key)
    after = _trace(direct)
    for stage in STAGES:
        np.testing.assert_allclose(after[stage], before[stage], rtol=0, atol=1e-12)
    # the engine turns the typed, unrotated Q and K: rotate-half by hand agrees
    factor = c.rope_factor if c.rope_scaling == "linear" else 1.0
    rotated = _rotate_half(direct.inputs.Q, c.rope_theta, factor, c.position_offset)
    np.testing.assert_allclose(after["Q_rot"], rotated, rtol=0, atol=1e-12)
    assert not np.allclose(direct.inputs.Q, after["Q_rot"])  # RoPE really acts


def test_back_to_projection_keeps_rope():
    direct = resize.set_mode(_rope_session(**ROPES["linear"]), "direct")
    back = resize.set_mode(direct, "projection")
    assert back.config.mode == "projection" and back.config.positional == "rope"
    assert back.config.rope_theta == 10000.0 and back.config.rope_factor == 2.0
    assert _trace(back)["Q_rot"].shape == (2, len(back.tokens), 4)


def test_a_table_added_to_x_becomes_none_in_direct_mode():
    data = starter_session()
    data = data.with_changes(config=data.config.with_changes(positional="sinusoidal"))
    before = _trace(data)
    direct = resize.set_mode(data, "direct")
    assert direct.config.positional == "none"
    np.testing.assert_allclose(_trace(direct)["weights"], before["weights"], atol=1e-12)


def test_the_controls_show_rope_after_the_switch_and_undo_restores(qtbot):
    from attention_explorer.ui.editing.controls_panel import ControlsPanel

    data = _rope_session(**ROPES["default"])
    session = Session.from_data(data)
    history = History(session)
    panel = ControlsPanel(session, history)
    qtbot.addWidget(panel)
    assert panel.positional.currentData() == "rope"
    panel.mode.setCurrentIndex(panel.mode.findData("direct"))
    assert session.config.mode == "direct" and session.config.positional == "rope"
    assert panel.positional.currentData() == "rope" and panel.positional.isEnabled()
    assert panel.error.text() == ""
    np.testing.assert_allclose(
        _trace(session.data())["scores"], _trace(data)["scores"], rtol=0, atol=1e-12
    )
    history.undo()
    assert session.config.mode == "projection" and session.config.positional == "rope"
    assert panel.mode.currentData() == "projection" and panel.positional.currentData() == "rope"
    np.testing.assert_array_equal(session.data().inputs.W_Q, data.inputs.W_Q)
