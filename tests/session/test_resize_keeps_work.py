"""Size changes keep what the learner built: regrouped heads, kept biases, scaled growth,
unique token names. All through ``resize`` (the public ``ae.resize``)."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from attention_explorer.engine import AttentionInputError, compute
from attention_explorer.engine.inputs import validate_inputs
from attention_explorer.session import starter_session
from attention_explorer.session.examples import load_example
from attention_explorer.session.resize import (
    resize,
    set_key_token_count,
    set_mode,
    set_token_count,
    spread,
)


def trace_of(data):
    return compute(data.inputs, data.config, tokens=data.tokens, kv_tokens=data.kv_tokens or None)


def test_fewer_heads_with_d_model_fixed_regroups_the_same_weights():
    data = load_example("checkpoint-heads-not-dividing")  # 4 heads of 4, d_model 16
    two = resize(data, heads=2)
    assert two.config.heads == 2 and two.config.head_dim == 8
    for name in ("W_Q", "W_K", "W_V", "W_O"):
        np.testing.assert_array_equal(getattr(two.inputs, name), getattr(data.inputs, name))
    before, after = trace_of(data), trace_of(two)
    # the repro of the issue: no score jumps to ~113 because weights became random
    assert np.abs(after["scores"]).max() < 3 * np.abs(before["scores"]).max()
    # regrouping the same columns: Q of new head 0 is Q of old heads 0 and 1 side by side
    np.testing.assert_allclose(
        after["Q"][0], np.concatenate([before["Q"][0], before["Q"][1]], axis=1), atol=1e-5
    )
    # the output only changes through the regrouping, not through new numbers
    assert after["output"].shape == before["output"].shape


def test_heads_change_keeps_the_biases():
    data = starter_session()
    dm = data.config.d_model
    biased = data.with_changes(
        inputs=data.inputs.with_changes(
            b_Q=np.linspace(-1, 1, dm),
            b_K=np.linspace(1, -1, dm),
            b_V=np.full(dm, 0.5),
            b_O=np.arange(dm, dtype=float),
        )
    )
    four = resize(biased, heads=4)
    for name in ("b_Q", "b_K", "b_V", "b_O"):
        np.testing.assert_array_equal(getattr(four.inputs, name), getattr(biased.inputs, name))
    trace_of(four)  # and it computes


def test_growing_d_model_adds_weights_at_the_spread_of_the_old_ones():
    data = load_example("checkpoint-heads-not-dividing")
    old_wq = data.inputs.W_Q  # [16, 16], spread ~0.14
    grown = resize(data, d_model=32)
    new_rows = grown.inputs.W_Q[16:]
    assert grown.inputs.W_Q.shape == (32, 32)
    ratio = new_rows.std() / old_wq.std()
    assert 0.5 < ratio < 2, ratio  # N(0, 1) would be ~7x
    # the old rows of each head keep their numbers
    np.testing.assert_array_equal(grown.inputs.W_Q[:16, :4], old_wq[:, :4])
    np.testing.assert_array_equal(grown.inputs.X[:, :16], data.inputs.X)


def test_growth_is_seeded():
    data = load_example("checkpoint-heads-not-dividing")
    a, b = resize(data, d_model=20, heads=5), resize(data, d_model=20, heads=5)
    np.testing.assert_array_equal(a.inputs.W_Q, b.inputs.W_Q)


def test_empty_spread_falls_back_to_xavier():
    data = starter_session()
    zero = data.with_changes(inputs=data.inputs.with_changes(W_Q=np.zeros_like(data.inputs.W_Q)))
    assert spread(zero.inputs.W_Q) is None
    grown = resize(zero, d_model=64)
    new_rows = grown.inputs.W_Q[8:]
    assert abs(new_rows.std() - 1 / np.sqrt(64)) < 0.05


def test_new_heads_in_direct_mode_keep_old_heads_and_match_their_spread():
    data = load_example("three-tokens")
    assert data.config.mode == "direct"
    grown = resize(data, heads=3)
    np.testing.assert_array_equal(grown.inputs.Q[: data.config.heads], data.inputs.Q)
    trace_of(grown)


def test_new_tokens_get_names_no_other_token_has():
    data = starter_session().with_changes(tokens=("t1", "t2", "t3", "t4"))
    grown = set_token_count(data, 6)
    assert len(set(grown.tokens)) == 6
    assert grown.tokens[:4] == ("t1", "t2", "t3", "t4")
    three = load_example("three-tokens")  # t1, t2, t3: "+" must not add a second t3
    assert set_token_count(three, 4).tokens == ("t1", "t2", "t3", "t4")


def test_many_tokens_have_unique_names():
    data = starter_session().with_changes(tokens=("t1", "t2", "t3", "t3x"))
    big = set_token_count(data, 4096)
    assert len(set(big.tokens)) == 4096


def test_new_key_tokens_are_unique_too():
    doc = load_example("three-tokens")
    data = doc.with_changes(
        kv_tokens=("k1", "k2", "k0"),
        config=doc.config.with_changes(attention="cross"),
    )
    grown = set_key_token_count(data, 5)
    assert len(set(grown.kv_tokens)) == 5


def test_resize_refuses_with_a_named_size():
    with pytest.raises(AttentionInputError) as info:
        resize(starter_session(), heads=3)
    assert info.value.field == "heads"
    both = resize(starter_session(), d_model=9, heads=3)
    assert (both.config.d_model, both.config.heads) == (9, 3)
    trace_of(both)


def test_kv_heads_and_d_k_through_resize():
    data = resize(starter_session(), heads=4, kv_heads=2)
    assert data.config.n_kv_heads == 2
    assert trace_of(data)["weights"].shape == (4, 4, 4)
    direct = resize(load_example("three-tokens"), d_k=3)
    assert trace_of(direct)["Q"].shape[-1] == 3


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["tokens", "heads", "d_model", "d_k", "kv_heads", "mode"]),
            st.integers(1, 9),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_any_sequence_of_size_changes_stays_computable(changes):
    data = starter_session()
    for what, value in changes:
        try:
            if what == "mode":
                data = set_mode(data, "direct" if value % 2 else "projection")
            else:
                data = resize(data, **{what: value})
        except AttentionInputError:
            continue  # a refused size leaves the session as it was
        n, m = validate_inputs(data.config, data.inputs)
        assert (n, m) == (len(data.tokens), len(data.key_tokens))
        assert len(set(data.tokens)) == len(data.tokens)
        assert np.isfinite(
            trace_of(data)["output" if data.config.mode == "projection" else "weights"]
        ).all()
