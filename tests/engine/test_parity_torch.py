"""The engine against torch's own attention: scaled_dot_product_attention and MultiheadAttention.

Random inputs; float32 within 1e-5 relative, float64 against a float64 torch reference
within 1e-12.
"""

from __future__ import annotations

import numpy as np
import pytest

from attention_explorer.engine import AttentionConfig, AttentionInputs, Backend, compute

torch = pytest.importorskip("torch")
F = torch.nn.functional

#: dtype -> (rtol, atol) for values of order 1.
TOL = {"float32": (1e-5, 1e-6), "float64": (1e-12, 1e-13)}
TORCH_DTYPE = {"float32": torch.float32, "float64": torch.float64}


def close(actual, expected, dtype: str) -> None:
    """assert_allclose with the tolerance for ``dtype``, scaled by the reference's magnitude."""
    rtol, atol = TOL[dtype]
    expected = np.asarray(expected, dtype=np.float64)
    scale = max(1.0, float(np.max(np.abs(expected))) if expected.size else 1.0)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol * scale)


def direct_case(rng, h=3, kv=None, n=5, m=None, dk=4, dv=3):
    """Random direct-mode arrays: Q [h,n,dk], K [kv,m,dk], V [kv,m,dv]."""
    kv = kv or h
    m = m or n
    return AttentionInputs(
        Q=rng.normal(size=(h, n, dk)),
        K=rng.normal(size=(kv, m, dk)),
        V=rng.normal(size=(kv, m, dv)),
    )


def t(array, dtype):
    """A numpy array as a torch tensor of ``dtype``."""
    return torch.as_tensor(np.asarray(array), dtype=TORCH_DTYPE[dtype])


def torch_weights(q, k, scale, allowed):
    """softmax(q k^T * scale) with hidden keys at -inf: q [h,n,d], k [h,m,d], allowed [n,m]."""
    scores = q @ k.transpose(-1, -2) * scale  # [h, n, m]
    return torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)  # [h, n, m]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("seed", range(4))
def test_sdpa_causal(seed, dtype):
    rng = np.random.default_rng(seed)
    h, n, dk, dv = 1 + seed, 2 + 3 * seed, 2 + seed, 1 + 2 * seed
    inputs = direct_case(rng, h=h, n=n, dk=dk, dv=dv)
    config = AttentionConfig(mode="direct", heads=h, mask="causal")
    trace = compute(inputs, config, dtype=dtype)
    q, k, v = (t(inputs.Q, dtype), t(inputs.K, dtype), t(inputs.V, dtype))
    expected = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # [h, n, dv]
    close(trace["head_outputs"], expected.numpy(), dtype)
    causal = torch.ones(n, n, dtype=torch.bool).tril()
    close(trace["weights"], torch_weights(q, k, dk**-0.5, causal).numpy(), dtype)
    assert trace["weights"].dtype == np.dtype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("seed", range(4))
def test_sdpa_boolean_mask_cross_attention(seed, dtype):
    rng = np.random.default_rng(100 + seed)
    h, n, m = 2, 3 + seed, 6 - seed
    inputs = direct_case(rng, h=h, n=n, m=m)
    allowed = rng.random((n, m)) < 0.6  # [n, m]
    allowed[:, 0] = True  # no fully masked row here; see the test below
    config = AttentionConfig(
        mode="direct",
        heads=h,
        attention="cross",
        mask="custom",
        custom_mask=tuple(tuple(bool(x) for x in row) for row in allowed),
    )
    trace = compute(inputs, config, dtype=dtype)
    q, k, v = (t(inputs.Q, dtype), t(inputs.K, dtype), t(inputs.V, dtype))
    mask = torch.as_tensor(allowed)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    close(trace["head_outputs"], expected.numpy(), dtype)
    close(trace["weights"], torch_weights(q, k, 4**-0.5, mask).numpy(), dtype)
    np.testing.assert_array_equal(trace["mask"], allowed)


