"""The newer attention stages against references written from transformers' formulas, on
numpy and torch: QK-norm (Qwen3's x̂·w per head, Gemma 3's x̂·(1 + w), OLMo 2's over every
head), the soft cap (Gemma 2's cap·tanh(s/cap) before the mask), partial rotary (GPT-NeoX's
rotate-half on the first dims) and the sliding window; long sequences' previews and recomputed
rows read the capped scores; explain writes out each cell with the numbers the trace holds."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from attention_explorer.core.stages import stage
from attention_explorer.display import shrink
from attention_explorer.engine import (
    AttentionConfig,
    AttentionInputError,
    AttentionInputs,
    Backend,
    compute,
)
from attention_explorer.engine.explain import explain
from attention_explorer.engine.recompute import RecomputedStage

torch = pytest.importorskip("torch")
BACKENDS = ["numpy", "torch"]


def _case(rng, h=4, kv=2, n=7, dk=8, dm=16, width="head"):
    q_len, k_len = (dk, dk) if width == "head" else (h * dk, kv * dk)
    return AttentionInputs(
        X=rng.normal(size=(n, dm)),
        W_Q=rng.normal(size=(dm, h * dk)) * 0.7,
        W_K=rng.normal(size=(dm, kv * dk)) * 0.7,
        W_V=rng.normal(size=(dm, kv * dk)),
        W_O=rng.normal(size=(h * dk, dm)),
        q_norm=rng.normal(size=q_len) + 1.0,
        k_norm=rng.normal(size=k_len) + 1.0,
    )


def _rms(x, w, eps):  # transformers' RMSNorm on the last axis (float64 here)
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def _rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def reference(inputs: AttentionInputs, config: AttentionConfig):
    """Weights [h, n, n] and output [n, d] the way transformers' Qwen3 / Gemma / OLMo 2 /
    GPT-NeoX attention computes them (eager, float64), from the same arrays."""
    T = lambda a: torch.as_tensor(np.asarray(a), dtype=torch.float64)  # noqa: E731
    h, kv, dk = config.heads, config.n_kv_heads, config.head_dim
    x = T(inputs.X)
    n = x.shape[0]
    q, k, v = x @ T(inputs.W_Q), x @ T(inputs.W_K), x @ T(inputs.W_V)  # [n, h*dk] ...
    if config.qk_norm != "none":
        plus = 1.0 if config.qk_norm == "rms_one_plus" else 0.0
        wq, wk = T(inputs.q_norm) + plus, T(inputs.k_norm) + plus
        if config.qk_norm_width == "all":  # OLMo 2: before the split into heads
            q, k = _rms(q, wq, config.qk_norm_eps), _rms(k, wk, config.qk_norm_eps)
    q = q.view(n, h, dk).transpose(0, 1)  # [h, n, dk]
    k = k.view(n, kv, dk).transpose(0, 1)  # [kv, n, dk]
    v = v.view(n, kv, -1).transpose(0, 1)
    if config.qk_norm != "none" and config.qk_norm_width == "head":
        q, k = _rms(q, wq, config.qk_norm_eps), _rms(k, wk, config.qk_norm_eps)
    if config.positional == "rope":
        r = int(dk * config.rotary_fraction)
        inv = 1.0 / (config.rope_theta ** (torch.arange(0, r, 2, dtype=torch.float64) / r))
        freqs = torch.outer(torch.arange(n, dtype=torch.float64), inv)
        emb = torch.cat((freqs, freqs), dim=-1)  # [n, r]
        cos, sin = emb.cos(), emb.sin()

        def turn(t):  # GPT-NeoX: rotate the first r dims, pass the rest
            rot, rest = t[..., :r], t[..., r:]
            return torch.cat((rot * cos + _rotate_half(rot) * sin, rest), dim=-1)

        q, k = turn(q), turn(k)
    group = h // kv
    k, v = k.repeat_interleave(group, 0), v.repeat_interleave(group, 0)
    scores = q @ k.transpose(-1, -2) * config.scale_value()  # [h, n, n]
    if config.softcap is not None:
        scores = torch.tanh(scores / config.softcap) * config.softcap
    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    allowed = j <= i
    if config.window is not None:
        allowed &= (i - j) < config.window
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    out = (weights @ v).transpose(0, 1).reshape(n, -1) @ T(inputs.W_O)
    return weights.numpy(), out.numpy()


CASES = {
    "qwen3 qk-norm + rope": dict(qk_norm="rms", positional="rope", rope_theta=100.0),
    "gemma3 1+w": dict(qk_norm="rms_one_plus", qk_norm_eps=1e-6, positional="rope"),
    "olmo2 over all heads": dict(qk_norm="rms", qk_norm_width="all", positional="rope"),
    "gemma2 soft cap + window": dict(softcap=1.5, window=3, positional="rope"),
    "neox partial rotary": dict(positional="rope", rotary_fraction=0.25, rope_theta=50.0),
    "every variant": dict(
        qk_norm="rms", softcap=2.0, window=4, positional="rope", rotary_fraction=0.5
    ),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", list(CASES))
def test_each_variant_matches_transformers_formulas(case, backend):
    settings = CASES[case]
    rng = np.random.default_rng(len(case))
    inputs = _case(rng, width=settings.get("qk_norm_width", "head"))
    config = AttentionConfig(
        mode="projection", heads=4, kv_heads=2, d_model=16, d_k=8, mask="causal", **settings
    )
    trace = compute(inputs, config, Backend(backend), dtype="float64")
    weights, output = reference(inputs, config)
    assert np.abs(trace.stages["weights"] - weights).max() < 1e-12
    assert np.abs(trace.stages["output"] - output).max() < 1e-11
    single = compute(inputs, config, Backend(backend), dtype="float32")  # float32 agrees too
    assert np.abs(single.stages["weights"] - weights).max() < 1e-5
    # the variant changes the numbers (the test is not vacuous)
    plain = config.with_changes(qk_norm="none", softcap=None, window=None, rotary_fraction=1.0)
    moved = compute(inputs, plain, dtype="float64")
    assert np.abs(moved.stages["weights"] - weights).max() > 1e-3
    # one head alone computes the same numbers (every head's width under "all")
    one = compute(inputs, config, Backend(backend), dtype="float64", heads=[3], stages=["weights"])
    assert np.abs(one.stages["weights"][0] - weights[3]).max() < 1e-12


def test_the_stages_exist_only_with_their_setting():
    rng = np.random.default_rng(1)
    inputs = _case(rng)
    base = AttentionConfig(mode="projection", heads=4, kv_heads=2, d_model=16, d_k=8)
    trace = compute(inputs, base, dtype="float64")
    assert not any(trace.has(s) for s in ("Q_normed", "K_normed", "capped"))
    on = compute(inputs, base.with_changes(qk_norm="rms", softcap=3.0), dtype="float64")
    assert all(on.has(s) for s in ("Q_normed", "K_normed", "capped"))
    capped = np.asarray(on.stages["capped"])
    assert np.abs(capped).max() < 3.0
    assert np.allclose(capped, 3.0 * np.tanh(np.asarray(on.stages["scaled"]) / 3.0), atol=1e-14)


def test_direct_mode_norms_the_typed_q_and_k():
    rng = np.random.default_rng(2)
    Q, K, V = rng.normal(size=(2, 5, 4)), rng.normal(size=(1, 5, 4)), rng.normal(size=(1, 5, 4))
    w = np.array([0.5, 1.0, 2.0, -1.0])
    inputs = AttentionInputs(Q=Q, K=K, V=V, q_norm=w, k_norm=w[::-1].copy())
    config = AttentionConfig(mode="direct", heads=2, kv_heads=1, qk_norm="rms")
    trace = compute(inputs, config, dtype="float64")
    expected = Q / np.sqrt((Q * Q).mean(-1, keepdims=True) + 1e-6) * w
    assert np.abs(trace.stages["Q_normed"] - expected).max() < 1e-14


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        (dict(qk_norm="rms", q_norm=np.ones(3)), "inputs.q_norm"),
        (dict(qk_norm="rms", k_norm=None), "inputs.k_norm"),
        (dict(qk_norm="l2"), "qk_norm"),
        (dict(softcap=0.0), "softcap"),
        (dict(softcap=float("nan")), "softcap"),
        (dict(rotary_fraction=1.5, positional="rope"), "rotary_fraction"),
        (dict(rotary_fraction=0.1, positional="rope"), "rotary_fraction"),  # 0 dims of 8
        (dict(window=0), "window"),
    ],
)
def test_bad_settings_are_refused_naming_the_field(changes, field):
    rng = np.random.default_rng(3)
    inputs = _case(rng)
    arrays = {k: changes.pop(k) for k in ("q_norm", "k_norm") if k in changes}
    inputs = inputs.with_changes(**arrays)
    config = AttentionConfig(mode="projection", heads=4, kv_heads=2, d_model=16, d_k=8, **changes)
    with pytest.raises(AttentionInputError) as caught:
        compute(inputs, config)
    assert caught.value.field == field


def test_a_long_capped_sequence_previews_and_recomputes_the_capped_scores():
    n, limit = 600, 128
    rng = np.random.default_rng(4)
    q, k, v = (rng.normal(size=(2, n, 8)) * s for s in (2, 2, 1))  # [2, n, 8] each
    inputs = AttentionInputs(Q=q, K=k, V=v)
    config = AttentionConfig(mode="direct", heads=2, mask="causal", softcap=1.0, window=100)
    full = compute(inputs, config, dtype="float64")
    previewed = compute(inputs, config, dtype="float64", preview=limit)
    for name in ("scaled", "capped", "masked", "weights"):
        whole = full.stage(name, 1)  # [n, n]
        expected = shrink(whole, stage(name).shrink, limit)
        got = previewed.preview(name)
        assert got is not None, name
        finite = np.isfinite(expected.image)
        assert np.allclose(got.image[1][finite], expected.image[finite], atol=1e-12), name
        lazy = previewed.stage(name, 1)
        assert isinstance(lazy, RecomputedStage)
        np.testing.assert_allclose(lazy[450], whole[450], rtol=1e-12, atol=1e-12, err_msg=name)


def test_explain_writes_each_new_stage_with_the_traces_numbers():
    rng = np.random.default_rng(5)
    inputs = _case(rng)
    config = AttentionConfig(
        mode="projection", heads=4, kv_heads=2, d_model=16, d_k=8, mask="causal",
        qk_norm="rms_one_plus", softcap=1.0, window=2, positional="rope", rotary_fraction=0.5,
    )  # fmt: skip
    trace = compute(inputs, config, dtype="float64")
    normed = explain(trace, "K_normed", head=3, i=4, j=2)
    assert normed.steps[-1].result == pytest.approx(trace.stage("K_normed", 3)[4, 2])
    assert "(1 + k_norm[2])" in normed.text()
    turned = explain(trace, "Q_rot", head=0, i=3, j=6)  # past the 4 turned dims
    assert "does not turn" in turned.text()
    assert turned.steps[0].result == trace.stage("Q_normed", 0)[3, 6]
    capped = explain(trace, "capped", head=1, i=5, j=4)
    assert capped.steps[-1].result == pytest.approx(1.0 * np.tanh(trace.stage("scaled", 1)[5, 4]))
    assert "1 · tanh(" in capped.text()
    hidden = explain(trace, "masked", head=1, i=5, j=1)
    assert "sliding window 2" in hidden.text() and "4 positions before" in hidden.text()


def test_a_session_with_every_variant_saves_and_loads():
    from attention_explorer.session.document import SessionData
    from attention_explorer.session.file_format import dumps_session, loads_session

    rng = np.random.default_rng(6)
    inputs = _case(rng, width="all")
    config = AttentionConfig(
        mode="projection", heads=4, kv_heads=2, d_model=16, d_k=8, mask="causal",
        qk_norm="rms", qk_norm_width="all", qk_norm_eps=1e-5, softcap=30.0, window=3,
        positional="rope", rotary_fraction=0.5,
    )  # fmt: skip
    data = SessionData(tokens=tuple(f"t{i}" for i in range(7)), config=config, inputs=inputs)
    again = loads_session(dumps_session(data))
    assert again.config == config
    assert np.array_equal(again.inputs.q_norm, inputs.q_norm)
    assert dataclasses.replace(again, name=data.name).inputs == inputs


def test_the_new_stages_export_as_pictures_and_numbers(tmp_path):
    import csv

    import attention_explorer as ae

    rng = np.random.default_rng(7)
    inputs = _case(rng)
    config = AttentionConfig(
        mode="projection", heads=4, kv_heads=2, d_model=16, d_k=8, mask="causal",
        qk_norm="rms", softcap=1.0, window=3,
    )  # fmt: skip
    trace = compute(inputs, config, dtype="float64")
    for name in ("Q_normed", "K_normed", "capped"):
        picture = ae.export(trace, tmp_path / f"{name}.png", stage=name, head=2)
        assert picture.stat().st_size > 1000
        table = ae.export(trace, tmp_path / f"{name}.csv", stage=name, head=2)
        rows = list(csv.reader(table.open(encoding="utf-8")))[1:]
        numbers = np.array([[float(x) for x in row[1:]] for row in rows])
        assert np.allclose(numbers, trace.stage(name, 2), rtol=1e-6, atol=1e-7)
