"""ae.generate's behaviour: tiny-induction copies a repeated list, sampling is reproducible and
follows temperature, top-k and top-p as defined, QK-norm and soft-capped sliding layers
(Qwen3, Gemma 2) equal the full model run step by step, and what cannot be generated exactly
is refused in one line naming why."""

from __future__ import annotations

import numpy as np
import pytest

import attention_explorer as ae
from attention_explorer.generation import GenerationError
from attention_explorer.generation.sampling import distribution
from tests.generation.conftest import PROMPT, TINY, run_over_ids, tiny_words
from tests.models.conftest import bert_folder  # noqa: F401  (a fixture)


def test_tiny_induction_continues_a_repeated_list_by_copying_it():
    words = tiny_words()
    run = words[3:10]  # 7 distinct words
    out = ae.generate(TINY, " ".join(["cat", "dog", *run, *run[:2]]), 5)
    assert out.tokens[out.prompt_length :] == tuple(run[2:7])
    assert all(step.rank == 0 for step in out.steps)
    # the induction head (layer 1, head 0) of the query run[1] (position 10) reads the key
    # after run[1]'s earlier occurrence (position 3): run[2], the word it writes
    first = out.steps[0]
    assert first.position == 10 and int(np.argmax(first.attentions[1, 0])) == 4
    assert out.tokens[4] == run[2] == out.tokens[out.prompt_length]


def test_tiny_induction_refuses_more_positions_than_it_has():
    with pytest.raises(GenerationError, match="24 learned positions"):
        ae.generate(TINY, "cat dog fox", 30)


def test_sampling_with_a_seed_is_reproducible():
    words = " ".join(tiny_words()[:6])
    a = ae.generate(TINY, words, 10, temperature=3.0, seed=7)
    b = ae.generate(TINY, words, 10, temperature=3.0, seed=7)
    assert a.ids == b.ids
    others = {ae.generate(TINY, words, 10, temperature=3.0, seed=s).ids for s in range(1, 6)}
    assert len(others | {a.ids}) > 1  # the seed matters


def test_temperature_is_the_softmax_of_scaled_logits(llama_gen):
    out = ae.generate(llama_gen, PROMPT, 4, temperature=0.7, seed=3)
    for step in out.steps:
        z = step.logits / 0.7
        expected = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
        np.testing.assert_allclose(step.probs, expected, rtol=1e-12)
        assert step.probs[step.token] > 0
        assert step.rank == int(np.sum(step.logits > step.logits[step.token]))
    greedy = ae.generate(llama_gen, PROMPT, 4)
    z = greedy.steps[0].logits
    np.testing.assert_allclose(
        greedy.steps[0].probs, np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    )


def test_top_k_keeps_the_k_highest_logits(llama_gen):
    out = ae.generate(llama_gen, PROMPT, 5, temperature=1.5, top_k=3, seed=1)
    for step in out.steps:
        kept = np.flatnonzero(step.probs)
        assert set(kept) == set(np.argsort(-step.logits)[:3].tolist())
        assert step.rank < 3 and step.probs.sum() == pytest.approx(1.0)
    assert ae.generate(llama_gen, PROMPT, 5, temperature=1.5, top_k=1).ids == (
        ae.generate(llama_gen, PROMPT, 5).ids
    )


def test_top_p_keeps_the_smallest_set_reaching_p():
    logits = np.log(np.array([0.1, 0.4, 0.2, 0.3]))
    assert np.flatnonzero(distribution(logits, 1.0, None, 0.5)).tolist() == [1, 3]
    assert np.flatnonzero(distribution(logits, 1.0, None, 0.7)).tolist() == [1, 3]
    assert np.flatnonzero(distribution(logits, 1.0, None, 0.71)).tolist() == [1, 2, 3]
    np.testing.assert_allclose(distribution(logits, 1.0, None, 0.5)[[1, 3]], [4 / 7, 3 / 7])
    assert np.flatnonzero(distribution(logits, 1.0, None, 0.05)).tolist() == [1]


def test_top_p_in_generation(llama_gen):
    out = ae.generate(llama_gen, PROMPT, 5, temperature=1.0, top_p=0.6, seed=2)
    for step in out.steps:
        model = np.exp(step.logits - step.logits.max())
        model /= model.sum()  # [vocab]
        kept = np.flatnonzero(step.probs)
        order = np.argsort(-model, kind="stable")
        assert sorted(kept) == sorted(order[: kept.size])  # the most probable
        assert model[kept].sum() >= 0.6 - 1e-12  # they reach p
        assert model[kept].sum() - model[kept].min() < 0.6  # one fewer would not
        assert step.token in kept


@pytest.fixture(scope="module")
def qwen3_gen(tmp_path_factory):
    pytest.importorskip("transformers")
    from tests.models.test_qwen3_family import make_qwen3

    folder = tmp_path_factory.mktemp("qwen3-gen")
    make_qwen3(folder)
    return folder


