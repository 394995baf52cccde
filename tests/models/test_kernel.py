"""The model run's fast attention for an edited layer (pretrained/kernel.py): a session whose
settings ``compute()`` would run as plain softmax attention gets the same numbers from the
batched kernel, anything else (and a float32 overflow) goes through ``compute()`` itself."""

from __future__ import annotations

import numpy as np
import pytest

from attention_explorer.engine import AttentionConfig, AttentionInputs, compute
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
