"""The walkthrough's rotation step (RoPE): placed before the scores, numbers from explain."""

import numpy as np

from attention_explorer.core.numbers import format_number
from attention_explorer.session.compute_session import compute_session
from attention_explorer.session.starter import starter_session
from attention_explorer.walkthrough import steps_for


def _steps(positional: str):
    data = starter_session()
    data = data.with_changes(config=data.config.with_changes(positional=positional))
    trace = compute_session(data)
    return trace, steps_for(trace, focus_row=3, focus_col=1)


def test_rope_adds_a_rotation_step_before_the_scores():
    trace, steps = _steps("rope")
    keys = [s.key for s in steps]
    assert keys.index("rotation") == keys.index("scores") - 1
    rotation = steps[keys.index("rotation")]
    assert rotation.stage == "Q_rot" and rotation.cells[0] == (3, 0)
    assert {name for name, _ in rotation.related} == {"Q", "K", "K_rot"}
    text = rotation.plain()
    assert "position 3" in text and "cos(angle)" in text and "θ = 10000" in text
    angle = 3 * 1.0  # pair 0 turns by position × 1
    assert f"cos(angle) = {format_number(np.cos(angle))}" in text
    scores = steps[keys.index("scores")]
    assert [name for name, _ in scores.related] == ["Q_rot", "K_rot"]  # what the scores read
    embeddings = steps[keys.index("embeddings")].plain()
    assert "RoPE adds nothing to X" in embeddings and "position signal P" not in embeddings


def test_no_rotation_step_without_rope():
    _, steps = _steps("sinusoidal")
    keys = [s.key for s in steps]
    assert "rotation" not in keys
    assert [name for name, _ in steps[keys.index("scores")].related] == ["Q", "K"]
