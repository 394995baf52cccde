"""ae.generate against transformers (float64, its float32 steps patched) and the app's own
full model run: greedy ids, every step's attention rows, the KV cache; GPT-2, a Llama with
grouped-query attention, a Mistral with a sliding window, on numpy and torch."""

from __future__ import annotations

import numpy as np
import pytest

import attention_explorer as ae
from tests.generation.conftest import PROMPT, cache_arrays, hf_generate, run_over_ids

STEPS = 8


@pytest.fixture(scope="module", params=["gpt2", "llama", "mistral"])
def case(request, gpt2_folder, llama_gen, mistral_gen):  # noqa: F811
    """(folder, our float64 generation, transformers' ids and cache)."""
    folder = {"gpt2": gpt2_folder, "llama": llama_gen, "mistral": mistral_gen}[request.param]
    ours = ae.generate(folder, PROMPT, STEPS, dtype="float64")
    ids, cache = hf_generate(folder, ours.ids[: ours.prompt_length], STEPS)
    return folder, ours, ids, cache


def test_greedy_ids_are_transformers(case):
    _, ours, ids, _ = case
    assert list(ours.ids) == ids
    assert len(ours.generated) == STEPS and len(ours.steps) == STEPS
    assert ours.tokens[: ours.prompt_length] == tuple(
        ae.model_run(case[0], PROMPT, dtype="float64").tokens
    )


def test_every_step_is_the_last_row_of_a_full_run(case):
    folder, ours, _, _ = case
    for i, step in enumerate(ours.steps):
        n = ours.prompt_length + i
        assert step.position == n - 1
        full = run_over_ids(folder, ours.ids[:n])
        rows = np.asarray(full.attentions)[:, :, -1, :]  # [layers, heads, n]
        assert step.attentions.shape == rows.shape
        np.testing.assert_allclose(step.attentions, rows, atol=1e-6, rtol=0)
        logits = np.asarray(full.logits)[-1]
        np.testing.assert_allclose(step.logits, logits, atol=1e-6, rtol=0)
        assert step.token == int(np.argmax(logits)) and step.rank == 0


def test_the_cache_is_transformers_past_key_values(case):
    _, ours, _, cache = case
    fed = ours.prompt_length + STEPS - 1
    for layer, held in enumerate(ours.cache):
        keys, values = cache_arrays(cache, layer)  # [kv, m, d]
        # every position fed; a sliding layer (Mistral's window 3) keeps its last window - 1
        m = fed if case[0].name.startswith(("gpt2", "llama")) else 2
        assert held.keys.shape == keys.shape and keys.shape[1] == m
        np.testing.assert_allclose(held.keys, keys, atol=1e-6, rtol=0)
        np.testing.assert_allclose(held.values, values, atol=1e-6, rtol=0)
        assert list(held.positions) == list(range(fed - m, fed))
        assert held.nbytes == held.keys.nbytes + held.values.nbytes
        assert held.nbytes == m * held.bytes_per_position
    assert ours.cache_bytes == sum(c.nbytes for c in ours.cache)


def test_grouped_query_attention_shares_key_value_heads(llama_gen):
    ours = ae.generate(llama_gen, PROMPT, 2, dtype="float64")
    assert ours.cache[0].keys.shape[0] == 2 and ours.cache[0].kv_group == 2
    assert ours.steps[0].attentions.shape[1] == 4


def test_float32_and_torch_agree_with_float64(llama_gen):
    exact = ae.generate(llama_gen, PROMPT, 4, dtype="float64")
    single = ae.generate(llama_gen, PROMPT, 4, dtype="float32")
    assert single.ids == exact.ids
    for a, b in zip(single.steps, exact.steps):
        np.testing.assert_allclose(a.attentions, b.attentions, atol=1e-4)
    pytest.importorskip("torch")
    on_torch = ae.generate(llama_gen, PROMPT, 4, dtype="float64", backend="torch")
    assert on_torch.ids == exact.ids
    for a, b in zip(on_torch.steps, exact.steps):
        np.testing.assert_allclose(a.attentions, b.attentions, atol=1e-10)
    for a, b in zip(on_torch.cache, exact.cache):
        np.testing.assert_allclose(a.keys, b.keys, atol=1e-10)
