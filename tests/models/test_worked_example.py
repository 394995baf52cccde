"""The worked example (MiniLM reading "The cat sat on the mat because it was tired.") and the
focus sentence the walkthrough uses: it follows the live numbers, not typed-in text."""

from __future__ import annotations

import numpy as np

from attention_explorer.engine import compute
from attention_explorer.pretrained.focus import find_token, focus_sentence, heads_attending
from attention_explorer.session.examples import load_example


def example_trace(data=None):
    data = data or load_example("minilm-it-cat")
    return compute(data.inputs, data.config, dtype="float64", tokens=data.tokens)


def test_focus_names_the_heads_with_most_weight_on_cat():
    trace = example_trace()
    it, cat = find_token(trace.tokens, "it"), find_token(trace.tokens, "cat")
    assert (trace.tokens[it], trace.tokens[cat]) == ("it", "cat")
    on_cat = trace.stages["weights"][:, it, cat]  # [heads]
    ranked = heads_attending(trace, "it", "cat")
    assert [hw.head for hw in ranked] == list(np.argsort(-on_cat, kind="stable"))
    assert ranked[0].weight == on_cat.max() > 0.5
    sentence = focus_sentence(trace)
    assert f"head {ranked[0].head} (" in sentence and "“cat”" in sentence


def test_an_edit_changes_the_answer():
    data = load_example("minilm-it-cat")
    best = heads_attending(example_trace(data), "it", "cat")[0].head
    cat = data.tokens.index("cat")
    K = data.inputs.K.copy()
    K[best, cat] = 0.0  # the best head's key for "cat" no longer matches anything
    edited = example_trace(data.with_changes(inputs=data.inputs.with_changes(K=K)))
    assert heads_attending(edited, "it", "cat")[0].head != best
    assert f"are head {best} (" not in focus_sentence(edited)


def test_missing_tokens_are_said_plainly():
    trace = example_trace()
    assert "no “dog”" in focus_sentence(trace, "it", "dog")
    assert heads_attending(trace, "it", "dog") == []


def test_the_shipped_numbers_are_the_models(minilm_folder):
    from attention_explorer.pretrained import from_model
    from attention_explorer.pretrained.worked_example import LAYER, TEXT

    session = from_model(minilm_folder, TEXT, layer=LAYER)
    live = compute(session.inputs, session.config, dtype="float64", stages=("Q", "weights"))
    shipped = example_trace()
    np.testing.assert_allclose(shipped.stages["Q"], live.stages["Q"], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(shipped.stages["weights"], live.stages["weights"], atol=1e-5)


def test_focus_for_the_walkthrough_follows_the_example_and_the_numbers():
    from attention_explorer.pretrained.focus import focus_for

    data = load_example("minilm-it-cat")
    trace = example_trace(data)
    focus = focus_for(trace, data.experiment)
    assert (trace.tokens[focus.row], trace.kv_tokens[focus.col]) == ("it", "cat")
    assert focus.head == heads_attending(trace, "it", "cat")[0].head
    assert focus.sentence == focus_sentence(trace, "it", "cat")
    assert focus_for(trace, {}) is None
    assert focus_for(trace, {"focus": {"query": "it", "key": "dog"}}) is None