@pytest.mark.parametrize(
    "scale,factor,temperature", [("none", 1.0, 1.0), ("custom", 0.3, 2.5), ("sqrt_dk", 1.0, 0.5)]
)
def test_sdpa_scale_and_temperature(scale, factor, temperature):
    rng = np.random.default_rng(7)
    inputs = direct_case(rng, h=2, n=4, dk=4)
    config = AttentionConfig(
        mode="direct", heads=2, scale=scale, scale_factor=factor, temperature=temperature
    )
    trace = compute(inputs, config, dtype="float64")
    base = {"none": 1.0, "custom": factor, "sqrt_dk": 0.5}[scale]
    q, k, v = (t(inputs.Q, "float64"), t(inputs.K, "float64"), t(inputs.V, "float64"))
    expected = F.scaled_dot_product_attention(q, k, v, scale=base / temperature)
    close(trace["head_outputs"], expected.numpy(), "float64")
    assert trace.scale == pytest.approx(base)


def test_sdpa_grouped_query_attention():
    rng = np.random.default_rng(3)
    inputs = direct_case(rng, h=6, kv=2, n=5)
    trace = compute(inputs, AttentionConfig(mode="direct", heads=6, mask="causal"), dtype="float64")
    q, k, v = (t(inputs.Q, "float64"), t(inputs.K, "float64"), t(inputs.V, "float64"))
    # torch's GQA: query head i uses key/value head i // (6 // 2).
    k_rep, v_rep = k.repeat_interleave(3, dim=0), v.repeat_interleave(3, dim=0)
    expected = F.scaled_dot_product_attention(q, k_rep, v_rep, is_causal=True)
    close(trace["head_outputs"], expected.numpy(), "float64")
    np.testing.assert_array_equal(trace["K"], k_rep.numpy())


def test_fully_masked_row_gives_zeros_like_sdpa():
    rng = np.random.default_rng(11)
    n = 4
    inputs = direct_case(rng, h=2, n=n)
    allowed = np.ones((n, n), dtype=bool)
    allowed[2] = False  # query 2 may see no key at all
    allowed[0, 3] = False
    config = AttentionConfig(
        mode="direct", heads=2, mask="custom", custom_mask=tuple(map(tuple, allowed.tolist()))
    )
    for backend in (Backend("numpy"), Backend("torch")):
        trace = compute(inputs, config, backend, dtype="float64")
        assert trace.fully_masked_rows == (2,)
        assert np.all(trace["weights"][:, 2] == 0.0)
        assert np.all(trace["head_outputs"][:, 2] == 0.0)
        assert np.all(np.isneginf(trace["masked"][:, 2]))
        assert np.all(np.isfinite(trace["weights"]))
        np.testing.assert_allclose(trace["weights"][:, [0, 1, 3]].sum(axis=-1), 1.0, rtol=1e-12)
    q, k, v = (t(inputs.Q, "float64"), t(inputs.K, "float64"), t(inputs.V, "float64"))
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=torch.as_tensor(allowed))
    expected = expected.numpy()
    if np.isnan(expected[:, 2]).any():  # pragma: no cover - older torch gave NaN here
        expected[:, 2] = 0.0
    close(trace["head_outputs"], expected, "float64")


