"""Every invalid setting or array raises AttentionInputError naming the field and what is valid."""

from __future__ import annotations

import numpy as np
import pytest

from attention_explorer.engine import (
    AttentionConfig,
    AttentionInputError,
    AttentionInputs,
    Backend,
    available_backends,
    backend as backend_module,
    compute,
    divisors,
)


def projection_inputs(n=3, d_model=4, width=4, seed=0, **changes):
    """Valid projection-mode arrays for ``width`` = heads*d_k columns, with some replaced."""
    rng = np.random.default_rng(seed)
    arrays = {
        "X": rng.normal(size=(n, d_model)),  # [n, d_model]
        "W_Q": rng.normal(size=(d_model, width)),  # [d_model, h*d_k]
        "W_K": rng.normal(size=(d_model, width)),
        "W_V": rng.normal(size=(d_model, width)),
        "W_O": rng.normal(size=(width, d_model)),  # [h*d_v, d_model]
    }
    arrays.update(changes)
    return AttentionInputs(**arrays)


def direct_inputs(h=2, n=3, m=None, dk=2, dv=2, kv=None, **changes):
    """Valid direct-mode arrays Q [h,n,dk], K [kv,m,dk], V [kv,m,dv], with some replaced."""
    rng = np.random.default_rng(1)
    kv, m = kv or h, m or n
    arrays = {
        "Q": rng.normal(size=(h, n, dk)),
        "K": rng.normal(size=(kv, m, dk)),
        "V": rng.normal(size=(kv, m, dv)),
    }
    arrays.update(changes)
    return AttentionInputs(**arrays)


PROJ = AttentionConfig(mode="projection", heads=2, d_model=4)
DIRECT = AttentionConfig(mode="direct", heads=2)


def raises(field: str, *fragments: str, inputs=None, config=None, **kwargs):
    """Run compute and check the error's field and that its message holds every fragment."""
    with pytest.raises(AttentionInputError) as info:
        compute(inputs if inputs is not None else projection_inputs(), config or PROJ, **kwargs)
    error = info.value
    assert error.field == field, str(error)
    for fragment in fragments:
        assert fragment in error.message, f"{fragment!r} not in {error.message!r}"
    assert str(error).startswith(f"{field}: ")
    return error


def test_divisors():
    assert divisors(16) == [1, 2, 4, 8, 16]
    assert divisors(12) == [1, 2, 3, 4, 6, 12]
    assert divisors(7) == [1, 7]
    assert divisors(0) == []


def test_d_model_not_divisible_by_heads_lists_the_divisors():
    config = AttentionConfig(mode="projection", heads=3, d_model=16)
    error = raises(
        "heads",
        "d_model 16",
        "3 heads",
        "1, 2, 4, 8, 16",
        inputs=projection_inputs(d_model=16, width=15),
        config=config,
    )
    assert "give d_k in the session file" in error.message  # the other way out, where it is
    # and with d_k set explicitly the same head count is fine
    ok = config.with_changes(d_k=5)
    assert compute(projection_inputs(d_model=16, width=15), ok)["weights"].shape == (3, 3, 3)


