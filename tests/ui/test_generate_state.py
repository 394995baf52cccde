"""GenerateState (the Generate window's shared state) on the shipped tiny-induction: Run N and
N Steps give ``ae.generate``'s tokens, a Step continues the shown generation without
recomputing the prompt, set_policy reruns the same prompt with the policy and keeps the full
cache beside it, select_step clamps, a new model drops the generation, and a failure is one
line that leaves what was shown."""

from __future__ import annotations

import numpy as np
import pytest
from psygnal import Signal, SignalGroup

import attention_explorer as ae
from attention_explorer.pretrained.open_model import load_model
from attention_explorer.ui.generate.generate_state import GenerateSettings, GenerateState

TINY = "tiny-induction"
WORDS = "cat dog fox owl bee hen cat dog"  # a repeated list: greedy copies it
WAIT = 60000


class _Events(SignalGroup):
    loaded = Signal(object)


class _ModelState:
    """What the state reads of model mode's ModelState: ``loaded`` and ``events.loaded``."""

    def __init__(self):
        self.loaded = load_model(TINY)
        self.events = _Events()


@pytest.fixture
def state(qtbot):
    return GenerateState(_ModelState())


def _wait(qtbot, state, call):
    with qtbot.waitSignal(state.running, timeout=WAIT, check_params_cb=lambda busy: not busy):
        assert call()


def test_run_n_is_generate_and_selects_the_newest_step(qtbot, state):
    _wait(qtbot, state, lambda: state.run(GenerateSettings(WORDS), 4))
    expected = ae.generate(TINY, WORDS, 4)
    assert state.generation.ids == expected.ids
    assert state.generation.tokens[-4:] == ("fox", "owl", "bee", "hen")
    assert state.selected_step == 3 and state.step_shown() is state.generation.steps[3]


def test_steps_continue_the_same_stepper(qtbot, state):
    settings = GenerateSettings(WORDS, temperature=2.0, seed=9)
    for n in range(1, 4):
        _wait(qtbot, state, lambda: state.step(settings))
        assert len(state.generation.steps) == n
    stepper = state._steppers[0]
    expected = ae.generate(TINY, WORDS, 3, temperature=2.0, seed=9)
    assert state.generation.ids == expected.ids
    for a, b in zip(state.generation.steps, expected.steps):
        assert np.array_equal(a.probs, b.probs)
    _wait(qtbot, state, lambda: state.step(settings))
    assert state._steppers[0] is stepper  # continued, not rebuilt
    _wait(qtbot, state, lambda: state.step(GenerateSettings(WORDS)))  # new settings: afresh
    assert len(state.generation.steps) == 1 and state._steppers[0] is not stepper


def test_set_policy_reruns_with_the_full_cache_beside_it(qtbot, state):
    _wait(qtbot, state, lambda: state.run(GenerateSettings(WORDS), 3))
    seen = []
    state.changed.connect(lambda: seen.append(state.policy))
    policy = {"sinks": 1, "window": 2}
    _wait(qtbot, state, lambda: state.set_policy(policy))
    qtbot.waitUntil(lambda: seen == [policy], timeout=WAIT)
    expected = ae.generate(TINY, WORDS, 3, cache_policy=policy)
    assert state.generation.ids == expected.ids and len(state.generation.steps) == 3
    assert state.generation.policy.window == 2
    assert state.reference.ids == ae.generate(TINY, WORDS, 3).ids
    _wait(qtbot, state, lambda: state.set_policy(None))
    assert state.reference is None and state.generation.policy.full


def test_select_step_clamps_and_a_new_model_forgets(qtbot, state):
    _wait(qtbot, state, lambda: state.run(GenerateSettings(WORDS), 3))
    state.select_step(0)
    assert state.selected_step == 0
    state.select_step(99)
    assert state.selected_step == 2
    state.model_state.events.loaded.emit(None)
    assert state.generation is None and state.selected_step == -1


def test_a_failure_is_one_line_and_keeps_what_was_shown(qtbot, state):
    _wait(qtbot, state, lambda: state.run(GenerateSettings(WORDS), 2))
    shown = state.generation
    messages = []
    state.failed.connect(messages.append)
    _wait(qtbot, state, lambda: state.set_policy({"window": 0}))
    assert len(messages) == 1 and "window" in messages[0] and "\n" not in messages[0]
    assert state.generation is shown
    # past the 24 learned positions: the steps made are kept, the reason said
    _wait(qtbot, state, lambda: state.run(GenerateSettings(WORDS), 20))
    assert len(state.generation.steps) == 17 and "24 learned positions" in messages[-1]