def mha_case(rng, n, d_model, h, bias, m=None, dtype="float64"):
    """Random projection-mode inputs and an nn.MultiheadAttention holding the same weights."""
    m = m or n
    arrays = {
        "X": rng.normal(size=(n, d_model)),  # [n, d_model]
        "W_Q": rng.normal(size=(d_model, d_model)) / np.sqrt(d_model),  # [d_model, h*d_k]
        "W_K": rng.normal(size=(d_model, d_model)) / np.sqrt(d_model),
        "W_V": rng.normal(size=(d_model, d_model)) / np.sqrt(d_model),
        "W_O": rng.normal(size=(d_model, d_model)) / np.sqrt(d_model),  # [h*d_v, d_model]
    }
    if m != n:
        arrays["X_kv"] = rng.normal(size=(m, d_model))
    if bias:
        for name in ("b_Q", "b_K", "b_V", "b_O"):
            arrays[name] = rng.normal(size=d_model)
    mha = torch.nn.MultiheadAttention(
        d_model, h, bias=bias, batch_first=True, dtype=TORCH_DTYPE[dtype]
    )
    with torch.no_grad():
        # torch's Linear weight is [out, in], ours is [in, out]: transpose; q, k, v stacked.
        stacked = np.concatenate([arrays["W_Q"].T, arrays["W_K"].T, arrays["W_V"].T])
        mha.in_proj_weight.copy_(torch.as_tensor(stacked))  # [3*d_model, d_model]
        mha.out_proj.weight.copy_(torch.as_tensor(arrays["W_O"].T))
        if bias:
            mha.in_proj_bias.copy_(
                torch.as_tensor(np.concatenate([arrays["b_Q"], arrays["b_K"], arrays["b_V"]]))
            )
            mha.out_proj.bias.copy_(torch.as_tensor(arrays["b_O"]))
    return AttentionInputs(**arrays), mha


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mask", ["none", "causal", "padding"])
@pytest.mark.parametrize("bias", [False, True])
def test_multihead_attention(dtype, mask, bias):
    rng = np.random.default_rng([len(dtype), len(mask), int(bias)])
    n, d_model, h = 6, 8, 2
    inputs, mha = mha_case(rng, n, d_model, h, bias, dtype=dtype)
    config = AttentionConfig(
        mode="projection",
        heads=h,
        d_model=d_model,
        mask=mask,
        padded_keys=(1, 4) if mask == "padding" else (),
    )
    trace = compute(inputs, config, dtype=dtype)
    x = t(inputs.X, dtype)[None]  # [1, n, d_model]
    kwargs = {}
    if mask == "causal":
        # MHA's boolean masks mean "hidden" where True: the opposite of the engine's.
        kwargs = {"attn_mask": torch.ones(n, n, dtype=torch.bool).triu(1), "is_causal": True}
    elif mask == "padding":
        padding = torch.zeros(1, n, dtype=torch.bool)
        padding[0, [1, 4]] = True
        kwargs = {"key_padding_mask": padding}
    with torch.no_grad():
        out, weights = mha(x, x, x, need_weights=True, average_attn_weights=False, **kwargs)
    close(trace["output"], out[0].numpy(), dtype)  # [n, d_model]
    close(trace["weights"], weights[0].numpy(), dtype)  # [h, n, n]
    if mask == "padding":
        assert np.all(trace["weights"][:, :, [1, 4]] == 0.0)


def test_multihead_attention_cross():
    rng = np.random.default_rng(5)
    n, m, d_model, h = 3, 7, 12, 3
    inputs, mha = mha_case(rng, n, d_model, h, bias=True, m=m)
    config = AttentionConfig(mode="projection", heads=h, d_model=d_model, attention="cross")
    trace = compute(inputs, config, dtype="float64")
    x, x_kv = t(inputs.X, "float64")[None], t(inputs.X_kv, "float64")[None]
    with torch.no_grad():
        out, weights = mha(x, x_kv, x_kv, need_weights=True, average_attn_weights=False)
    assert trace["weights"].shape == (h, n, m)
    close(trace["output"], out[0].numpy(), "float64")
    close(trace["weights"], weights[0].numpy(), "float64")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("normalizer", ["softmax", "sparsemax", "sigmoid"])
@pytest.mark.parametrize("mode", ["direct", "projection"])
def test_torch_backend_equals_numpy_backend(dtype, normalizer, mode):
    rng = np.random.default_rng(42)
    if mode == "direct":
        inputs = direct_case(rng, h=4, kv=2, n=5)
        config = AttentionConfig(mode="direct", heads=4, normalizer=normalizer, mask="causal")
        inputs = inputs.with_changes(W_O=rng.normal(size=(12, 5)), b_O=rng.normal(size=5))
    else:
        inputs, _ = mha_case(rng, 5, 8, 2, bias=True)
        config = AttentionConfig(
            mode="projection",
            heads=2,
            d_model=8,
            normalizer=normalizer,
            positional="sinusoidal",
            mask="padding",
            padded_keys=(0,),
        )
    a = compute(inputs, config, Backend("numpy"), dtype=dtype)
    b = compute(inputs, config, Backend("torch", "cpu"), dtype=dtype)
    assert b.backend == Backend("torch", "cpu")
    assert a.dtype == b.dtype == dtype
    for name, value in a.stages.items():
        other = b.stages[name]
        assert (value is None) == (other is None), name
        if value is not None:
            assert isinstance(other, np.ndarray), name
            assert other.shape == value.shape, name
            if name in ("masked",):
                np.testing.assert_array_equal(np.isneginf(other), np.isneginf(value))
                finite = np.isfinite(value)
                close(other[finite], value[finite], dtype)
            else:
                close(other, value, dtype)
