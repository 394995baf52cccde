"""Every worked number in the curriculum's tutorials that the engine can reproduce: the first
tutorial (seed 000). The later ones are in test_tutorial_numbers_later.py.

Seeds live in /work/shared/seeds (000 ... 004). Where a tutorial prints a rounded number the
test checks it to that precision; where the tutorial is wrong, the exact value is pinned and a
comment says how the tutorial differs.
"""

import math

import numpy as np
import pytest
from tutorial_checks import attend, printed, weights_of

from attention_explorer.engine import AttentionConfig, AttentionInputError, AttentionInputs, compute


# -- seed 000 -------------------------------------------------------------------------------
def test_seed000_2_5_dot_products():
    # Seed 000 §2.5: q = [2, 1]; q . k_cat = 5 with k_cat = [2, 1], q . k_the = 1 with [0, 1].
    t = attend([[2, 1]], [[2, 1], [0, 1]], [[1, 0], [0, 1]])
    np.testing.assert_array_equal(t.stage("scores", 0)[0], [5, 1])


def test_seed000_2_3_score_order():
    # Seed 000 §2.3: raw scores [1.2, 0.1, 2.0]: third largest weight, first moderate, second least.
    w = weights_of([1.2, 0.1, 2.0]).stage("weights", 0)[0]
    assert w[2] > w[0] > w[1]
    assert w[2] > 0.5  # the output is dominated by the third value


def test_seed000_2_6_scaling_keeps_scores_comparable():
    # Seed 000 §2.6: a raw score of 8 at d_k = 4 and of 32 at d_k = 64 both scale to 4.
    small = attend([[2, 2, 2, 2]], [[1, 1, 1, 1]], [[1]])
    large = attend([[1.0] * 64], [[0.5] * 64], [[1]])
    assert small.stage("scores", 0)[0, 0] == 8 and large.stage("scores", 0)[0, 0] == 32
    assert small.stage("scaled", 0)[0, 0] == pytest.approx(4)
    assert large.stage("scaled", 0)[0, 0] == pytest.approx(4)


def test_seed000_2_7_softmax_row():
    # Seed 000 §2.7: softmax([2, 1, 0]) is approximately [0.67, 0.24, 0.09].
    w = weights_of([2, 1, 0]).stage("weights", 0)[0]
    assert printed(w, [0.67, 0.24, 0.09], 2)


def test_seed000_2_8_and_interview_weighted_sums():
    # Seed 000 §2.8: weights [0.7, 0.2, 0.1] over values [2,0], [0,2], [1,1] give [1.5, 0.5].
    # Interview (moderate): weights [0.6, 0.3, 0.1] over [1,0], [0,2], [3,1] give [0.9, 0.7].
    # log-weights as scores make the softmax return exactly those weights.
    for w, V, out in (
        ([0.7, 0.2, 0.1], [[2, 0], [0, 2], [1, 1]], [1.5, 0.5]),
        ([0.6, 0.3, 0.1], [[1, 0], [0, 2], [3, 1]], [0.9, 0.7]),
    ):
        t = weights_of(np.log(w), V)
        np.testing.assert_allclose(t.stage("weights", 0)[0], w, atol=1e-12)
        np.testing.assert_allclose(t.stage("head_outputs", 0)[0], out, atol=1e-12)


def test_seed000_checkpoint5_equal_scores_give_uniform_row():
    # Seed 000 checkpoint 5: equal scores in a row -> every weight is 1/n, output = mean value.
    V = np.arange(10.0).reshape(5, 2)
    t = weights_of([3, 3, 3, 3, 3], V)
    np.testing.assert_allclose(t.stage("weights", 0)[0], 0.2)
    np.testing.assert_allclose(t.stage("head_outputs", 0)[0], V.mean(axis=0))


def test_seed000_head_sizes_and_checkpoint10():
    # Seed 000 §5.1: d_model 16 with 4 heads -> d_head 4; §5.6: 24 with 6 heads -> 4.
    assert AttentionConfig(mode="projection", d_model=16, heads=4).head_dim == 4
    assert AttentionConfig(mode="projection", d_model=24, heads=6).head_dim == 4
    # Checkpoint 10: 16 works with 4 heads but not with 3.
    with pytest.raises(AttentionInputError) as err:
        AttentionConfig(mode="projection", d_model=16, heads=3).validate()
    assert err.value.field == "heads" and "16" in err.value.message