@pytest.mark.parametrize(
    "changes,field,fragments",
    [
        ({"heads": 0}, "heads", ["0", "at least 1"]),
        ({"heads": -2}, "heads", ["at least 1"]),
        ({"heads": 2.0}, "heads", ["whole number"]),
        ({"heads": True}, "heads", ["whole number"]),
        ({"d_model": 0}, "d_model", ["at least 1"]),
        ({"d_k": 0}, "d_k", ["at least 1"]),
        ({"d_v": -1}, "d_v", ["at least 1"]),
        ({"kv_heads": 0}, "kv_heads", ["at least 1"]),
        ({"heads": 4, "d_model": 8, "kv_heads": 3}, "kv_heads", ["4 query heads", "1, 2, 4"]),
        ({"mode": "magic"}, "mode", ["'magic'", "direct, projection"]),
        ({"mask": "diagonal"}, "mask", ["none, causal, padding, custom"]),
        ({"scale": "log"}, "scale", ["sqrt_dk, none, custom"]),
        ({"normalizer": "relu"}, "normalizer", ["softmax, sparsemax, sigmoid"]),
        ({"positional": "alibi"}, "positional", ["none, sinusoidal, learned, rope"]),
        ({"attention": "global"}, "attention", ["self, cross"]),
        ({"scale": "custom", "scale_factor": 0.0}, "scale_factor", ["positive finite"]),
        ({"scale": "custom", "scale_factor": -1.0}, "scale_factor", ["positive finite"]),
        ({"scale_factor": float("nan")}, "scale_factor", ["positive finite"]),
        ({"temperature": 0.0}, "temperature", ["positive finite", "1.0"]),
        ({"temperature": float("inf")}, "temperature", ["positive finite"]),
        ({"positional": "sinusoidal", "d_model": 3, "heads": 1}, "positional", ["even d_model"]),
        ({"mask": "custom"}, "custom_mask", ["boolean matrix"]),
        ({"mask": "custom", "custom_mask": ((True,) * 3,) * 2}, "custom_mask", ["3x3", "2x3"]),
        ({"mask": "padding", "padded_keys": (3,)}, "padded_keys", ["0..2"]),
        ({"mask": "padding", "padded_keys": (-1,)}, "padded_keys", ["0..2"]),
    ],
)
def test_invalid_projection_settings(changes, field, fragments):
    config = PROJ.with_changes(**changes)
    d_model = config.d_model if isinstance(config.d_model, int) and config.d_model > 0 else 4
    raises(field, *fragments, inputs=projection_inputs(d_model=d_model), config=config)


def test_positional_encoding_needs_projection_mode():
    raises(
        "positional",
        "projection mode",
        inputs=direct_inputs(),
        config=DIRECT.with_changes(positional="sinusoidal"),
    )


@pytest.mark.parametrize(
    "name,value,fragments",
    [
        ("X", np.zeros((3, 5)), ["expected 3x4", "tokens x d_model", "got 3x5"]),
        ("X", np.zeros(4), ["tokens x d_model"]),
        ("X", None, ["tokens x d_model"]),
        ("W_Q", np.zeros((4, 3)), ["expected 4x4", "2 heads of 2", "got 4x3"]),
        ("W_K", np.zeros((5, 4)), ["expected 4x4", "got 5x4"]),
        ("W_V", np.zeros((4, 6)), ["expected 4x4", "got 4x6"]),
        ("W_V", None, ["is missing", "d_model x kv_heads*d_v"]),
        ("W_O", np.zeros((3, 4)), ["expected 4x4", "got 3x4"]),
        ("b_Q", np.zeros(3), ["expected 4", "got 3"]),
        ("b_K", np.zeros((4, 1)), ["expected 4", "got 4x1"]),
        ("b_O", np.zeros(5), ["expected 4", "got 5"]),
    ],
)
def test_invalid_projection_arrays(name, value, fragments):
    raises(f"inputs.{name}", *fragments, inputs=projection_inputs(**{name: value}))


def test_cross_attention_needs_the_key_value_sequence():
    config = PROJ.with_changes(attention="cross")
    raises("inputs.X_kv", "cross-attention", inputs=projection_inputs(), config=config)
    raises(
        "inputs.X_kv",
        "expected 2x4",
        inputs=projection_inputs(X_kv=np.zeros((2, 3))),
        config=config,
    )
    trace = compute(projection_inputs(X_kv=np.ones((5, 4))), config)
    assert trace["weights"].shape == (2, 3, 5)


