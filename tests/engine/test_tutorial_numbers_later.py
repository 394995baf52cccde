"""Every worked number in the curriculum's tutorials that the engine can reproduce: seeds
001 to 004 (the first tutorial is in test_tutorial_numbers.py).

Seeds live in /work/shared/seeds (000 ... 004). Where a tutorial prints a rounded number the
test checks it to that precision; where the tutorial is wrong, the exact value is pinned and a
comment says how the tutorial differs.
"""

import math

import numpy as np
import pytest
from tutorial_checks import attend, printed, weights_of

from attention_explorer.engine import AttentionConfig, AttentionInputs, compute

# -- seed 001 -------------------------------------------------------------------------------
Q3 = [[1, 0], [1, 1], [0, 1]]
V3 = [[1, 2], [0, 3], [4, 1]]


def test_seed001_4_three_tokens():
    # Seed 001 §4: Q = K, d_k = 2.
    t = attend(Q3, Q3, V3)
    np.testing.assert_array_equal(t.stage("scores", 0), [[1, 1, 0], [1, 2, 1], [0, 1, 1]])
    assert t.scale == pytest.approx(1 / math.sqrt(2))
    assert printed(t.stage("scaled", 0)[1], [0.707, 1.414, 0.707], 3)
    w = t.stage("weights", 0)[1]
    assert printed(w, [0.25, 0.5, 0.25], 2)  # "approximately [0.25, 0.5, 0.25]"
    np.testing.assert_allclose(w, [0.248255, 0.503490, 0.248255], atol=1e-6)
    # The tutorial prints [1.25, 2.25], the output of its rounded weights; the exact output
    # is [1.2413, 2.2552] (1.24 at two decimals, not 1.25).
    out = t.stage("head_outputs", 0)[1]
    np.testing.assert_allclose(out, [1.241275, 2.255235], atol=1e-6)
    assert not printed(out[0], 1.25, 2)
    assert printed(
        weights_of(np.log([0.25, 0.5, 0.25]), V3).stage("head_outputs", 0)[0], [1.25, 2.25], 12
    )


def test_seed001_6_causal_mask():
    # Seed 001 §6: positions above the diagonal become -inf, their weights exactly 0.
    t = attend(Q3, Q3, V3, mask="causal")
    masked, w = t.stage("masked", 0), t.stage("weights", 0)
    assert np.all(np.isneginf(masked[np.triu_indices(3, 1)]))
    assert np.all(w[np.triu_indices(3, 1)] == 0)
    np.testing.assert_allclose(w.sum(axis=1), 1.0)
    assert w[0, 0] == 1.0


def test_seed001_6_padding_mask():
    # Seed 001 §6: padded keys get weight 0; real tokens are as if the pad were not there.
    t = attend(Q3 + [[0, 0]], Q3 + [[0, 0]], V3 + [[0, 0]], mask="padding", padded_keys=(3,))
    w = t.stage("weights", 0)
    assert np.all(w[:, 3] == 0)
    np.testing.assert_allclose(w[:3, :3], attend(Q3, Q3, V3).stage("weights", 0), atol=1e-12)


def test_seed001_7_original_transformer_sizes():
    # Seed 001 §7 (and seed 003): H = 8 heads with d_model 512 give d_k = d_v = 64.
    cfg = AttentionConfig(mode="projection", d_model=512, heads=8)
    assert cfg.head_dim == 64 and cfg.value_dim == 64


def test_seed001_10_numpy_from_scratch_matches_its_formula():
    # Seed 001 §10: np.random.seed(7), x [4, 6], w_q, w_k, w_v [6, 4]; same result as the
    # tutorial's own softmax(q k^T / sqrt(d_k)) v.
    rs = np.random.RandomState(7)  # the tutorial's legacy stream
    x = rs.randn(4, 6)
    w_q, w_k, w_v = (rs.randn(6, 4) for _ in range(3))
    t = compute(
        AttentionInputs(X=x, W_Q=w_q, W_K=w_k, W_V=w_v),
        AttentionConfig(mode="projection", d_model=6, heads=1, d_k=4, d_v=4),
        dtype="float64",
    )
    s = (x @ w_q) @ (x @ w_k).T / 2.0  # [4, 4]
    e = np.exp(s - s.max(axis=1, keepdims=True))
    w = e / e.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(t.stage("weights", 0), w, atol=1e-12)
    np.testing.assert_allclose(t.stage("head_outputs", 0), w @ (x @ w_v), atol=1e-12)


