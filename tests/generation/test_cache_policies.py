"""Cache policies: a window, sinks and a window, evicted positions, edited cached vectors.
With a policy the weights on positions a query does not read are exactly 0 and every row
sums to 1; positions keep the numbers they were fed at."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

import attention_explorer as ae
from attention_explorer.generation import GenerationError
from tests.generation.conftest import PROMPT

STEPS = 8


def rows_of(out):
    """Every step's rows ``[(position, [layers, heads, keys])]``."""
    return [(s.position, s.attentions) for s in out.steps]


def assert_reads_only(out, readable) -> None:
    """Every row is exactly 0 where ``readable(i, j)`` is False and sums to 1."""
    for i, rows in rows_of(out):
        j = np.arange(rows.shape[-1])
        hidden = ~readable(i, j)  # [keys]
        assert (rows[..., hidden] == 0.0).all()
        assert (rows[..., ~hidden] > 0).all()
        np.testing.assert_allclose(rows.sum(-1), 1.0, atol=1e-12)


def layer0_keys(folder, ids):
    """Layer 0's keys ``[kv, n, d_k]`` of ``ids`` as the full model run makes them (RoPE at
    positions 0..n-1): layer 0 reads only the tokens' embeddings."""
    from attention_explorer.kernels import numpy_ops
    from attention_explorer.pretrained.forward import attention_input, embed
    from attention_explorer.pretrained.kernel import query_key_value
    from attention_explorer.pretrained.open_model import load_model

    w = load_model(folder).weights  # float64
    x = attention_input(w, 0, embed(w, list(ids), [0] * len(ids)))  # [n, d]
    return query_key_value(numpy_ops, w, 0, x)[1]


@pytest.fixture(scope="module")
def full(llama_gen):
    return ae.generate(llama_gen, PROMPT, STEPS, dtype="float64")


def test_a_window_reads_the_last_w_positions(llama_gen, full):
    out = ae.generate(llama_gen, PROMPT, STEPS, dtype="float64", cache_policy={"window": 3})
    assert_reads_only(out, lambda i, j: i - j < 3)
    fed = out.prompt_length + STEPS - 1
    for layer in out.cache:  # the next query reads its own key and the 2 before it
        assert layer.positions.tolist() == [fed - 2, fed - 1]
        assert layer.nbytes == 2 * layer.bytes_per_position < full.cache[0].nbytes
    assert out.steps[0].attentions.shape == full.steps[0].attentions.shape


def test_a_policy_window_equal_to_the_models_changes_nothing(mistral_gen, tmp_path):
    """Mistral's own sliding window 3 and the same weights without a window under the
    policy {"window": 3} are one computation."""
    folder = tmp_path / "no-window"
    shutil.copytree(mistral_gen, folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "sliding_window": None}))
    own = ae.generate(mistral_gen, PROMPT, STEPS, dtype="float64")
    policy = ae.generate(folder, PROMPT, STEPS, dtype="float64", cache_policy={"window": 3})
    plain = ae.generate(folder, PROMPT, STEPS, dtype="float64")
    assert own.ids == policy.ids
    for a, b in zip(own.steps, policy.steps):
        np.testing.assert_allclose(a.attentions, b.attentions, atol=1e-12)
    assert any(
        a.attentions.shape == b.attentions.shape and not np.allclose(a.attentions, b.attentions)
        for a, b in zip(own.steps, plain.steps)
    )


def test_sinks_and_a_window_keep_the_first_and_the_last(llama_gen, full):
    policy = {"sinks": 2, "window": 3}
    out = ae.generate(llama_gen, PROMPT, STEPS, dtype="float64", cache_policy=policy)
    assert_reads_only(out, lambda i, j: (i - j < 3) | (j < 2))
    fed = out.prompt_length + STEPS - 1
    layer0 = out.cache[0]
    assert layer0.positions.tolist() == [0, 1, fed - 2, fed - 1]
    # positions keep their numbers: layer 0's held keys are the model run's keys of the same
    # tokens (RoPE at their true positions 0..fed-1), only which are held changes
    keys = layer0_keys(llama_gen, out.ids[:fed])  # [kv, fed, d_k]
    np.testing.assert_allclose(layer0.keys, keys[:, layer0.positions], atol=1e-12)
    assert out.ids[: out.prompt_length] == full.ids[: full.prompt_length]