@pytest.fixture(scope="module")
def gemma2_gen(tmp_path_factory):
    pytest.importorskip("transformers")
    from tests.models.test_gemma2_family import GEMMA2
    from tests.models.test_gemma_common import write_model

    folder = tmp_path_factory.mktemp("gemma2-gen")
    return write_model(folder, "Gemma2Config", "Gemma2ForCausalLM", **GEMMA2)


@pytest.fixture(scope="module")
def gemma3_gen(tmp_path_factory):
    pytest.importorskip("transformers")
    from tests.models.test_gemma3_family import GEMMA3
    from tests.models.test_gemma_common import write_model

    folder = tmp_path_factory.mktemp("gemma3-gen")
    return write_model(folder, "Gemma3TextConfig", "Gemma3ForCausalLM", **GEMMA3)


@pytest.fixture(scope="module")
def neox_gen(tmp_path_factory):
    pytest.importorskip("transformers")
    from tests.models.test_gpt_neox import _neox

    return _neox(tmp_path_factory.mktemp("neox-gen"))


@pytest.mark.parametrize("which", ["qwen3", "gemma2", "gemma3", "neox"])
def test_qk_norm_windows_caps_and_partial_rotary_equal_the_full_run(which, request):
    """Qwen3's QK-norm, Gemma 2's caps and window, Gemma 3's local and global RoPE (linear
    scaling) with QK-norm, GPT-NeoX's partial rotary and parallel residual."""
    folder = request.getfixturevalue(f"{which}_gen")
    out = ae.generate(folder, PROMPT, 6, dtype="float64")
    for i, step in enumerate(out.steps):
        full = run_over_ids(folder, out.ids[: out.prompt_length + i])
        rows = np.asarray(full.attentions)[:, :, -1, :]  # [layers, heads, n]
        np.testing.assert_allclose(step.attentions, rows, atol=1e-6, rtol=0)
        np.testing.assert_allclose(step.logits, np.asarray(full.logits)[-1], atol=1e-6, rtol=0)
        assert step.token == int(np.argmax(step.logits))


def test_an_encoder_is_refused_by_name(bert_folder):  # noqa: F811
    with pytest.raises(GenerationError, match="encoder") as info:
        ae.generate(bert_folder, "the cat sat", 2)
    assert info.value.what == "model"


def test_length_dependent_rope_is_refused_by_name(tmp_path):
    pytest.importorskip("transformers")
    from tests.models.test_llama_family import make_checkpoint

    make_checkpoint(tmp_path, "llama", rope_scaling={"rope_type": "dynamic", "factor": 2.0})
    with pytest.raises(GenerationError, match="dynamic rope scaling"):
        ae.generate(tmp_path, PROMPT, 2)


def test_bad_arguments_are_refused_in_one_line():
    for kwargs, what in (
        ({"steps": 0}, "steps"),
        ({"steps": 2.5}, "steps"),
        ({"steps": 2, "temperature": -1}, "temperature"),
        ({"steps": 2, "top_k": 0}, "top_k"),
        ({"steps": 2, "top_p": 1.5}, "top_p"),
        ({"steps": 2, "seed": -1}, "seed"),
        ({"steps": 2, "dtype": "float16"}, "dtype"),
    ):
        with pytest.raises(GenerationError) as info:
            ae.generate(TINY, "cat dog", **kwargs)
        assert info.value.what == what and "\n" not in str(info.value)


def test_a_block_the_step_does_not_follow_is_refused(monkeypatch):
    from attention_explorer.generation import step

    real = step.attend

    def other(w, layer, x):  # a family whose attention block does more than the step
        p, a = real(w, layer, x)
        return p, a * 1.5

    monkeypatch.setattr(step, "attend", other)
    with pytest.raises(GenerationError, match="does not follow"):
        ae.generate(TINY, "cat dog fox", 2)


def test_a_model_whose_held_layers_would_not_fit_is_refused(tmp_path, monkeypatch):
    import shutil

    from attention_explorer.engine import budget

    folder = tmp_path / "tiny"
    shutil.copytree(TINY, folder)
    monkeypatch.setattr(budget, "available_memory", lambda: 1000)
    with pytest.raises(GenerationError, match="GiB is available") as info:
        ae.generate(folder, "cat dog fox", 2)
    assert info.value.what == "memory"


def test_held_weights_stay_only_when_small(tmp_path, monkeypatch):
    import shutil

    from attention_explorer.generation import loop as module
    from attention_explorer.pretrained.open_model import load_model

    folder = tmp_path / "tiny"
    shutil.copytree(TINY, folder)

    def held_keys():
        cast = load_model(folder).cast
        return [k for k in cast if isinstance(k, tuple) and k[:1] == ("generation",)]

    first = ae.generate(folder, "cat dog fox", 3)
    assert len(held_keys()) == 1  # a few kB: kept for the next generation
    load_model(folder).cast.pop(held_keys()[0])
    monkeypatch.setattr(module, "KEEP_CONVERTED_BYTES", 0)
    assert ae.generate(folder, "cat dog fox", 3).ids == first.ids
    assert held_keys() == []  # too large to keep: dropped when the generation ended