# -- seed 002 -------------------------------------------------------------------------------
def test_seed002_shape_table():
    # Seed 002's table: X [10, 512], 8 heads of 64: per head Q/K/V [10, 64], scores [10, 10],
    # head output [10, 64], concat [10, 512], output [10, 512].
    rng = np.random.default_rng(2)
    inputs = AttentionInputs(
        X=rng.normal(size=(10, 512)),
        **{w: rng.normal(size=(512, 512)) * 0.05 for w in ("W_Q", "W_K", "W_V", "W_O")},
    )
    t = compute(inputs, AttentionConfig(mode="projection", d_model=512, heads=8))
    assert t.stage("Q", 3).shape == (10, 64) and t.stage("V", 7).shape == (10, 64)
    assert t.stage("scores", 0).shape == (10, 10)
    assert t.stage("head_outputs", 5).shape == (10, 64)
    assert t["concat"].shape == (10, 512) and t["output"].shape == (10, 512)
    # "The diagonal fallacy": with independent W_Q and W_K, q_t . k_t is not always the row max.
    diag_is_max = [np.argmax(t.stage("scores", h)[i]) == i for h in range(8) for i in range(10)]
    assert not all(diag_is_max)


# -- seed 003 -------------------------------------------------------------------------------
def test_seed003_sizes():
    # Seed 003: sqrt(64) = 8; 512 = 8 heads x 64; 16 heads would use 32.
    assert AttentionConfig(d_k=64).scale_value() == pytest.approx(1 / 8)
    assert AttentionConfig(mode="projection", d_model=512, heads=16).head_dim == 32


def test_seed003_unscaled_softmax_is_peaky():
    # Seed 003: np.random.seed(0); q = randn(64); k = randn(6, 64). The tutorial prints no
    # numbers, only the claim: unscaled, one weight dominates; divided by 8, more keys stay.
    rs = np.random.RandomState(0)  # the tutorial's legacy stream
    q = rs.randn(64)
    k = rs.randn(6, 64)
    raw = attend([q], k, np.eye(6), scale="none").stage("weights", 0)[0]
    soft = attend([q], k, np.eye(6)).stage("weights", 0)[0]
    assert printed(raw, [0.0, 0.011, 0.988, 0.0, 0.0, 0.001], 3)  # what its code computes
    assert printed(soft, [0.027, 0.242, 0.424, 0.087, 0.040, 0.180], 3)
    assert raw.max() > 0.98 and soft.max() < 0.5
    assert (soft > 0.05).sum() >= 4 and (raw > 0.05).sum() == 1


@pytest.mark.parametrize("d_k", [4, 64])
def test_seed003_score_variance_grows_with_d_k(d_k):
    # Seeds 000 §2.6, 001 §3.2, 003: with unit-variance components the raw dot product has
    # variance d_k; dividing by sqrt(d_k) brings it back to about 1.
    rng = np.random.default_rng(3)
    Q, K = rng.normal(size=(300, d_k)), rng.normal(size=(300, d_k))
    t = attend(Q, K, np.zeros((300, 1)))
    assert np.var(t.stage("scores", 0)) / d_k == pytest.approx(1.0, abs=0.1)
    assert np.var(t.stage("scaled", 0)) == pytest.approx(1.0, abs=0.1)


# -- seed 004 -------------------------------------------------------------------------------
H = [[1, 1], [3, 2], [2, 4], [1, 5]]


def test_seed004_decoder_step1():
    # Seed 004, decoder timestep 1: s1 = [2, 1] against h1..h4 gives scores [3, 8, 8, 7].
    t = attend([[2, 1]], H, H, scale="none")
    np.testing.assert_array_equal(t.stage("scores", 0)[0], [3, 8, 8, 7])
    w = t.stage("weights", 0)[0]
    # The tutorial's softmax [0.003, 0.45, 0.45, 0.097] is wrong: h2, h3 get 0.4211 each and
    # h4 0.1549 (0.058 more than stated).
    np.testing.assert_allclose(w, [0.002837, 0.421120, 0.421120, 0.154922], atol=1e-6)
    assert printed(w[0], 0.003, 3) and not printed(w[1], 0.45, 2)
    # Its context [2.35, 3.19] follows from its wrong weights; the true one is [2.2634, 3.3042].
    np.testing.assert_allclose(t.stage("head_outputs", 0)[0], [2.263361, 3.304168], atol=1e-6)
    claimed = weights_of(np.log([0.003, 0.45, 0.45, 0.097]), H).stage("head_outputs", 0)[0]
    assert printed(claimed, [2.35, 3.19], 2)
    # The tutorial softmaxes raw scores: scaling by 1/sqrt(2) would move h1 further from 0.003.
    scaled = attend([[2, 1]], H, H).stage("weights", 0)[0]
    assert abs(scaled[0] - 0.003) > abs(w[0] - 0.003)


def test_seed004_decoder_state_s2():
    # Seed 004, timestep 2: s2 = [4, 2] gives [6, 16, 16, 14], not the supposed [2, 9, 6, 1].
    t = attend([[4, 2]], H, H, scale="none")
    np.testing.assert_array_equal(t.stage("scores", 0)[0], [6, 16, 16, 14])