def test_evicted_positions_are_never_read_again(llama_gen, full):
    out = ae.generate(llama_gen, PROMPT, STEPS, dtype="float64", cache_policy={"evict": [0, 2]})
    assert_reads_only(out, lambda i, j: ~np.isin(j, [0, 2]) | (j == i))
    assert 0 not in out.cache[1].positions and 2 not in out.cache[1].positions
    assert len(out.cache[1].positions) == len(full.cache[1].positions) - 2
    assert not np.allclose(out.steps[0].attentions[:, :, 1], full.steps[0].attentions[:, :, 1])


def test_an_edited_cached_key_is_read_by_every_later_query(llama_gen, full):
    position = 2
    original = full.cache[0].keys[1, position]  # [d_k]
    same = {"edit": [{"layer": 0, "head": 1, "position": position, "key": original.tolist()}]}
    unchanged = ae.generate(llama_gen, PROMPT, STEPS, dtype="float64", cache_policy=same)
    assert unchanged.ids == full.ids
    for a, b in zip(unchanged.steps, full.steps):
        np.testing.assert_allclose(a.attentions, b.attentions, atol=1e-12)
    vector = original + 5.0
    edit = {"edit": [{"layer": 0, "head": 1, "position": position, "key": vector.tolist()}]}
    out = ae.generate(llama_gen, PROMPT, STEPS, dtype="float64", cache_policy=edit)
    np.testing.assert_array_equal(out.cache[0].keys[1, position], vector)
    n = out.prompt_length  # the prompt's keys of kv head 0 are unchanged (later tokens differ)
    np.testing.assert_allclose(out.cache[0].keys[0, :n], full.cache[0].keys[0, :n], atol=1e-12)
    # query heads 2 and 3 share key/value head 1: their rows change, heads 0 and 1's do not
    first, base = out.steps[0].attentions, full.steps[0].attentions
    np.testing.assert_allclose(first[0, :2], base[0, :2], atol=1e-12)
    assert not np.allclose(first[0, 2:], base[0, 2:])
    assert_reads_only(out, lambda i, j: j <= i)


def test_an_edited_cached_value_changes_what_follows(llama_gen, full):
    value = full.cache[1].values[0, 1] * 0 + 3.0
    edit = {"edit": {"layer": 1, "head": 0, "position": 1, "value": value.tolist()}}
    out = ae.generate(llama_gen, PROMPT, STEPS, dtype="float64", cache_policy=edit)
    np.testing.assert_array_equal(out.cache[1].values[0, 1], value)
    # layer 1's values do not change its own weights, only its output and so the logits
    np.testing.assert_allclose(out.steps[0].attentions, full.steps[0].attentions, atol=1e-12)
    assert not np.allclose(out.steps[0].logits, full.steps[0].logits)


@pytest.mark.parametrize(
    "policy, words",
    [
        ({"sinks": 2}, "needs a window"),
        ({"window": 0}, "window must be"),
        ({"windw": 3}, "unknown cache policy key windw"),
        ({"evict": 3}, "evict must be a list"),
        ("half", "cache_policy must be"),
        ({"edit": [{"layer": 5, "head": 0, "position": 0, "key": [0] * 8}]}, "beyond the 2"),
        ({"edit": [{"layer": 0, "head": 0, "position": 0, "key": [0] * 3}]}, "8 finite"),
        ({"edit": [{"layer": 0, "head": 0, "position": 99, "value": [0] * 8}]}, "positions fed"),
        ({"edit": [{"layer": 0, "head": 0, "position": 0}]}, "one of key or value"),
    ],
)
def test_bad_policies_are_refused_in_one_line(llama_gen, policy, words):
    with pytest.raises(GenerationError, match=words) as info:
        ae.generate(llama_gen, PROMPT, 2, cache_policy=policy)
    assert info.value.what == "policy" and "\n" not in str(info.value)