@pytest.mark.parametrize(
    "changes,field,fragments",
    [
        ({"Q": np.zeros((3, 2))}, "inputs.Q", ["heads x tokens x d_k"]),
        ({"Q": None}, "inputs.Q", ["heads x tokens x d_k"]),
        ({"K": np.zeros((2, 3, 3))}, "inputs.K", ["expected 2x3x2", "got 2x3x3"]),
        ({"K": np.zeros((2, 4, 2)), "V": np.zeros((2, 4, 2))}, "inputs.K", ["expected 2x3x2"]),
        ({"V": np.zeros((2, 2, 2))}, "inputs.V", ["expected 2x3x2", "got 2x2x2"]),
        ({"V": None}, "inputs.V", ["is missing"]),
        ({"K": np.zeros((3, 3, 2)), "V": np.zeros((3, 3, 2))}, "kv_heads", ["1, 2"]),
        ({"W_O": np.zeros((3, 2))}, "inputs.W_O", ["expected 4x2", "2 heads of 2"]),
    ],
)
def test_invalid_direct_arrays(changes, field, fragments):
    raises(field, *fragments, inputs=direct_inputs(**changes), config=DIRECT)


def test_direct_mode_without_tokens():
    raises(
        "inputs.Q",
        "at least one token",
        inputs=direct_inputs(Q=np.zeros((2, 0, 2)), K=np.zeros((2, 0, 2)), V=np.zeros((2, 0, 2))),
        config=DIRECT,
    )


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("name", ["X", "W_K", "W_O"])
def test_nan_and_inf_are_refused(name, bad):
    array = projection_inputs().arrays()[name].copy()
    array[1, 2] = bad
    raises(
        f"inputs.{name}", "[1, 2]", "only finite numbers", inputs=projection_inputs(**{name: array})
    )


def test_nan_refused_in_direct_mode():
    Q = direct_inputs().Q.copy()
    Q[1, 0, 1] = np.nan
    raises("inputs.Q", "[1, 0, 1]", "finite", inputs=direct_inputs(Q=Q), config=DIRECT)


def test_values_beyond_1e30_are_refused():
    X = projection_inputs().X.copy()
    X[0, 0] = -2e30
    raises("inputs.X", "[0, 0]", "1e+30", inputs=projection_inputs(X=X))


@pytest.mark.parametrize("mode", ["direct", "projection"])
@pytest.mark.parametrize("normalizer", ["softmax", "sparsemax", "sigmoid"])
def test_inputs_of_1e30_give_finite_results_in_float64(mode, normalizer):
    rng = np.random.default_rng(2)
    if mode == "direct":
        base = direct_inputs()
        inputs = base.with_changes(
            Q=np.sign(base.Q) * 1e30,
            K=np.clip(base.K * 1e30, -1e30, 1e30),
            W_O=np.full((4, 3), 1e30),
        )
        config = DIRECT.with_changes(normalizer=normalizer, mask="causal")
    else:
        inputs = projection_inputs(
            X=np.clip(rng.normal(size=(3, 4)) * 1e30, -1e30, 1e30), W_V=np.full((4, 4), 1e30)
        )
        config = PROJ.with_changes(normalizer=normalizer)
    trace = compute(inputs, config)  # float32 asked for
    assert trace.dtype == "float64"
    assert trace["weights"].dtype == np.float64
    assert len(trace.notes) == 1 and "float64" in trace.notes[0] and "float32" in trace.notes[0]
    for name in ("scores", "weights", "head_outputs", "output"):
        assert np.all(np.isfinite(trace[name])), name
    if normalizer != "sigmoid":
        np.testing.assert_allclose(trace["weights"].sum(axis=-1), 1.0, rtol=1e-12)


def test_ordinary_inputs_stay_float32_without_a_note():
    trace = compute(projection_inputs(), PROJ)
    assert trace.dtype == "float32" and trace.notes == ()
    assert trace["weights"].dtype == np.float32


def test_unknown_stage_lists_the_stages():
    raises(
        "stages",
        "'attention'",
        "scores",
        "weights",
        "head_outputs",
        stages={"weights", "attention"},
    )