@pytest.mark.parametrize(
    ("scores", "claimed", "exact"),
    [
        # Timestep 2: the tutorial says [0.001, 0.90, 0.09, 0.009]; h2 really gets 0.9514.
        ([2, 9, 6, 1], [0.001, 0.90, 0.09, 0.009], [0.000868, 0.951444, 0.047370, 0.000319]),
        # Timestep 3: the tutorial says [0.001, 0.01, 0.97, 0.019]; h3 really gets 0.9986.
        ([1, 2, 10, 3], [0.001, 0.01, 0.97, 0.019], [0.000123, 0.000335, 0.998631, 0.000911]),
    ],
)
def test_seed004_decoder_supposed_scores(scores, claimed, exact):
    w = weights_of(scores).stage("weights", 0)[0]
    np.testing.assert_allclose(w, exact, atol=1e-6)
    assert not printed(w, claimed, 2)


def test_seed004_later_steps_are_distributions():
    # Seed 004, timesteps 4 and 5 give weights only; each row adds up to 1.
    for row in ([0.01, 0.05, 0.10, 0.84], [0.01, 0.93, 0.03, 0.03]):
        assert sum(row) == pytest.approx(1.0)


def test_seed004_self_attention_supposed_rows():
    # Seed 004 self-attention: scores [2, 8, 4] -> [0.002, 0.98, 0.018], right to 3 decimals.
    w = weights_of([[2, 8, 4], [5, 2, 9]]).stage("weights", 0)
    assert printed(w[0], [0.002, 0.98, 0.018], 3)
    # Scores [5, 2, 9]: the tutorial says [0.1, 0.02, 0.88]; the softmax is [0.018, 0.0009, 0.981].
    np.testing.assert_allclose(w[1], [0.017970, 0.000895, 0.981135], atol=1e-6)
    assert not printed(w[1], [0.1, 0.02, 0.88], 2)


PIZZA = [[1, 0], [2, 1], [0, 2]]


def test_seed004_pizza_single_head():
    # Seed 004 single head, Q = K = V = embeddings, row "love": scores [2, 5, 2].
    t = attend(PIZZA, PIZZA, PIZZA, scale="none")
    np.testing.assert_array_equal(t.stage("scores", 0)[1], [2, 5, 2])
    w = t.stage("weights", 0)[1]
    assert printed(w, [0.045, 0.91, 0.045], 2) and printed(w[0], 0.045, 3)
    # The tutorial's output [1.87, 1.00] uses the rounded weights; exactly it is [1.8642, 1.0].
    out = t.stage("head_outputs", 0)[1]
    np.testing.assert_allclose(out, [1.864164, 1.0], atol=1e-6)
    assert printed(out[1], 1.00, 2) and not printed(out[0], 1.87, 2)
    # The tutorial does not scale: with 1/sqrt(2) the 'love' weight would be about 0.79.
    assert not printed(attend(PIZZA, PIZZA, PIZZA).stage("weights", 0)[1, 1], 0.91, 2)


def test_seed004_pizza_two_heads():
    # Seed 004 multi-head: the query of "love" per head against I, love, pizza.
    Q = [[[1, 1]], [[1, 3]]]
    K = [[[1, 1], [1, 2], [0, 1]], [[0, 1], [1, 1], [1, 3]]]
    V = [[[1, 0], [2, 1], [0, 1]], [[1, 1], [2, 0], [5, 5]]]
    t = attend(Q, K, V, scale="none")
    np.testing.assert_array_equal(t.stage("scores", 0)[0], [2, 3, 1])
    np.testing.assert_array_equal(t.stage("scores", 1)[0], [3, 4, 10])
    # Head 1: the tutorial says [0.24, 0.66, 0.10]; exactly [0.2447, 0.6652, 0.0900].
    w1 = t.stage("weights", 0)[0]
    np.testing.assert_allclose(w1, [0.244728, 0.665241, 0.090031], atol=1e-6)
    assert printed(w1[0], 0.24, 2) and not printed(w1[1:], [0.66, 0.10], 2)
    # Head 1 output: the tutorial says [1.56, 0.76]; exactly [1.5752, 0.7553].
    np.testing.assert_allclose(t.stage("head_outputs", 0)[0], [1.575210, 0.755272], atol=1e-6)
    # Head 2: [0.001, 0.002, 0.997] is right to 3 decimals.
    assert printed(t.stage("weights", 1)[0], [0.001, 0.002, 0.997], 3)
    # Head 2 output: the tutorial says about [4.99, 4.99]; exactly [4.9890, 4.9840].
    a2 = t.stage("head_outputs", 1)[0]
    np.testing.assert_allclose(a2, [4.988954, 4.984013], atol=1e-6)
    assert printed(a2[0], 4.99, 2) and not printed(a2[1], 4.99, 2)
    # The concatenation is the two head outputs side by side.
    np.testing.assert_allclose(t["concat"][0], np.r_[t.stage("head_outputs", 0)[0], a2])
