"""'Open this step's layer': a decoding step's layer as an explorer session reproduces the
step's attention row to 1e-9, K and V are the cache's rows, and an edit of a cached number in
the session becomes a cache-policy edit whose rerun changes the following tokens."""

from __future__ import annotations

import numpy as np
import pytest

import attention_explorer as ae
from attention_explorer.generation import GenerationError
from attention_explorer.generation.policy import describe, parse_policy, policy_dict
from attention_explorer.generation.step_session import (
    edits_between,
    policy_with_edits,
    step_session,
)
from tests.generation.conftest import PROMPT, TINY, tiny_words

STEPS = 5


def tiny_prompt() -> str:
    """A repeated list tiny-induction continues by copying."""
    words = tiny_words()
    return " ".join(words[:6] + words[:2])


def assert_reproduces(folder, gen) -> None:
    """Every step and layer of ``gen`` opens as a session whose weights are the step's rows."""
    for i, step in enumerate(gen.steps):
        for layer in range(step.attentions.shape[0]):
            data = step_session(folder, gen, i, layer)
            weights = ae.compute(data, dtype="float64")["weights"]  # [h, 1, m]
            assert weights.shape == (step.attentions.shape[1], 1, step.position + 1)
            np.testing.assert_allclose(weights[:, 0], step.attentions[layer], atol=1e-9, rtol=0)


@pytest.mark.parametrize(
    "policy", [None, {"window": 3}, {"sinks": 1, "window": 2}, {"evict": [1, 4]}]
)
def test_grouped_query_steps_reproduce_under_each_policy(llama_gen, policy):
    gen = ae.generate(llama_gen, PROMPT, STEPS, dtype="float64", cache_policy=policy)
    assert_reproduces(llama_gen, gen)
    data = step_session(llama_gen, gen, 2, 1)
    assert data.config.heads == 4 and data.config.n_kv_heads == 2
    assert data.config.attention == "cross" and data.tokens == (gen.tokens[gen.steps[2].position],)
    if policy is not None:  # what the policy hides is a custom mask of exact zeros
        assert data.config.mask == "custom"
        hidden = ~np.array(data.config.custom_mask[0])
        assert hidden.any() and (gen.steps[2].attentions[1][:, hidden] == 0).all()


def test_sliding_window_model_reproduces(mistral_gen):
    gen = ae.generate(mistral_gen, PROMPT, 4, dtype="float64")
    assert_reproduces(mistral_gen, gen)


def test_k_and_v_are_the_caches_rows(llama_gen):
    gen = ae.generate(llama_gen, PROMPT, STEPS, dtype="float64")
    last = len(gen.steps) - 1  # its cache is every position fed: the generation's cache
    for layer, cache in enumerate(gen.cache):
        data = step_session(llama_gen, gen, last, layer)
        np.testing.assert_array_equal(data.inputs.K, cache.keys)
        np.testing.assert_array_equal(data.inputs.V, cache.values)
        assert data.kv_tokens == gen.tokens[: cache.keys.shape[1]]


def test_tiny_induction_step_zero_is_the_prompts_last_query():
    gen = ae.generate(TINY, tiny_prompt(), STEPS, dtype="float64")
    assert_reproduces(TINY, gen)
    data = step_session(TINY, gen, 0, 1)
    assert data.tokens == (gen.tokens[gen.prompt_length - 1],)
    assert len(data.kv_tokens) == gen.prompt_length


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_torch_generation_opens_its_steps(dtype):
    """The window generates on the session's backend; the replay runs on numpy and agrees to
    the dtype's precision, so a torch generation's step opens (it was refused as changed)."""
    pytest.importorskip("torch")
    gen = ae.generate(TINY, tiny_prompt(), 3, backend="torch", dtype=dtype)
    data = step_session(TINY, gen, 2, 1)
    weights = ae.compute(data, dtype="float64")["weights"][:, 0]
    np.testing.assert_allclose(weights, gen.steps[2].attentions[1], atol=1e-5)


def test_a_float32_generation_reproduces_to_its_precision():
    gen = ae.generate(TINY, tiny_prompt(), 3)
    data = step_session(TINY, gen, 2, 1)
    weights = ae.compute(data, dtype="float64")["weights"][:, 0]
    np.testing.assert_allclose(weights, gen.steps[2].attentions[1], atol=1e-5)


