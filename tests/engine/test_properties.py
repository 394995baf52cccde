"""Properties of attention that must hold for any input (hypothesis)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from attention_explorer.engine import (
    ALL_STAGES,
    PER_HEAD_STAGES,
    AttentionConfig,
    AttentionInputs,
    Backend,
    available_backends,
    compute,
    torch_installed,
)

SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)
NORMALIZERS = ("softmax", "sparsemax", "sigmoid")
#: torch takes other code paths (fused softmax, in-place masking) when stages are left out
BACKENDS = [Backend("numpy")] + ([Backend("torch", "cpu")] if torch_installed() else [])
#: Every torch device here; a machine with a GPU tests cuda:N (or mps) with no change.
TORCH_DEVICES = [b.device for b in available_backends() if b.name == "torch"] or ["cpu"]


@st.composite
def direct_cases(draw, normalizers=NORMALIZERS, cross=True):
    """A random direct-mode (config, inputs) pair with a random custom mask."""
    kv = draw(st.integers(1, 3))
    h = kv * draw(st.integers(1, 3))
    n = draw(st.integers(1, 6))
    m = draw(st.integers(1, 6)) if cross and draw(st.booleans()) else n
    dk, dv = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    spread = draw(st.sampled_from([0.1, 1.0, 10.0]))
    allowed = rng.random((n, m)) < draw(st.sampled_from([0.3, 0.7, 1.0]))  # [n, m]
    config = AttentionConfig(
        mode="direct",
        heads=h,
        attention="cross" if m != n else "self",
        mask="custom",
        custom_mask=tuple(tuple(bool(x) for x in row) for row in allowed),
        normalizer=draw(st.sampled_from(normalizers)),
    )
    inputs = AttentionInputs(
        Q=rng.normal(scale=spread, size=(h, n, dk)),  # [h, n, dk]
        K=rng.normal(scale=spread, size=(kv, m, dk)),  # [kv, m, dk]
        V=rng.normal(size=(kv, m, dv)),  # [kv, m, dv]
    )
    return config, inputs


@st.composite
def projection_cases(draw, positional=("none", "sinusoidal", "learned")):
    """A random projection-mode (config, inputs) pair, self-attention, with output projection."""
    h = draw(st.integers(1, 3))
    dk = draw(st.integers(1, 3))
    d_model = 2 * draw(st.integers(1, 4))
    n = draw(st.integers(1, 7))
    kv = draw(st.sampled_from([d for d in range(1, h + 1) if h % d == 0]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    config = AttentionConfig(
        mode="projection",
        heads=h,
        d_model=d_model,
        d_k=dk,
        kv_heads=kv,
        mask=draw(st.sampled_from(["none", "causal"])),
        normalizer=draw(st.sampled_from(NORMALIZERS)),
        positional=draw(st.sampled_from(positional)),
    )
    inputs = AttentionInputs(
        X=rng.normal(size=(n, d_model)),  # [n, d_model]
        W_Q=rng.normal(size=(d_model, h * dk)),  # [d_model, h*dk]
        W_K=rng.normal(size=(d_model, kv * dk)),  # [d_model, kv*dk]
        W_V=rng.normal(size=(d_model, kv * dk)),  # [d_model, kv*dv]
        W_O=rng.normal(size=(h * dk, d_model)),  # [h*dv, d_model]
        b_Q=rng.normal(size=h * dk),
        b_O=rng.normal(size=d_model),
    )
    return config, inputs


@SETTINGS
@given(direct_cases(), st.sampled_from(["float32", "float64"]))
def test_rows_sum_to_one_and_masked_weights_are_zero(case, dtype):
    config, inputs = case
    trace = compute(inputs, config, dtype=dtype)
    allowed = np.array(config.custom_mask, dtype=bool)  # [n, m]
    weights = trace["weights"]  # [h, n, m]
    assert np.all(np.isfinite(weights))
    assert np.all(weights[:, ~allowed] == 0.0), "a hidden key got weight"
    assert np.all(np.isneginf(trace["masked"][:, ~allowed]))
    open_rows = allowed.any(axis=1)
    assert trace.fully_masked_rows == tuple(np.flatnonzero(~open_rows))
    assert np.all(weights[:, ~open_rows] == 0.0)
    assert np.all(trace["head_outputs"][:, ~open_rows] == 0.0)
    assert np.all(weights >= 0)
    if config.normalizer in ("softmax", "sparsemax"):
        tol = 1e-5 if dtype == "float32" else 1e-12
        np.testing.assert_allclose(weights[:, open_rows].sum(axis=-1), 1.0, atol=tol)
    else:  # sigmoid: each weight on its own
        expected = 1 / (1 + np.exp(-trace["masked"].astype(np.float64)))
        tol = 1e-6 if dtype == "float32" else 1e-14  # absolute too: float32 underflows to 0
        np.testing.assert_allclose(weights, expected, rtol=tol * 10, atol=tol)


@SETTINGS
@given(projection_cases(positional=("none",)), st.data())
def test_permutation_equivariance_without_positions(case, data):
    config, inputs = case
    config = config.with_changes(mask="none")
    n = inputs.X.shape[0]
    perm = np.array(data.draw(st.permutations(range(n))))
    base = compute(inputs, config, dtype="float64")
    moved = compute(inputs.with_changes(X=inputs.X[perm]), config, dtype="float64")
    np.testing.assert_allclose(moved["weights"], base["weights"][:, perm][:, :, perm], atol=1e-12)
    np.testing.assert_allclose(moved["output"], base["output"][perm], rtol=1e-10, atol=1e-10)


@settings(max_examples=20, deadline=None, database=None)
@given(st.integers(0, 2**32 - 1), st.integers(3, 6))
def test_positional_encoding_breaks_permutation_equivariance(seed, n):
    rng = np.random.default_rng(seed)
    config = AttentionConfig(mode="projection", heads=1, d_model=4, positional="sinusoidal")
    X = np.repeat(rng.normal(size=(1, 4)), n, axis=0)  # [n, 4], every token the same
    W = rng.normal(size=(4, 4))
    trace = compute(AttentionInputs(X=X, W_Q=W, W_K=W, W_V=W), config, dtype="float64")
    # identical tokens still differ once positions are added, so the weights are not uniform
    assert not np.allclose(trace["weights"], 1.0 / n)


@SETTINGS
@given(direct_cases(normalizers=("softmax", "sparsemax")), st.data())
def test_adding_a_constant_to_a_score_row_changes_nothing(case, data):
    config, inputs = case
    config = config.with_changes(scale="none")  # keep d_k out of the scale
    h, n, _ = inputs.Q.shape
    shift = np.asarray(data.draw(st.lists(st.floats(-50, 50), min_size=n, max_size=n)))  # [n]
    # q' = [q, c_i], k' = [k, 1]  =>  q'.k' = q.k + c_i for every key of row i.
    Q2 = np.concatenate([inputs.Q, np.broadcast_to(shift[None, :, None], (h, n, 1))], axis=2)
    K2 = np.concatenate([inputs.K, np.ones(inputs.K.shape[:2] + (1,))], axis=2)
    shifted = inputs.with_changes(Q=Q2, K=K2)
    base = compute(inputs, config, dtype="float64")
    moved = compute(shifted, config.with_changes(d_k=None), dtype="float64")
    allowed = np.array(config.custom_mask, dtype=bool)
    diff = moved["scores"] - base["scores"]  # [h, n, m]
    np.testing.assert_allclose(diff, np.broadcast_to(shift[None, :, None], diff.shape), atol=1e-9)
    np.testing.assert_allclose(moved["weights"], base["weights"], atol=1e-9)
    assert np.all(moved["weights"][:, ~allowed] == 0.0)


@pytest.mark.skipif(not torch_installed(), reason="torch is not installed")
@pytest.mark.parametrize("device", TORCH_DEVICES)
@SETTINGS
@given(st.one_of(direct_cases(), projection_cases()), st.sampled_from(["float32", "float64"]))
def test_numpy_and_torch_backends_agree(device, case, dtype):
    """torch on every device found here (cpu; cuda:N and mps where present) matches numpy."""
    if device == "mps" and dtype == "float64":
        return  # mps has no float64; the app offers float32 there
    config, inputs = case
    a = compute(inputs, config, Backend("numpy"), dtype=dtype)
    b = compute(inputs, config, Backend("torch", device), dtype=dtype)
    assert a.fully_masked_rows == b.fully_masked_rows
    rtol = 1e-4 if dtype == "float32" else 1e-10
    for name in ALL_STAGES:
        x, y = a[name], b[name]
        assert (x is None) == (y is None), name
        if x is None:
            continue
        assert x.shape == y.shape, name
        np.testing.assert_array_equal(np.isneginf(x), np.isneginf(y), err_msg=name)
        finite = np.isfinite(x)
        scale = max(1.0, float(np.max(np.abs(x[finite]), initial=0.0)))
        np.testing.assert_allclose(y[finite], x[finite], rtol=rtol, atol=rtol * scale, err_msg=name)


@SETTINGS
@given(projection_cases())
def test_kv_heads_equal_to_heads_is_plain_multi_head(case):
    config, inputs = case
    config = config.with_changes(kv_heads=None)
    h, dk = config.heads, config.head_dim
    rng = np.random.default_rng(0)
    inputs = inputs.with_changes(
        W_K=rng.normal(size=(config.d_model, h * dk)), W_V=rng.normal(size=(config.d_model, h * dk))
    )
    plain = compute(inputs, config, dtype="float64")
    explicit = compute(inputs, config.with_changes(kv_heads=h), dtype="float64")
    for name in ALL_STAGES:
        if plain[name] is not None:
            np.testing.assert_array_equal(explicit[name], plain[name], err_msg=name)


@SETTINGS
@given(direct_cases(cross=False))
def test_grouped_query_equals_multi_head_with_repeated_keys(case):
    config, inputs = case
    h, kv = inputs.Q.shape[0], inputs.K.shape[0]
    group = h // kv
    grouped = compute(inputs, config, dtype="float64")
    repeated = inputs.with_changes(
        K=np.repeat(inputs.K, group, axis=0), V=np.repeat(inputs.V, group, axis=0)
    )
    plain = compute(repeated, config.with_changes(kv_heads=None), dtype="float64")
    assert plain.config.n_kv_heads == h
    assert grouped.config.n_kv_heads == kv
    for name in ("K", "V", "scores", "weights", "head_outputs", "concat"):
        np.testing.assert_allclose(grouped[name], plain[name], rtol=1e-12, atol=1e-12)


@SETTINGS
@given(direct_cases(normalizers=("sparsemax",)), st.sampled_from(["float32", "float64"]))
def test_sparsemax_is_the_projection_onto_the_simplex(case, dtype):
    config, inputs = case
    trace = compute(inputs, config, dtype=dtype)
    allowed = np.array(config.custom_mask, dtype=bool)
    tol = 1e-5 if dtype == "float32" else 1e-12
    for head in range(inputs.Q.shape[0]):
        for i in np.flatnonzero(allowed.any(axis=1)):
            z = trace["masked"][head, i][allowed[i]].astype(np.float64)  # [allowed keys]
            p = trace["weights"][head, i][allowed[i]].astype(np.float64)
            assert p.sum() == pytest.approx(1.0, abs=tol)
            # KKT: p = max(z - tau, 0) for one tau: kept keys share z - p, dropped ones lie below
            kept = p > 0
            tau = z[kept] - p[kept]
            assert np.ptp(tau) <= 10 * tol * max(1.0, np.abs(z).max())
            assert np.all(z[~kept] <= tau.mean() + 10 * tol * max(1.0, np.abs(z).max()))
            # exact zeros: p_max <= 1 means tau >= z_max - 1, so any z a full 1 below is dropped
            far = z < z.max() - 1 - 1e-3
            assert np.all(p[far] == 0.0)


def test_sparsemax_gives_exact_zeros_on_a_known_row():
    # z = [2, 1, 0.5, -1]: support {2, 1}, tau = (3 - 1) / 2 = 1, p = [1, 0, 0, 0]... plus 0.5
    # is below tau, so p = [1, 0, 0, 0]; with z = [1, 0.8, 0] tau = 0.4, p = [0.6, 0.4, 0].
    Q = np.array([[[1.0]]])  # [1, 1, 1]
    for z, expected in (([2, 1, 0.5, -1], [1, 0, 0, 0]), ([1, 0.8, 0], [0.6, 0.4, 0])):
        K = np.array(z, dtype=np.float64)[None, :, None]  # [1, m, 1]
        V = np.ones_like(K)
        config = AttentionConfig(
            mode="direct", heads=1, attention="cross", scale="none", normalizer="sparsemax"
        )
        trace = compute(AttentionInputs(Q=Q, K=K, V=V), config, dtype="float64")
        np.testing.assert_allclose(trace["weights"][0, 0], expected, atol=1e-15)
        assert np.count_nonzero(trace["weights"][0, 0]) == np.count_nonzero(expected)


@SETTINGS
@given(
    st.one_of(direct_cases(), projection_cases()),
    st.data(),
    st.sampled_from(["float32", "float64"]),
    st.sampled_from(BACKENDS),
)
def test_head_and_stage_subset_equals_slice_of_full_trace(case, data, dtype, backend):
    config, inputs = case
    h = config.heads
    heads = data.draw(st.lists(st.integers(0, h - 1), min_size=1, max_size=h, unique=True))
    stages = set(data.draw(st.lists(st.sampled_from(ALL_STAGES), min_size=1, unique=True)))
    full = compute(inputs, config, Backend("numpy"), dtype=dtype)
    part = compute(inputs, config, backend, dtype=dtype, heads=heads, stages=stages)
    assert part.heads == tuple(sorted(heads))
    rows = sorted(heads)
    tol = 1e-5 if dtype == "float32" else 1e-12
    for name in ALL_STAGES:
        if name not in stages or full[name] is None:
            assert part[name] is None, name
            continue
        expected = full[name][rows] if name in PER_HEAD_STAGES else full[name]
        assert part[name].shape == expected.shape, name
        np.testing.assert_array_equal(np.isneginf(part[name]), np.isneginf(expected))
        finite = np.isfinite(expected)
        scale = max(1.0, float(np.max(np.abs(expected[finite]), initial=0.0)))
        np.testing.assert_allclose(
            part[name][finite], expected[finite], rtol=tol, atol=tol * scale, err_msg=name
        )


def test_one_head_weights_only_matches_full_trace_and_keeps_nothing_else():
    rng = np.random.default_rng(1)
    config = AttentionConfig(mode="projection", heads=4, d_model=8, mask="causal")
    inputs = AttentionInputs(
        X=rng.normal(size=(9, 8)),
        W_Q=rng.normal(size=(8, 8)),
        W_K=rng.normal(size=(8, 8)),
        W_V=rng.normal(size=(8, 8)),
    )
    full = compute(inputs, config, dtype="float64")
    part = compute(inputs, config, dtype="float64", heads=[1], stages={"weights"})
    assert part.heads == (1,)
    assert [name for name in ALL_STAGES if part.has(name)] == ["weights"]
    np.testing.assert_allclose(part["weights"], full["weights"][1:2], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(part.stage("weights", 1), full.stage("weights", 1), rtol=1e-12)
    with pytest.raises(KeyError):
        part.stage("weights", 0)
