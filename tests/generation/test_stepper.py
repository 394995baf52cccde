"""The Stepper (the window's Step): N steps are ``ae.generate(steps=N)`` to the bit, tokens,
rows, probabilities and cache, greedy and sampled, with a policy and on a cache that grows
while stepping; a result taken midway is not changed by later steps."""

from __future__ import annotations

import numpy as np
import pytest

import attention_explorer as ae
from attention_explorer.generation import GenerationError
from attention_explorer.generation.stepper import FIRST_ROOM, Stepper
from tests.generation.conftest import PROMPT, TINY, tiny_words


def same_generation(a, b) -> None:
    """``a`` and ``b`` hold the same ids, tokens, steps and cache, bit for bit."""
    assert (a.ids, a.tokens, a.prompt_length, a.dtype) == (
        b.ids,
        b.tokens,
        b.prompt_length,
        b.dtype,
    )
    assert a.policy == b.policy
    assert len(a.steps) == len(b.steps)
    for x, y in zip(a.steps, b.steps):
        assert (x.position, x.token, x.text, x.rank) == (y.position, y.token, y.text, y.rank)
        for name in ("attentions", "probs", "logits"):
            assert np.array_equal(getattr(x, name), getattr(y, name)), name
    assert len(a.cache) == len(b.cache)
    for x, y in zip(a.cache, b.cache):
        assert np.array_equal(x.positions, y.positions)
        assert np.array_equal(x.keys, y.keys) and np.array_equal(x.values, y.values)
        assert x.kv_group == y.kv_group


def stepped(model, prompt, n, **settings):
    """The result of ``n`` calls of Stepper.step (no steps hint: the cache grows)."""
    stepper = Stepper(model, prompt, **settings)
    for _ in range(n):
        stepper.step()
    return stepper.result()


def repeated_list() -> str:
    run = tiny_words()[3:10]
    return " ".join(["cat", "dog", *run, *run[:2]])


@pytest.mark.parametrize(
    "settings",
    [
        {},
        {"temperature": 2.5, "seed": 11},
        {"temperature": 1.3, "top_k": 5, "top_p": 0.8, "seed": 4},
        {"cache_policy": {"sinks": 1, "window": 3}},
    ],
    ids=["greedy", "sampled", "top-k-top-p", "sinks-window"],
)
def test_n_steps_are_generate_with_n_steps(settings):
    expected = ae.generate(TINY, repeated_list(), 8, **settings)
    same_generation(stepped(TINY, repeated_list(), 8, **settings), expected)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_steps_past_the_first_room_grow_the_cache(llama_gen, backend):
    if backend == "torch":
        pytest.importorskip("torch")
    steps = FIRST_ROOM + 6  # the Llama has no learned positions: the cache doubles midway
    settings = {"temperature": 1.0, "seed": 5, "backend": backend}
    stepper = Stepper(llama_gen, PROMPT, **settings)
    for _ in range(steps):
        stepper.step()
    assert stepper.room > len(stepper.toks.ids) + FIRST_ROOM - 1
    same_generation(stepper.result(), ae.generate(llama_gen, PROMPT, steps, **settings))


def test_a_result_is_not_changed_by_later_steps():
    stepper = Stepper(TINY, repeated_list())
    for _ in range(3):
        stepper.step()
    early = stepper.result()
    keys = early.cache[0].keys.copy()
    for _ in range(3):
        stepper.step()
    assert len(early.steps) == 3 and len(stepper.result().steps) == 6
    assert np.array_equal(early.cache[0].keys, keys)
    same_generation(early, ae.generate(TINY, repeated_list(), 3))


def test_one_step_returns_the_step_it_added():
    stepper = Stepper(TINY, repeated_list())
    first = stepper.step()
    assert first is stepper.result().steps[0]
    assert first.position == stepper.prompt_length - 1


def test_stepping_past_the_learned_positions_is_refused_in_one_line():
    stepper = Stepper(TINY, " ".join(tiny_words()[:20]))  # 20 of tiny-induction's 24 positions
    for _ in range(5):
        stepper.step()
    with pytest.raises(GenerationError, match="24 learned positions") as info:
        stepper.step()
    assert info.value.what == "steps" and "\n" not in str(info.value)
    assert len(stepper.result().steps) == 5  # what was made stays


def test_no_result_before_the_first_step_and_no_empty_prompt():
    with pytest.raises(GenerationError, match="take a step first"):
        Stepper(TINY, "cat dog").result()
    from attention_explorer.pretrained import ModelError

    with pytest.raises(ModelError, match="empty") as info:
        Stepper(TINY, "  ")
    assert "\n" not in str(info.value)


@pytest.fixture(scope="module")
def deepseek_gen(tmp_path_factory):
    """A tiny DeepSeek-V3 (latent attention: its cache holds c_kv and a rotary key)."""
    pytest.importorskip("transformers")
    from tests.models.test_deepseek_v3 import make_deepseek

    return make_deepseek(tmp_path_factory.mktemp("deepseek-stepper"), first_k_dense_replace=1)


def test_a_latent_cache_grows_with_its_latent_and_rotary_key(deepseek_gen):
    steps = FIRST_ROOM + 3  # past the first room: every per-position buffer is copied over
    stepper = Stepper(deepseek_gen, PROMPT)
    for _ in range(steps):
        stepper.step()
    expected = ae.generate(deepseek_gen, PROMPT, steps)
    same_generation(stepper.result(), expected)
    for mine, theirs in zip(stepper.result().cache, expected.cache):
        assert mine.latent is not None and np.array_equal(mine.latent, theirs.latent)
        assert np.array_equal(mine.rope_key, theirs.rope_key)


@pytest.mark.parametrize("failing_step", [0, 2])
def test_a_step_that_fails_part_way_leaves_the_next_step_exact(monkeypatch, failing_step):
    """A step that fails after layer 0 wrote its cache (here a MemoryError in layer 1) puts
    every layer's cache back: the next Step gives exactly what an unbroken run gives (before,
    layer 0 stayed a position ahead and every later step failed or went wrong)."""
    from attention_explorer.generation import decode

    steps = 4
    reference = ae.generate(TINY, PROMPT, steps, dtype="float64")
    stepper = Stepper(TINY, PROMPT, dtype="float64")
    real = decode.rest_of_layer
    for i in range(steps):
        if i == failing_step:

            def broken(w, layer, h, a):
                if layer == 1:
                    raise MemoryError("simulated: no room for layer 1")
                return real(w, layer, h, a)

            monkeypatch.setattr(decode, "rest_of_layer", broken)
            with pytest.raises(MemoryError):
                stepper.step()
            monkeypatch.setattr(decode, "rest_of_layer", real)
        stepper.step()
    same_generation(stepper.result(), reference)
