""" "Open this step's layer" in the real window on tiny-induction: the step's layer opens as the
document (the step's query over the cached K and V, reproducing the step's row), typing a
cached key number reruns the generation with an edit policy so the following tokens change
(the tokens before stay), and Undo brings the policy and the tokens back."""

from __future__ import annotations

import numpy as np
from cell_typing import type_into_cell
from main_window_checks import show_editor
from psygnal import Signal, SignalGroup

import attention_explorer as ae
from attention_explorer.pretrained.open_model import load_model
from attention_explorer.ui.generate.cache_view import CacheView
from attention_explorer.ui.generate.generate_state import GenerateSettings, GenerateState
from attention_explorer.ui.generate.open_step import change_text, connect_open_step

WORDS = "cat dog fox owl bee hen cat dog"
WAIT = 60000


class _Events(SignalGroup):
    loaded = Signal(object)


class _ModelState:
    def __init__(self):
        self.loaded = load_model("tiny-induction")
        self.events = _Events()


def test_open_a_step_edit_a_cached_key_and_the_later_tokens_change(qtbot, window):
    state = GenerateState(_ModelState())
    view = CacheView(state)
    qtbot.addWidget(view)
    opener = connect_open_step(window, state, view)
    with qtbot.waitSignal(state.running, timeout=WAIT, check_params_cb=lambda b: not b):
        state.run(GenerateSettings(WORDS, dtype="float64"), 5)
    before = state.generation
    assert before.tokens[before.prompt_length :] == ("fox", "owl", "bee", "hen", "cat")
    step = 1  # the query "fox" (position 8) copies "owl" from position 3
    view.step_box.setValue(step)
    view.layer_box.setValue(1)
    view.open_button.click()
    data = window.session.data()
    s = before.steps[step]
    assert data.config.attention == "cross" and data.tokens == ("fox",)
    assert data.kv_tokens == before.tokens[: s.position + 1]
    weights = ae.compute(data, dtype="float64")["weights"][:, 0]  # [heads, m]
    np.testing.assert_allclose(weights, s.attentions[1], atol=1e-9)
    target = int(np.argmax(s.attentions[1, 0]))
    assert before.tokens[target] == "owl"
    # the learner types one number of the cached key the induction head reads: the query's
    # largest coordinate, made to push the score far down
    q = data.inputs.Q[0, 0]
    col = int(np.argmax(np.abs(q)))
    value = -200.0 if q[col] > 0 else 200.0
    editor = show_editor(window, "K", 0)
    with qtbot.waitSignal(opener.reported, timeout=WAIT) as said:
        type_into_cell(qtbot, editor, target, col, f"{value:g}")
    after = state.generation
    (edit,) = state.policy["edit"]
    assert (edit["layer"], edit["head"], edit["position"]) == (1, 0, target)
    assert edit["key"] == window.session.inputs.K[0, target].tolist()
    assert edit["key"][col] == value
    cut = before.prompt_length + step
    assert after.ids[:cut] == before.ids[:cut]  # the steps before read the same cache
    assert after.ids[cut:] != before.ids[cut:]  # the edited key changed what follows
    assert said.args[0] == change_text(before, after, [edit])
    assert "now writes" in said.args[0] and "position " + str(target) in said.args[0]
    assert view.compare.comparison is not None and view.compare.comparison.first == step
    assert view.figure.maps[1].edited == ((0, target),) and not view.figure.maps[0].edited
    assert "orange corner" in view.legend.text()
    # Undo: the cache is the model's again, and so are the tokens
    with qtbot.waitSignal(opener.reported, timeout=WAIT):
        window.history.undo()
    assert state.policy is None and state.generation.ids == before.ids


def test_a_query_edit_says_it_is_not_the_cache(qtbot, window):
    state = GenerateState(_ModelState())
    view = CacheView(state)
    qtbot.addWidget(view)
    opener = connect_open_step(window, state, view)
    with qtbot.waitSignal(state.running, timeout=WAIT, check_params_cb=lambda b: not b):
        state.run(GenerateSettings(WORDS), 2)
    assert opener.open(0, 0)
    editor = show_editor(window, "Q", 0)
    with qtbot.waitSignal(opener.reported, timeout=WAIT) as said:
        type_into_cell(qtbot, editor, 0, 0, "3")
    assert said.args[0].startswith("Q is this step's query, not part of the cache")
    assert state.policy is None and view.message.text() == said.args[0]


def test_the_generate_windows_cache_tab_opens_a_step_in_the_main_window(qtbot, window):
    """Through the real Generate window (Model > Generate…): with no wiring of its own, the
    cache view finds the main window it sits under and opens the step there."""
    window.context.model.loaded = load_model("tiny-induction")
    dialog = window.generate.show()
    view, state = dialog.cache_view, dialog.state
    with qtbot.waitSignal(state.running, timeout=WAIT, check_params_cb=lambda b: not b):
        state.run(GenerateSettings(WORDS), 3)
    view.layer_box.setValue(1)
    view.open_button.click()
    assert view.opener is not None
    data = window.session.data()
    s = state.generation.steps[2]
    assert data.name.endswith("step 2, layer 1") and data.tokens == (
        state.generation.tokens[s.position],
    )
    np.testing.assert_array_equal(data.inputs.K, state.generation.cache[1].keys)
    dialog.close()
