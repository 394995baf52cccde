"""Long-context RoPE in sessions: ``rope_scaling`` dynamic, yarn or longrope with their
settings in ``rope_parameters`` turn q and k exactly as the model run's RoPE plan does (its
frequencies at the text's length, yarn's and longrope's attention factor on cos and sin; that
plan is checked against transformers' own rope functions in tests/models/test_long_rope.py),
save and load, are refused by name when incomplete, and a long-context checkpoint's layer is
reproduced by a projection session through the bridge."""

from __future__ import annotations

import numpy as np
import pytest

from attention_explorer.engine import (
    AttentionConfig,
    AttentionInputError,
    AttentionInputs,
    Backend,
    compute,
)
from attention_explorer.engine.explain import explain
from attention_explorer.kernels import numpy_ops
from attention_explorer.pretrained.rope_plan import RotaryPlan, rotate_part
from attention_explorer.session.document import SessionData
from attention_explorer.session.file_format import dumps_session, loads_session

SHORT = (1.0, 1.2, 1.5, 2.0)
LONG = (1.0, 2.0, 4.0, 8.0)
CASES = {
    "dynamic": ("dynamic", 4.0, dict(max_position_embeddings=8)),
    "yarn": ("yarn", 4.0, dict(max_position_embeddings=64, original_max_position_embeddings=8)),
    "yarn-mscale": ("yarn", 8.0, dict(
        max_position_embeddings=64, original_max_position_embeddings=8, beta_fast=16.0,
        beta_slow=2.0, mscale=0.8, mscale_all_dim=0.5, truncate=False)),
    "longrope": ("longrope", 8.0, dict(
        max_position_embeddings=64, original_max_position_embeddings=8, short_factor=SHORT,
        long_factor=LONG)),
    "llama3-own-factors": ("llama3", 8.0, dict(
        low_freq_factor=2.0, high_freq_factor=8.0, original_max_position_embeddings=16)),
}  # fmt: skip


def _config(case: str, n: int, **more) -> AttentionConfig:
    kind, factor, params = CASES[case]
    return AttentionConfig(
        mode="direct", heads=2, kv_heads=1, d_k=8, positional="rope", rope_theta=500.0,
        rope_scaling=kind, rope_factor=factor, rope_parameters=tuple(sorted(params.items())),
        **more,
    )  # fmt: skip


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("n", [6, 12])  # within and past the original context (8)
@pytest.mark.parametrize("case", list(CASES))
def test_the_engine_turns_q_and_k_as_the_model_runs_rope_plan(case, n, backend):
    if backend == "torch":
        pytest.importorskip("torch")
    rng = np.random.default_rng(n)
    inputs = AttentionInputs(
        Q=rng.normal(size=(2, n, 8)), K=rng.normal(size=(1, n, 8)), V=rng.normal(size=(1, n, 8))
    )
    config = _config(case, n)
    trace = compute(inputs, config, Backend(backend), dtype="float64")
    plan = RotaryPlan(500.0, config.rope_scaling_record(), 8, 8)
    cos, sin = plan.cos_sin(numpy_ops, n)  # [n, 8] each, times the attention factor
    expected = rotate_part(numpy_ops, inputs.Q, cos, sin)  # [2, n, 8]
    assert np.abs(trace.stages["Q_rot"] - expected).max() < 1e-12
    plain = compute(inputs, config.with_changes(rope_scaling="default", rope_parameters=()))
    moved = np.abs(plain.stages["Q_rot"] - expected).max()
    if case == "dynamic" and n <= 8:  # within the context dynamic changes nothing
        assert moved < 1e-6
    else:
        assert moved > 1e-3  # the scaling matters
    cell = explain(trace, "Q_rot", 1, n - 1, 0)
    assert cell.steps[-1].result == pytest.approx(trace.stage("Q_rot", 1)[n - 1, 0])
    if case.startswith(("yarn", "longrope")):
        assert "attention factor" in cell.text()


def test_a_session_with_long_context_rope_saves_and_loads():
    rng = np.random.default_rng(0)
    config = _config("longrope", 5, d_model=16)
    config = config.with_changes(mode="projection", kv_heads=None, heads=2, d_k=8)
    inputs = AttentionInputs(
        X=rng.normal(size=(5, 16)), W_Q=rng.normal(size=(16, 16)),
        W_K=rng.normal(size=(16, 16)), W_V=rng.normal(size=(16, 16)),
    )  # fmt: skip
    data = SessionData(tokens=tuple("abcde"), config=config, inputs=inputs)
    text = dumps_session(data)
    assert '"rope_parameters"' in text and '"short_factor"' in text
    again = loads_session(text)
    assert again.config == config


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ((), "max_position_embeddings"),  # yarn without the model's context
        ((("nonsense", 1.0),), "rope_parameters"),
        ((("max_position_embeddings", 64), ("beta_fast", -1.0)), "beta_fast"),
    ],
)
def test_incomplete_or_unknown_settings_are_refused_by_name(params, named):
    config = AttentionConfig(
        heads=1, d_k=4, positional="rope", rope_scaling="yarn", rope_factor=2.0,
        rope_parameters=params,
    )  # fmt: skip
    with pytest.raises(AttentionInputError, match=named):
        config.validate()


def test_a_long_context_layer_is_reproduced_by_a_projection_session(tmp_path):
    pytest.importorskip("transformers")
    from attention_explorer.pretrained import model_run
    from attention_explorer.pretrained.forward import attention_input, run_layers, scale_setting
    from attention_explorer.pretrained.layer_parts import layer_view
    from attention_explorer.pretrained.open_model import load_model
    from attention_explorer.pretrained.rotary import rotary_parts
    from tests.models.test_long_rope import LONGROPE_8, TEXT, _checkpoint

    _checkpoint(tmp_path, LONGROPE_8)  # original context 8, the text is longer
    run = model_run(tmp_path, TEXT, dtype="float64")
    loaded = load_model(tmp_path)
    w, ids = loaded.weights, loaded.tokenize(TEXT)
    assert len(ids.ids) > 8
    for layer in (0, 1):
        h, _ = run_layers(w, ids.ids, ids.type_ids, layer, None, False)
        x = attention_input(w, layer, h)
        scale = scale_setting(w.scales[layer], w.d_k)
        config, inputs = rotary_parts(layer_view(w, layer), layer, x, scale)
        assert config.mode == "projection" and config.rope_scaling == "longrope"
        trace = compute(inputs, config, dtype="float64")
        assert np.abs(trace.stages["weights"] - run.attentions[layer]).max() < 1e-12