def test_an_edited_cached_key_reruns_and_changes_the_later_tokens():
    """tiny-induction copies the list: its induction head (layer 1) reads the key after the
    earlier copy of the query's word. Replacing the keys of layer 1 by the key of another
    position sends that head elsewhere, so the tokens after the step change; the steps before
    do not."""
    prompt = tiny_prompt()
    gen = ae.generate(TINY, prompt, STEPS, dtype="float64")
    step = 1
    data = step_session(TINY, gen, step, 1)
    keys = data.inputs.K.copy()  # [1, m, d]
    target = int(np.argmax(gen.steps[step].attentions[1, 0]))
    keys[0, target] = keys[0, 0]  # the position the head read now looks like position 0
    edited = data.with_changes(inputs=data.inputs.with_array("K", keys))
    edits = edits_between(data, edited, 1)
    assert [(e["layer"], e["head"], e["position"], "key" in e) for e in edits] == [
        (1, 0, target, True)
    ]
    policy = policy_with_edits(gen.policy, edits)
    again = ae.generate(TINY, prompt, STEPS, dtype="float64", cache_policy=policy)
    cut = gen.prompt_length + step
    assert again.ids[:cut] == gen.ids[:cut]
    assert again.ids[cut:] != gen.ids[cut:]
    # the edited cache is what the rerun's step reads: the session opens with the new key
    reopened = step_session(TINY, again, step, 1)
    np.testing.assert_array_equal(reopened.inputs.K[0, target], keys[0, 0])
    assert_reproduces(TINY, again)


def test_a_value_edit_and_merging_edits():
    gen = ae.generate(TINY, tiny_prompt(), 3, dtype="float64")
    data = step_session(TINY, gen, 1, 0)
    values = data.inputs.V.copy()
    values[0, 2, 5] += 1.0
    edited = data.with_changes(inputs=data.inputs.with_array("V", values))
    (edit,) = edits_between(data, edited, 0)
    assert edit["position"] == 2 and edit["value"] == values[0, 2].tolist()
    first = policy_with_edits({"window": 4}, [edit])
    second = policy_with_edits(first, [{**edit, "value": [0.0] * 64}])  # same vector: replaced
    assert second["window"] == 4 and second["edit"] == [{**edit, "value": [0.0] * 64}]
    assert describe(second) == "window 4; 1 cached vector edited"
    sizes = {"layers": 2, "kv_heads": 1, "positions": 10, "d_k": 64, "d_v": 64}
    assert policy_dict(parse_policy(second, sizes)) == second


def test_describe_and_policy_dict():
    assert describe(None) == "full cache" and policy_dict("full") == {}
    sizes = {"layers": 2, "kv_heads": 1, "positions": 10, "d_k": 4, "d_v": 4}
    parsed = parse_policy({"sinks": 2, "window": 3, "evict": [5, 1]}, sizes)
    assert policy_dict(parsed) == {"window": 3, "sinks": 2, "evict": [1, 5]}
    assert describe(parsed) == "sinks 2 + window 3; positions 1, 5 evicted"


def test_out_of_range_step_or_layer_is_one_line():
    gen = ae.generate(TINY, tiny_prompt(), 2, dtype="float64")
    with pytest.raises(GenerationError, match="step 2 is out of range: there are 0..1"):
        step_session(TINY, gen, 2, 0)
    with pytest.raises(GenerationError, match="layer 2 is out of range"):
        step_session(TINY, gen, 0, 2)


def test_the_description_names_rope_only_where_the_layer_has_it(llama_gen):
    tiny = ae.generate(TINY, tiny_prompt(), 2, dtype="float64")
    assert "RoPE" not in step_session(TINY, tiny, 1, 0).description  # learned positions
    llama = ae.generate(llama_gen, PROMPT, 2, dtype="float64")
    assert "keys after RoPE" in step_session(llama_gen, llama, 1, 0).description


def test_a_generation_the_model_no_longer_gives_is_refused():
    import dataclasses

    gen = ae.generate(TINY, tiny_prompt(), 2, dtype="float64")
    step = gen.steps[1]
    other = dataclasses.replace(step, attentions=step.attentions[::-1].copy())  # layers swapped
    changed = dataclasses.replace(gen, steps=(gen.steps[0], other))
    with pytest.raises(GenerationError, match="no longer gives this generation's step 1"):
        step_session(TINY, changed, 1, 0)