def test_seed000_5_4_multihead_shapes():
    # Seed 000 §5.4: 4 tokens, d_model 16, 4 heads: Q, scores and heads are [4, 4, 4];
    # the concatenation and the output are [4, 16].
    rng = np.random.default_rng(0)
    inputs = AttentionInputs(
        X=rng.normal(size=(4, 16)),
        **{w: rng.normal(size=(16, 16)) for w in ("W_Q", "W_K", "W_V", "W_O")},
    )
    t = compute(inputs, AttentionConfig(mode="projection", d_model=16, heads=4))
    for stage in ("Q", "scores", "weights", "head_outputs"):
        assert t[stage].shape == (4, 4, 4)
    assert t["concat"].shape == (4, 16) and t["output"].shape == (4, 16)


def test_seed000_interview_random_qkv_matches_formula():
    # Seed 000 interview: Q, K, V of 4 x 8; softmax(Q K^T / sqrt(8)) V, rows summing to 1.
    rng = np.random.default_rng(1)
    Q, K, V = (rng.normal(size=(4, 8)) for _ in range(3))
    t = attend(Q, K, V)
    s = Q @ K.T / math.sqrt(8)  # [4, 4]
    w = np.exp(s - s.max(axis=1, keepdims=True))
    w /= w.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(t.stage("weights", 0), w, atol=1e-12)
    np.testing.assert_allclose(t.stage("head_outputs", 0), w @ V, atol=1e-12)
    np.testing.assert_allclose(t.stage("weights", 0).sum(axis=1), 1.0)


TOY_X = [
    [
        0.3374,
        -0.1778,
        -0.3035,
        -0.5880,
        0.3486,
        0.6603,
        -0.2196,
        -0.3792,
        0.7671,
        -1.1925,
        0.6984,
        -1.4097,
        0.1794,
        1.8951,
        0.4954,
        0.2692,
    ],
    [
        -0.0770,
        -1.0205,
        -0.1690,
        0.9178,
        1.5810,
        1.3010,
        1.2753,
        -0.2010,
        0.4965,
        -1.5723,
        0.9666,
        -1.1481,
        -1.1589,
        0.3255,
        -0.6315,
        -2.8400,
    ],
    [
        -1.3250,
        0.1784,
        -2.1338,
        1.0524,
        -0.3885,
        -0.9343,
        -0.4991,
        -1.0867,
        0.8805,
        1.5542,
        0.6266,
        -0.1755,
        0.0983,
        -0.0935,
        0.2662,
        -0.5850,
    ],
    [
        0.8768,
        1.6221,
        -1.4779,
        1.1331,
        -1.2203,
        1.3139,
        1.0533,
        0.1388,
        2.2473,
        -0.8036,
        -0.2808,
        0.7697,
        -0.6596,
        -0.7979,
        0.1838,
        0.2293,
    ],
]
TOY_WEIGHTS = [
    [0.2352, 0.2783, 0.2205, 0.2659],
    [0.2094, 0.3100, 0.2795, 0.2011],
    [0.3360, 0.2504, 0.2338, 0.1797],
    [0.3234, 0.2881, 0.2501, 0.1385],
]


def test_seed000_4_4_pytorch_toy_weights_from_torch_seed():
    # Seed 000 §4.1-4.4: replay the tutorial's torch code (seed 123), run our engine on its
    # embeddings and transposed Linear weights: X and the 4 x 4 weights match the printout.
    torch = pytest.importorskip("torch")
    torch.manual_seed(123)
    embed = torch.nn.Embedding(6, 16)
    x = embed(torch.tensor([0, 1, 2, 3])).detach()
    w_q, w_k, w_v = (torch.nn.Linear(16, 8, bias=False) for _ in range(3))
    inputs = AttentionInputs(
        X=x.numpy().astype(np.float64),
        **{
            name: layer.weight.detach().numpy().T.astype(np.float64)
            for name, layer in zip(("W_Q", "W_K", "W_V"), (w_q, w_k, w_v))
        },
    )
    t = compute(inputs, AttentionConfig(mode="projection", d_model=16, heads=1, d_k=8, d_v=8))
    assert printed(t["X"], TOY_X, 4)
    assert printed(t.stage("weights", 0), TOY_WEIGHTS, 4)
    np.testing.assert_allclose(t.stage("weights", 0).sum(axis=1), 1.0, atol=1e-6)
