"""``ae.generate`` on a tiny gpt-oss against transformers' greedy ``generate`` (float64, its
float32 steps patched): the cached decode step puts each head's sink logit in its row's
softmax, so the ids, every step's rows (= the last row of a full ``model_run``) and the cache
(= ``past_key_values``; the sliding layer keeps its last window - 1 positions) agree; under a
cache policy evicted positions get exactly 0 and the sink's share follows the rule."""

from __future__ import annotations

import numpy as np
import pytest

import attention_explorer as ae
from tests.generation.conftest import PROMPT, cache_arrays, hf_generate, run_over_ids
from tests.models.test_gpt_oss import make_gpt_oss

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

STEPS = 6
WINDOW = 6  # layer 0's sliding window (tests.models.test_gpt_oss.SIZES)


@pytest.fixture(scope="module")
def oss_gen(tmp_path_factory):
    """A tiny gpt-oss checkpoint (layer 0 sliding, layer 1 full)."""
    return make_gpt_oss(tmp_path_factory.mktemp("gpt-oss-gen"))


@pytest.fixture(scope="module")
def generated(oss_gen):
    """(ours in float64, transformers' ids, transformers' cache)."""
    ours = ae.generate(oss_gen, PROMPT, STEPS, dtype="float64")
    ids, cache = hf_generate(oss_gen, ours.ids[: ours.prompt_length], STEPS)
    return ours, ids, cache


def test_greedy_ids_and_cache_are_transformers(generated):
    ours, ids, cache = generated
    assert list(ours.ids) == ids and len(ours.generated) == STEPS
    fed = ours.prompt_length + STEPS - 1
    for layer, held in enumerate(ours.cache):
        keys, values = cache_arrays(cache, layer)  # [kv, m, d]
        m = WINDOW - 1 if layer == 0 else fed
        assert held.keys.shape == keys.shape and keys.shape[1] == m
        np.testing.assert_allclose(held.keys, keys, atol=1e-6, rtol=0)
        np.testing.assert_allclose(held.values, values, atol=1e-6, rtol=0)
        assert list(held.positions) == list(range(fed - m, fed))


def test_every_step_is_the_last_row_of_a_full_run(oss_gen, generated):
    ours, _, _ = generated
    for i, step in enumerate(ours.steps):
        full = run_over_ids(oss_gen, ours.ids[: ours.prompt_length + i])
        rows = np.asarray(full.attentions)[:, :, -1, :]  # [layers, heads, n]
        np.testing.assert_allclose(step.attentions, rows, atol=1e-6, rtol=0)
        np.testing.assert_allclose(step.logits, np.asarray(full.logits)[-1], atol=1e-6, rtol=0)
        assert step.attentions.sum(axis=-1).max() < 1  # the sinks take their share


@pytest.mark.parametrize("backend", ["torch"])
def test_torch_decodes_the_same(oss_gen, generated, backend):
    ours, _, _ = generated
    other = ae.generate(oss_gen, PROMPT, STEPS, dtype="float64", backend=backend)
    assert other.ids == ours.ids
    for a, b in zip(other.steps, ours.steps):
        np.testing.assert_allclose(a.attentions, b.attentions, atol=1e-10, rtol=0)


def test_a_policy_zeroes_the_evicted_and_the_sink_takes_the_rest(oss_gen, generated):
    """Layer 0 reads the embeddings, so its first step's scores are the same with and without
    a policy: evicting keys leaves the kept weights in proportion, each scaled by Z/Z' (the
    full and the kept denominators, the sink's term in both), and the sink's share grows by
    the same factor: 1 - Σp' = (1 - Σp) · p'_j / p_j."""
    ours, _, _ = generated
    last = ours.prompt_length - 1
    evicted = [last - 2, last - 3]
    policed = ae.generate(oss_gen, PROMPT, 2, dtype="float64", cache_policy={"evict": evicted})
    full_row = ours.steps[0].attentions[0]  # [heads, n]: layer 0, the prompt's last query
    row = policed.steps[0].attentions[0]  # [heads, n]
    assert np.all(row[:, evicted] == 0.0)
    kept = [j for j in range(last - WINDOW + 1, last + 1) if j not in evicted]
    ratio = row[:, kept] / full_row[:, kept]  # [heads, kept]: Z / Z', one per head
    np.testing.assert_allclose(ratio, ratio[:, :1] * np.ones_like(ratio), rtol=1e-9)
    sink_full, sink_kept = 1 - full_row.sum(axis=-1), 1 - row.sum(axis=-1)  # [heads]
    np.testing.assert_allclose(sink_kept, sink_full * ratio[:, 0], rtol=1e-9, atol=1e-14)
    assert np.all(sink_kept > sink_full)
    streaming = ae.generate(
        oss_gen, PROMPT, 3, dtype="float64", cache_policy={"sinks": 1, "window": 3}
    )
    for step in streaming.steps:
        position = step.position
        hidden = [j for j in range(1, position + 1) if j < position - 2]
        assert np.all(step.attentions[:, :, hidden] == 0.0)
        assert np.all(step.attentions.sum(axis=-1) < 1)
