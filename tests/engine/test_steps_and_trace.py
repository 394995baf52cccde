"""The engine's steps through the numpy primitives, the positional stages (X as typed, P,
X + P), overflow as an exception, and a Trace that cannot be changed once built."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from attention_explorer.core.stages import CATALOGUE
from attention_explorer.engine import AttentionConfig, AttentionInputs, Backend, compute
from attention_explorer.engine.backend import ArrayLib
from attention_explorer.engine.compute import scores_cannot_overflow
from attention_explorer.engine.engine_errors import ComputeOverflow, require_finite
from attention_explorer.engine.head_inputs import head_columns
from attention_explorer.engine.trace import ALL_STAGES, PER_HEAD_STAGES, SQUARE_STAGES
from attention_explorer.kernels import numpy_ops as ops
from attention_explorer.kernels.tables import sinusoidal as sinusoidal_encoding

RNG = np.random.default_rng(3)
X = np.round(RNG.normal(size=(4, 6)), 2)  # [n, d_model]
W = {name: np.round(RNG.normal(size=(6, 6)), 2) for name in ("W_Q", "W_K", "W_V", "W_O")}
INPUTS = AttentionInputs(X=X, **W)
CONFIG = AttentionConfig(mode="projection", heads=2, d_model=6, positional="sinusoidal")


def test_stage_lists_come_from_the_catalogue():
    assert ALL_STAGES == tuple(CATALOGUE)
    assert set(PER_HEAD_STAGES) == {n for n, s in CATALOGUE.items() if s.per_head}
    assert SQUARE_STAGES == ("scores", "scaled", "capped", "masked", "weights")
    assert ALL_STAGES.index("positions") < ALL_STAGES.index("X_pos") < ALL_STAGES.index("Q")


def test_positions_on_keeps_x_as_typed_and_projects_x_plus_p():
    trace = compute(INPUTS, CONFIG, dtype="float64")
    P = sinusoidal_encoding(4, 6)  # [n, d_model]
    np.testing.assert_array_equal(trace["X"], X)
    np.testing.assert_allclose(trace["positions"], P)
    np.testing.assert_allclose(trace["X_pos"], X + P)
    # Q reads X + P, not X: head 1's Q is (X + P) W_Q[:, 3:6]
    np.testing.assert_allclose(trace.stage("Q", 1), (X + P) @ W["W_Q"][:, 3:6])
    assert not np.allclose(trace.stage("Q", 1), X @ W["W_Q"][:, 3:6])


def test_positions_off_gives_no_position_stages():
    trace = compute(INPUTS, CONFIG.with_changes(positional="none"), dtype="float64")
    assert trace["positions"] is None and trace["X_pos"] is None
    np.testing.assert_allclose(trace.stage("Q", 0), X @ W["W_Q"][:, :3])


def test_only_asked_for_position_stages_are_kept():
    trace = compute(INPUTS, CONFIG, stages=["positions", "weights"])
    assert trace.has("positions") and trace.has("weights")
    assert not trace.has("X") and not trace.has("X_pos") and not trace.has("Q")


def test_trace_is_frozen():
    trace = compute(INPUTS, CONFIG)
    with pytest.raises(dataclasses.FrozenInstanceError):
        trace.notes = ("patched",)
    with pytest.raises(TypeError):
        trace.stages["weights"] = None
    assert trace.has("weights")


def test_each_step_matches_its_formula():
    q = RNG.normal(size=(2, 3, 4))  # [c, n, d_k]
    k = RNG.normal(size=(2, 5, 4))  # [c, m, d_k]
    v = RNG.normal(size=(2, 5, 3))  # [c, m, d_v]
    scores = ops.score(q, k)  # [c, n, m]
    np.testing.assert_allclose(scores, np.einsum("cnd,cmd->cnm", q, k))
    np.testing.assert_allclose(ops.scaled_score(q, k, 0.5), ops.scale(scores, 0.5))
    allowed = np.tri(3, 5, dtype=bool)  # [n, m]
    masked = ops.mask_scores(scores, allowed)
    assert np.all(np.isneginf(masked[:, ~allowed])) and np.all(
        masked[:, allowed] == scores[:, allowed]
    )
    weights = ops.normalize("softmax", masked)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0)
    heads = ops.combine(weights, v)  # [c, n, d_v]
    np.testing.assert_allclose(heads, weights @ v)
    joined = ops.merge_heads(heads)  # [n, 2*d_v]
    np.testing.assert_allclose(joined, np.concatenate([heads[0], heads[1]], axis=1))
    flat = np.arange(24.0).reshape(4, 6)  # [rows, 2*3]
    split = ops.split_heads(flat, 2)
    np.testing.assert_array_equal(split[1], flat[:, 3:])


def test_head_columns_for_gapped_heads():
    W_all = np.arange(4 * 8.0).reshape(4, 8)  # [d_model, 4 heads * 2]
    b_all = np.arange(8.0)
    part, bias = head_columns(W_all, b_all, [0, 3], 2)
    np.testing.assert_array_equal(part, W_all[:, [0, 1, 6, 7]])
    np.testing.assert_array_equal(bias, [0, 1, 6, 7])


def test_overflow_is_an_exception_from_the_steps():
    with pytest.raises(ComputeOverflow) as info:
        require_finite(ops, "the scores", np.array([1.0, np.inf]))
    assert info.value.where == "the scores"
    lib = ArrayLib(Backend("numpy"), "float32")
    huge = lib.asarray(np.full((1, 2, 2), 1e30))
    assert not scores_cannot_overflow(lib, huge, huge, 1.0, 2, 2)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_all_finite_sees_nan_and_either_infinity_anywhere(backend):
    if backend == "torch":
        pytest.importorskip("torch")
    lib = ArrayLib(Backend(backend), "float32")
    finite = np.full((2, 3, 4), 3e38)  # near float32's largest: a float32 sum overflows
    assert lib.ops.all_finite(lib.asarray(finite), lib.asarray(-finite))
    assert lib.ops.all_finite(lib.asarray(np.zeros((0, 4))))  # nothing to test
    for bad in (np.nan, np.inf, -np.inf):
        values = finite.copy()
        values[1, 2, 3] = bad
        assert not lib.ops.all_finite(lib.asarray(finite), lib.asarray(values)), bad


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("normalizer", ["softmax", "sparsemax", "sigmoid"])
def test_masking_in_place_when_scaled_is_not_kept_gives_the_same_weights(backend, normalizer):
    if backend == "torch":
        pytest.importorskip("torch")
    custom = tuple(tuple(j <= i and i != 1 for j in range(4)) for i in range(4))  # row 1 hidden
    config = CONFIG.with_changes(mask="custom", custom_mask=custom, normalizer=normalizer)
    full = compute(INPUTS, config, Backend(backend), dtype="float64")
    lean = compute(INPUTS, config, Backend(backend), dtype="float64", stages=["weights"])
    np.testing.assert_allclose(lean["weights"], full["weights"], rtol=1e-12, atol=1e-15)
    assert lean.fully_masked_rows == full.fully_masked_rows == (1,)
    assert np.all(lean["weights"][:, ~np.array(custom)] == 0)  # hidden keys get weight 0