@pytest.mark.parametrize(
    "heads,fragment", [([2], "head 2 is not 0..1"), ([-1], "head -1"), ([], "(none)")]
)
def test_bad_head_index(heads, fragment):
    raises("heads", fragment, heads=heads)


def test_bad_dtype_and_device():
    raises("dtype", "float32, float64", dtype="float16")
    raises("device", "cpu only", backend=Backend("numpy", "cuda:0"))
    raises("backend", "numpy, torch", backend=Backend("jax", "cpu"))


def test_torch_device_that_does_not_exist():
    pytest.importorskip("torch")
    raises("device", "'nowhere'", backend=Backend("torch", "nowhere"))


def test_missing_torch_gives_a_clear_error(monkeypatch):
    monkeypatch.setattr(backend_module, "torch_installed", lambda: False)
    error = raises(
        "backend", "not installed", "pip install torch", "numpy", backend=Backend("torch", "cpu")
    )
    assert "torch" in error.message
    assert available_backends() == [Backend("numpy", "cpu")]
    # numpy keeps working
    assert compute(projection_inputs(), PROJ).has("weights")


def test_settings_are_checked_before_arrays():
    """A bad setting is reported even when the arrays are also wrong for it: the setting first."""
    raises(
        "heads",
        "at least 1",
        inputs=projection_inputs(W_Q=np.zeros((4, 1))),
        config=PROJ.with_changes(heads=0),
    )


def _assert_redone_in_float64(trace, *names):
    assert trace.dtype == "float64" and "float64" in trace.notes[0]
    for name in names:
        assert trace[name].dtype == np.float64, name
        assert np.all(np.isfinite(trace[name])), name


def test_overflow_in_the_output_projection_alone_is_redone_in_float64():
    base = direct_inputs()  # small Q and K: the scores are fine in float32
    inputs = base.with_changes(V=np.full(base.V.shape, 1e30), W_O=np.full((4, 3), 1e30))
    trace = compute(inputs, DIRECT)
    _assert_redone_in_float64(trace, "weights", "head_outputs", "output")
    np.testing.assert_allclose(trace["output"], 4e60, rtol=1e-12)  # 4 columns of 1e30 x 1e30


def test_overflow_in_head_outputs_alone_is_redone_in_float64():
    # V = X W_V = 4 x 1e30 x 5e7 = 2e38 still fits float32, but two sigmoid weights near 1
    # make each head output ~4e38, beyond float32's 3.4e38.
    X = np.ones((2, 4)) * 1e30
    tiny = np.full((4, 4), 1e-30)
    inputs = AttentionInputs(X=X, W_Q=tiny, W_K=tiny, W_V=np.full((4, 4), 5e7))
    config = PROJ.with_changes(normalizer="sigmoid", use_output_projection=False)
    trace = compute(inputs, config, stages={"weights", "head_outputs"})
    _assert_redone_in_float64(trace, "weights", "head_outputs")
    expected = trace["weights"].sum(axis=-1, keepdims=True) * 2e38
    np.testing.assert_allclose(trace["head_outputs"], np.broadcast_to(expected, (2, 2, 2)))


def test_overflow_in_a_kept_projection_alone_is_redone_in_float64():
    tiny = np.full((4, 4), 1e-30)  # scores stay small; only V = X W_V overflows float32
    inputs = projection_inputs(
        X=np.full((3, 4), 1e30), W_Q=tiny, W_K=tiny, W_V=np.full((4, 4), 1e30)
    )
    trace = compute(inputs, PROJ, stages={"V", "weights"})
    _assert_redone_in_float64(trace, "V")
    np.testing.assert_allclose(trace["V"], 4e60, rtol=1e-12)


def test_missing_torch_in_a_packaged_build_says_the_build_has_none(monkeypatch):
    monkeypatch.setattr(backend_module, "torch_installed", lambda: False)
    monkeypatch.setattr(backend_module.sys, "frozen", True, raising=False)
    error = raises("backend", "packaged build has no torch", backend=Backend("torch", "cpu"))
    assert "--with-torch" in error.message
