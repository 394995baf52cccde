"""Attention sinks as an engine stage (gpt-oss): each head's sink logit (``inputs.sinks``)
joins its softmax rows. Checked against transformers' own ``eager_attention_forward`` of
gpt-oss (float64) on numpy and torch, float32 too; each row's weights plus ``sink_weight``
make 1; long sequences' previews and recomputed rows; explain and the walkthrough with the
trace's numbers; exports, save/load and resizing; refusals naming the field."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import attention_explorer as ae
from attention_explorer.core.numbers import format_number
from attention_explorer.core.stage_rules import caption, is_shown
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
from attention_explorer.session import SessionData
from attention_explorer.session.file_format import dumps_session, loads_session
from attention_explorer.session.resize import set_heads
from attention_explorer.walkthrough import variants
from attention_explorer.walkthrough.context import Context

torch = pytest.importorskip("torch")
BACKENDS = ["numpy", "torch"]
H, KV, DK, DM, N = 4, 2, 8, 16, 7
SINKS = np.array([0.5, -1.0, 2.5, 0.0])


def _inputs(rng, sinks=SINKS):
    return AttentionInputs(
        X=rng.normal(size=(N, DM)),
        W_Q=rng.normal(size=(DM, H * DK)) * 0.7,
        W_K=rng.normal(size=(DM, KV * DK)) * 0.7,
        W_V=rng.normal(size=(DM, KV * DK)),
        W_O=rng.normal(size=(H * DK, DM)),
        sinks=sinks,
    )


def _config(**more):
    settings = {"attention_sinks": True, **more}
    return AttentionConfig(
        mode="projection", heads=H, kv_heads=KV, d_model=DM, d_k=DK, mask="causal", **settings
    )


def reference(inputs: AttentionInputs, config: AttentionConfig):
    """Weights [h, n, n] and output [n, d] by transformers' gpt-oss ``eager_attention_forward``
    (the sink concatenated to the scores, softmaxed, dropped) on the same arrays."""
    from transformers.models.gpt_oss import modeling_gpt_oss as gpt_oss

    T = lambda a: torch.as_tensor(np.asarray(a), dtype=torch.float64)  # noqa: E731
    x = T(inputs.X)
    q = (x @ T(inputs.W_Q)).view(N, H, DK).transpose(0, 1)[None]  # [1, h, n, dk]
    k = (x @ T(inputs.W_K)).view(N, KV, DK).transpose(0, 1)[None]  # [1, kv, n, dk]
    v = (x @ T(inputs.W_V)).view(N, KV, DK).transpose(0, 1)[None]
    i, j = torch.arange(N)[:, None], torch.arange(N)[None, :]
    allowed = j <= i
    if config.window is not None:
        allowed &= (i - j) < config.window
    mask = torch.zeros(N, N, dtype=torch.float64).masked_fill(~allowed, float("-inf"))
    module = SimpleNamespace(sinks=T(inputs.sinks), num_key_value_groups=H // KV, training=False)
    out, weights = gpt_oss.eager_attention_forward(
        module, q, k, v, mask[None, None], config.scale_value()
    )
    return weights[0].numpy(), (out[0].reshape(N, -1) @ T(inputs.W_O)).numpy()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("settings", [{}, {"window": 3}, {"positional": "rope"}])
def test_the_sink_matches_transformers_eager_attention(backend, settings):
    rng = np.random.default_rng(7)
    inputs, config = _inputs(rng), _config(**settings)
    if settings.get("positional"):  # RoPE is checked elsewhere: compare with typed q, k
        trace = compute(inputs, config, Backend(backend), dtype="float64")
        plain = compute(inputs, config.with_changes(attention_sinks=False), dtype="float64")
        assert np.abs(trace["weights"] - plain["weights"]).max() > 1e-3
        return
    trace = compute(inputs, config, Backend(backend), dtype="float64")
    weights, output = reference(inputs, config)
    np.testing.assert_allclose(trace["weights"], weights, atol=1e-13, rtol=0)
    np.testing.assert_allclose(trace["output"], output, atol=1e-12, rtol=0)
    single = compute(inputs, config, Backend(backend), dtype="float32")
    np.testing.assert_allclose(single["weights"], weights, atol=1e-5, rtol=0)
    total = trace["weights"].sum(axis=-1) + trace["sink_weight"][..., 0]  # [h, n]
    np.testing.assert_allclose(total, 1.0, atol=1e-14)
    assert trace["sink_weight"].shape == (H, N, 1) and trace["sink_weight"].min() > 0
    # a larger logit takes more of every row of its head, and only of its head
    raised = compute(inputs.with_changes(sinks=SINKS + [0, 0, 1, 0]), config, dtype="float64")
    assert np.all(raised["sink_weight"][2] > trace["sink_weight"][2])
    np.testing.assert_allclose(raised["sink_weight"][1], trace["sink_weight"][1], rtol=1e-13)
    one = compute(inputs, config, Backend(backend), dtype="float64", heads=[2], stages=["weights"])
    np.testing.assert_allclose(one["weights"][0], weights[2], atol=1e-13, rtol=0)


def test_the_stage_exists_only_with_sinks_on():
    rng = np.random.default_rng(1)
    inputs = _inputs(rng)
    off = compute(inputs, _config(attention_sinks=False), dtype="float64")
    assert not off.has("sink_weight") and not is_shown("sink_weight", off)
    np.testing.assert_allclose(off["weights"].sum(axis=-1), 1.0, atol=1e-14)
    on = compute(inputs, _config(), dtype="float64")
    assert on.has("sink_weight") and is_shown("sink_weight", on)
    assert "-1…2.5" in caption("sink_weight", on) and "2.5" in caption("sink_weight", on)
    assert stage("sink_weight").kind == "unit" and stage("sink_weight").per_head


def test_a_fully_hidden_row_gives_its_weight_to_the_sink():
    q, k, v = np.zeros((1, 3, 2)), np.ones((1, 3, 2)), np.ones((1, 3, 2))  # scores 0
    config = AttentionConfig(
        mode="direct", heads=1, mask="custom", attention_sinks=True,
        custom_mask=((False, False, False), (True, False, False), (True, True, True)),
    )  # fmt: skip
    trace = compute(AttentionInputs(Q=q, K=k, V=v, sinks=np.array([0.0])), config, dtype="float64")
    assert np.all(trace["weights"][0, 0] == 0.0) and trace["sink_weight"][0, 0, 0] == 1.0
    assert np.isfinite(trace["head_outputs"]).all() and trace["sink_weight"][0, 1, 0] == 0.5


def test_a_long_sequence_previews_and_recomputes_the_weights_with_the_sink():
    n, limit = 600, 128
    rng = np.random.default_rng(4)
    q, k, v = (rng.normal(size=(2, n, 8)) * s for s in (2, 2, 1))  # [2, n, 8] each
    inputs = AttentionInputs(Q=q, K=k, V=v, sinks=np.array([1.0, 4.0]))
    config = AttentionConfig(mode="direct", heads=2, mask="causal", window=50, attention_sinks=True)
    full = compute(inputs, config, dtype="float64")
    previewed = compute(inputs, config, dtype="float64", preview=limit)
    whole = full.stage("weights", 1)  # [n, n]
    expected = shrink(whole, stage("weights").shrink, limit)
    assert np.allclose(previewed.preview("weights").image[1], expected.image, atol=1e-12)
    lazy = previewed.stage("weights", 1)
    assert isinstance(lazy, RecomputedStage)
    np.testing.assert_allclose(lazy[450], whole[450], rtol=0, atol=1e-14)
    np.testing.assert_allclose(previewed["sink_weight"], full["sink_weight"], atol=1e-14)


def test_explain_and_the_walkthrough_say_the_traces_numbers():
    trace = compute(_inputs(np.random.default_rng(2)), _config(), dtype="float64")
    head, i, j = 2, 5, 3
    sink = explain(trace, "sink_weight", head, i, 0)
    assert sink.steps[-1].result == pytest.approx(trace["sink_weight"][head, i, 0], abs=1e-15)
    parts = dict(sink.steps[2].terms)
    total = sink.steps[2].result
    assert parts["keys' sum"] + parts[next(k for k in parts if k.startswith("sink"))] == (
        pytest.approx(total, rel=1e-14)
    )
    weight = explain(trace, "weights", head, i, j)
    assert weight.steps[-1].result == pytest.approx(trace["weights"][head, i, j], abs=1e-15)
    assert "1 − sink weight" in weight.text() and "sink logit 2.5" in weight.text()
    step = variants.sink(Context(trace, head, i, j))
    assert variants.has_sinks(Context(trace, head, i, j))
    assert step.stage == "sink_weight" and step.editor == "sinks"
    text = step.plain()
    share = trace["sink_weight"][head, i, 0]
    assert f"The sink takes {format_number(share)}" in text
    assert format_number(1 - share) in text


def test_exports_save_load_and_resize_keep_the_sinks(tmp_path):
    inputs, config = _inputs(np.random.default_rng(3)), _config()
    data = SessionData(tokens=tuple(f"w{i}" for i in range(N)), config=config, inputs=inputs)
    trace = ae.compute(data, dtype="float64")
    csv = ae.export(trace, tmp_path / "sink.csv", stage="sink_weight", head=2)
    numbers = np.loadtxt(csv, delimiter=",", skiprows=1, usecols=range(1, 2))
    np.testing.assert_allclose(numbers, trace["sink_weight"][2, :, 0], atol=1e-4)
    ae.export(trace, tmp_path / "sink.png", stage="sink_weight", head=2)
    assert (tmp_path / "sink.png").stat().st_size > 0
    again = loads_session(dumps_session(data))
    assert again.config.attention_sinks and np.array_equal(again.inputs.sinks, SINKS)
    path = ae.save(data, tmp_path / "s.json")
    assert np.array_equal(ae.load(path).inputs.sinks, SINKS)
    grown = set_heads(data, 8)  # the four logits kept, new heads' sinks take ~nothing
    assert np.array_equal(grown.inputs.sinks[:4], SINKS) and grown.inputs.sinks.shape == (8,)
    assert ae.compute(grown, dtype="float64")["sink_weight"][4:].max() < 1e-6
    shrunk = set_heads(data, 2)
    assert np.array_equal(shrunk.inputs.sinks, SINKS[:2])


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        (dict(sinks=np.ones(3)), "inputs.sinks"),
        (dict(sinks=None), "inputs.sinks"),
        (dict(normalizer="sparsemax"), "attention_sinks"),
        (dict(attention_sinks="yes"), "attention_sinks"),
        (dict(sinks=np.array([0.0, np.nan, 0.0, 0.0])), "inputs.sinks"),
    ],
)
def test_bad_sinks_are_refused_naming_the_field(changes, field):
    inputs = _inputs(np.random.default_rng(5))
    if "sinks" in changes:
        inputs = inputs.with_changes(sinks=changes.pop("sinks"))
    with pytest.raises(AttentionInputError) as caught:
        compute(inputs, _config(**changes))
    assert caught.value.field == field


@pytest.mark.parametrize("backend", BACKENDS)
def test_rows_in_blocks_over_threads_give_the_same_sink_weights(backend):
    """A chunk above one block's size goes through its rows in blocks (on several threads
    on numpy): each block's sink weights land in their rows."""
    n, logits = 2200, np.array([0.5, 2.0])
    rng = np.random.default_rng(6)
    q, k, v = (rng.normal(size=(2, n, 8)) for _ in range(3))
    config = AttentionConfig(mode="direct", heads=2, mask="causal", attention_sinks=True)
    trace = compute(
        AttentionInputs(Q=q, K=k, V=v, sinks=logits),
        config,
        Backend(backend),
        dtype="float64",
        stages=["weights", "sink_weight"],
    )
    s = np.einsum("hnd,hmd->hnm", q, k) / np.sqrt(8)  # [2, n, n]
    s[:, np.triu(np.ones((n, n), bool), 1)] = -np.inf
    top = np.maximum(s.max(axis=-1, keepdims=True), logits[:, None, None])  # [2, n, 1]
    terms, share = np.exp(s - top), np.exp(logits[:, None, None] - top)
    total = terms.sum(axis=-1, keepdims=True) + share
    np.testing.assert_allclose(trace["weights"], terms / total, atol=1e-14, rtol=0)
    np.testing.assert_allclose(trace["sink_weight"], share / total, atol=1e-14, rtol=0)
