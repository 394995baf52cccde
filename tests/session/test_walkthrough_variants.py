"""The walkthrough's QK-norm and soft-cap steps, and the rotation step under a rotary
fraction: placed where the stages are, every number read from the trace (explain)."""

import numpy as np

from attention_explorer.core.numbers import format_number
from attention_explorer.engine.variants.norm_weights import refit_norm_weights
from attention_explorer.session.compute_session import compute_session
from attention_explorer.session.starter import starter_session
from attention_explorer.walkthrough import steps_for


def _session(**settings):
    data = starter_session()
    config = data.config.with_changes(**settings)
    inputs = data.inputs.with_changes(**refit_norm_weights(data.inputs, data.config, config))
    return data.with_changes(config=config, inputs=inputs)


def _steps(**settings):
    trace = compute_session(_session(**settings), dtype="float64")
    return trace, steps_for(trace, focus_row=3, focus_col=1)


def test_qk_norm_comes_before_the_rotation_and_the_scores_read_what_it_made():
    trace, steps = _steps(qk_norm="rms", positional="rope")
    keys = [s.key for s in steps]
    assert keys.index("qk_norm") < keys.index("rotation") < keys.index("scores")
    step = steps[keys.index("qk_norm")]
    assert step.stage == "Q_normed" and step.editor == "q_norm"
    q = trace.stage("Q", 0)[3]
    dim = int(np.argmax(np.abs(q)))
    root = float(np.sqrt(np.mean(q * q) + 1e-6))
    text = step.plain()
    assert f"dimension {dim}" in text and f"= {format_number(root)}" in text
    assert format_number(trace.stage("Q_normed", 0)[3, dim]) in text
    rotation = steps[keys.index("rotation")]
    assert {name for name, _ in rotation.related} == {"Q_normed", "K_normed", "K_rot"}
    alone = _steps(qk_norm="rms")[1]  # without RoPE the scores read the normed q and k
    scores = next(s for s in alone if s.key == "scores")
    assert [name for name, _ in scores.related] == ["Q_normed", "K_normed"]


def test_the_soft_cap_step_sits_between_the_scale_and_the_mask():
    trace, steps = _steps(softcap=0.5, mask="causal")
    keys = [s.key for s in steps]
    assert keys.index("scale") + 1 == keys.index("softcap") == keys.index("mask") - 1
    text = steps[keys.index("softcap")].plain()
    scaled, capped = trace.stage("scaled", 0)[3], trace.stage("capped", 0)[3]
    assert format_number(0.5 * np.tanh(scaled[1] / 0.5)) in text
    top = int(np.argmax(scaled))
    assert f"capped to {format_number(capped[top])}" in text
    plain = [s.key for s in _steps()[1]]
    assert "softcap" not in plain and "qk_norm" not in plain


def test_a_rotary_fraction_says_which_dimensions_turn():
    _, steps = _steps(positional="rope", rotary_fraction=0.5)
    text = next(s for s in steps if s.key == "rotation").plain()
    assert "only its first 2 of 4 numbers turn" in text and "numbers 2 to 3 pass" in text


def test_a_sliding_window_has_its_own_mask_step_naming_the_keys_too_far_back():
    trace, steps = _steps(mask="causal", window=2)
    step = next(s for s in steps if s.key == "mask")
    assert step.title == "Mask: causal, window 2"
    text = step.plain()
    names = [trace.kv_tokens[c] for c in range(2)]  # query 3 sees only keys 2 and 3
    assert all(f"“{name}”" in text for name in names) and "2 or more positions back (3, 2)" in text
    hidden = trace.stage("masked", 0)[3]
    assert np.isinf(hidden[:2]).all() and np.isfinite(hidden[2:]).all()
