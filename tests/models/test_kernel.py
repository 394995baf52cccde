"""The model run's fast attention for an edited layer (pretrained/kernel.py): a session whose
settings ``compute()`` would run as plain softmax attention gets the same numbers from the
batched kernel, anything else (and a float32 overflow) goes through ``compute()`` itself."""

from __future__ import annotations

import numpy as np
import pytest

from attention_explorer.engine import AttentionConfig, AttentionInputs, compute
from attention_explorer.kernels import numpy_ops
from attention_explorer.pretrained import kernel


def _session(heads=4, kv_heads=None, d_model=16, n=7, bias=True, seed=0):
    rng = np.random.default_rng(seed)
    kv = kv_heads or heads
    d_k = d_model // heads
    arrays = {
        "X": rng.normal(size=(n, d_model)),
        "W_Q": rng.normal(size=(d_model, heads * d_k)),
        "W_K": rng.normal(size=(d_model, kv * d_k)),
        "W_V": rng.normal(size=(d_model, kv * d_k)),
        "W_O": rng.normal(size=(heads * d_k, d_model)),
    }
    if bias:
        arrays.update({f"b_{c}": rng.normal(size=arrays[f"W_{c}"].shape[1]) for c in "QKVO"})
    config = AttentionConfig(
        mode="projection", heads=heads, d_model=d_model, d_k=d_k, kv_heads=kv_heads
    )
    return config, AttentionInputs(**arrays)


def _engine(config, inputs, dtype, knocked=()):
    W_O = np.array(inputs.W_O)  # [h*d_v, d]
    d_v = W_O.shape[0] // config.heads
    for head in knocked:
        W_O[head * d_v : (head + 1) * d_v] = 0.0
    trace = compute(
        AttentionInputs(**{**inputs.arrays(), "W_O": W_O}),
        config,
        dtype=dtype,
        stages=("weights", "output"),
    )
    return trace.stages["weights"], trace.stages["output"]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"mask": "causal"},
        {"temperature": 0.5, "scale": "custom", "scale_factor": 0.3},
        {"scale": "none", "kv_heads": 2},
        {"knocked": (1, 3)},
    ],
)
def test_plain_sessions_match_compute(dtype, changes):
    changes = dict(changes)
    knocked = changes.pop("knocked", ())
    config, inputs = _session(kv_heads=changes.pop("kv_heads", None), bias=not knocked)
    config = config.with_changes(**changes)
    assert kernel.plain(config, inputs)
    want_p, want_a = _engine(config, inputs, dtype, knocked)
    p, a = kernel.attend_plain(config, inputs, dtype, knocked)
    assert p.dtype == a.dtype == np.dtype(dtype)
    tol = 1e-12 if dtype == "float64" else 2e-5
    np.testing.assert_allclose(p, want_p, rtol=0, atol=tol)
    np.testing.assert_allclose(a, want_a, rtol=tol, atol=tol * np.abs(want_a).max())
    # what the model run calls: the same answer
    p2, a2 = kernel.attend_engine(config, inputs, None, dtype, knocked)
    np.testing.assert_array_equal(p2, p)
    np.testing.assert_array_equal(a2, a)


@pytest.mark.parametrize(
    "changes",
    [{"normalizer": "sparsemax"}, {"mask": "padding", "padded_keys": (2,)}, {"positional": "rope"}],
)
def test_other_settings_are_not_plain_and_go_through_compute(changes, monkeypatch):
    config, inputs = _session()
    config = config.with_changes(**changes)
    assert not kernel.plain(config, inputs)
    monkeypatch.setattr(kernel, "attend_plain", lambda *a: pytest.fail("fast path taken"))
    p, a = kernel.attend_engine(config, inputs, None, "float64")
    want_p, want_a = _engine(config, inputs, "float64")
    np.testing.assert_array_equal(p, want_p)
    np.testing.assert_array_equal(a, want_a)


def test_typed_q_k_v_are_not_plain():
    config, inputs = _session()
    q = np.zeros((4, 7, 4))
    assert not kernel.plain(config, AttentionInputs(**{**inputs.arrays(), "Q": q}))


def test_a_float32_overflow_is_redone_in_float64_by_compute():
    config, inputs = _session(bias=False)
    huge = AttentionInputs(**{**inputs.arrays(), "X": inputs.X * 1e20})
    assert kernel.attend_plain(config, huge, "float32") is None  # scores overflow float32
    p, a = kernel.attend_engine(config, huge, None, "float32")
    assert np.isfinite(p).all() and np.isfinite(a).all()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("size", [0.5, 7.0, 40.0])
def test_the_softmax_skips_the_max_only_when_the_scores_are_bounded(dtype, size, monkeypatch):
    """Scores up to ±49 (size 7, d_k 1: |q||k| <= 49) run without subtracting the row max;
    up to ±1600 (size 40) they must, or exp overflows. Either way the weights are the
    softmax's, with hidden keys at 0."""
    rng = np.random.default_rng(3)
    q = (rng.uniform(-size, size, (3, 6, 1))).astype(dtype)  # [heads, n, d_k]
    k = (rng.uniform(-size, size, (3, 6, 1))).astype(dtype)
    v = rng.normal(size=(3, 6, 2)).astype(dtype)
    scores = (q @ k.transpose(0, 2, 1)).astype(np.float64)  # [3, 6, 6]
    hidden = np.triu(np.ones((6, 6), bool), 1)  # causal
    scores[:, hidden] = -np.inf
    want = np.exp(scores - scores.max(-1, keepdims=True))
    want /= want.sum(-1, keepdims=True)
    shifted = []
    real = numpy_ops.softmax

    def spy(masked, empty_rows=False, out=None, shift=True):
        shifted.append(shift)
        return real(masked, empty_rows, out, shift)

    monkeypatch.setattr(numpy_ops, "softmax", spy)
    weights, mixed = numpy_ops.attention(q.copy(), k, v, 1.0, blocked=hidden)
    assert shifted and set(shifted) == {size * size > numpy_ops.SCORE_BOUND}
    tiny = 1e-30 if dtype == np.float32 else 1e-300  # below: underflows to 0 in dtype
    np.testing.assert_allclose(
        weights, want, rtol=2e-6 if dtype == np.float32 else 1e-12, atol=tiny
    )
    np.testing.assert_allclose(mixed, want @ v, rtol=1e-5, atol=1e-6)
    assert np.isfinite(weights).all()
