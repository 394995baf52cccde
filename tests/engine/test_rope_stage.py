"""RoPE as a stage of the engine: parity with transformers' Llama attention, the relative-
position property, and the session format.

The reference is transformers' own ``LlamaAttention`` (eager, float64), fed the cos and sin
of its own ``LlamaRotaryEmbedding`` (which computes the angles in float32: at position p they
differ from the engine's float64 angles by up to about p * 6e-8 rad, far under the bound).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from attention_explorer.engine import AttentionConfig
from attention_explorer.engine.compute import compute
from attention_explorer.engine.config import RopeScaling, inverse_frequencies
from attention_explorer.engine.engine_errors import AttentionInputError
from attention_explorer.engine.explain import explain
from attention_explorer.engine.inputs import AttentionInputs
from attention_explorer.kernels import numpy_ops
from attention_explorer.session import loads_session
from attention_explorer.session.file_format import dumps_session


def apply_rope(x, theta, scaling=None):
    """``x [..., n, d_k]`` rotated by positions 0..n-1 with numpy's kernel."""
    inv_freq = inverse_frequencies(x.shape[-1], theta, scaling)  # [d_k/2]
    cos, sin = numpy_ops.rotation_tables(np.arange(x.shape[-2]), inv_freq)  # [n, d_k]
    return numpy_ops.rotate(x, cos, sin)


torch = pytest.importorskip("torch")
llama = pytest.importorskip("transformers.models.llama.modeling_llama")
LlamaConfig = pytest.importorskip("transformers").LlamaConfig

N, D_MODEL, HEADS, D_K = 7, 16, 2, 8
#: the bound of the parity tests (transformers' eager softmax runs in float32)
BOUND = 1e-6


def _llama(heads: int, kv_heads: int, theta: float):
    """A float64 LlamaAttention layer (eager, no biases) and its rotary embedding."""
    config = LlamaConfig(
        hidden_size=D_MODEL,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        head_dim=D_K,
        rope_theta=theta,
        max_position_embeddings=64,
        attention_bias=False,
    )
    config._attn_implementation = "eager"
    layer = llama.LlamaAttention(config, layer_idx=0).double().eval()
    rotary = llama.LlamaRotaryEmbedding(config)
    return layer, rotary


def _causal(n: int):
    """The additive causal mask transformers' eager attention adds: [1, 1, n, n]."""
    upper = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
    return torch.zeros(n, n, dtype=torch.float64).masked_fill(upper, float("-inf"))[None, None]


def _weights(rng, kv_heads: int):
    W = {
        "W_Q": rng.normal(size=(D_MODEL, HEADS * D_K)),
        "W_K": rng.normal(size=(D_MODEL, kv_heads * D_K)),
        "W_V": rng.normal(size=(D_MODEL, kv_heads * D_K)),
        "W_O": rng.normal(size=(HEADS * D_K, D_MODEL)),
    }
    return {k: v * 0.3 for k, v in W.items()}  # [rows, cols] each


def _reference(layer, rotary, X, W):
    """transformers' rotated q, k [1, h, n, d_k], weights [1, h, n, n] and output [1, n, d]."""
    with torch.no_grad():
        for name, proj in (("W_Q", "q_proj"), ("W_K", "k_proj"), ("W_V", "v_proj")):
            getattr(layer, proj).weight.copy_(torch.from_numpy(W[name].T))
        layer.o_proj.weight.copy_(torch.from_numpy(W["W_O"].T))
        hidden = torch.from_numpy(X)[None]  # [1, n, d]
        positions = torch.arange(X.shape[0])[None]  # [1, n]
        cos, sin = rotary(hidden, positions)  # [1, n, d_k] each (float32 angles)
        cos, sin = cos.double(), sin.double()
        q = (hidden @ layer.q_proj.weight.T).view(1, X.shape[0], -1, D_K).transpose(1, 2)
        k = (hidden @ layer.k_proj.weight.T).view(1, X.shape[0], -1, D_K).transpose(1, 2)
        q_rot, k_rot = llama.apply_rotary_pos_emb(q, k, cos, sin)
        out, weights = layer(hidden, (cos, sin), _causal(X.shape[0]))
    return q_rot.numpy()[0], k_rot.numpy()[0], weights.numpy()[0], out.numpy()[0]


def _gap(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))))


@pytest.mark.parametrize("kv_heads", [2, 1])
def test_projection_mode_matches_llama_attention(kv_heads):
    rng = np.random.default_rng(kv_heads)
    X, W = rng.normal(size=(N, D_MODEL)), _weights(rng, kv_heads)
    layer, rotary = _llama(HEADS, kv_heads, theta=500.0)
    q_rot, k_rot, weights, out = _reference(layer, rotary, X, W)
    config = AttentionConfig(
        mode="projection", heads=HEADS, d_model=D_MODEL, d_k=D_K, kv_heads=kv_heads,
        mask="causal", positional="rope", rope_theta=500.0,
    )  # fmt: skip
    trace = compute(AttentionInputs(X=X, **W), config, dtype="float64")
    gaps = {
        "Q_rot": _gap(trace["Q_rot"], q_rot),
        "K_rot": _gap(trace["K_rot"], k_rot[[config.kv_head_of(h) for h in range(HEADS)]]),
        "weights": _gap(trace["weights"], weights),
        "output": _gap(trace["output"], out),
    }
    assert max(gaps.values()) <= BOUND, gaps
    # the unrotated Q is X W_Q, split per head, and differs from the rotated one past row 0
    np.testing.assert_allclose(trace["Q"][0], X @ W["W_Q"][:, :D_K], atol=1e-12)
    assert _gap(trace["Q"][:, 1:], trace["Q_rot"][:, 1:]) > 1e-3
    np.testing.assert_allclose(trace["Q_rot"][:, 0], trace["Q"][:, 0], atol=1e-12)


def test_direct_mode_matches_llama_rotation_and_weights():
    rng = np.random.default_rng(7)
    Q, K, V = (rng.normal(size=(HEADS, N, D_K)) for _ in range(3))  # [h, n, d_k]
    layer, rotary = _llama(HEADS, HEADS, theta=10000.0)
    cos, sin = rotary(torch.zeros(1, N, D_MODEL), torch.arange(N)[None])
    cos, sin = cos.double(), sin.double()
    q_rot, k_rot = llama.apply_rotary_pos_emb(
        torch.from_numpy(Q)[None], torch.from_numpy(K)[None], cos, sin
    )
    ref_out, ref_weights = llama.eager_attention_forward(
        layer, q_rot, k_rot, torch.from_numpy(V)[None], _causal(N), scaling=D_K**-0.5
    )
    config = AttentionConfig(heads=HEADS, d_model=D_K * HEADS, mask="causal", positional="rope")
    trace = compute(AttentionInputs(Q=Q, K=K, V=V), config, dtype="float64")
    gaps = {
        "Q_rot": _gap(trace["Q_rot"], q_rot[0]),
        "K_rot": _gap(trace["K_rot"], k_rot[0]),
        "weights": _gap(trace["weights"], ref_weights[0]),
        "head_outputs": _gap(trace["head_outputs"], ref_out[0].transpose(0, 1)),
    }
    assert max(gaps.values()) <= BOUND, gaps
    np.testing.assert_array_equal(trace["Q"], Q)  # the typed Q is kept as typed


def _direct(offset: int, positional: str = "rope"):
    rng = np.random.default_rng(3)
    Q, K, V = (rng.normal(size=(HEADS, N, D_K)) for _ in range(3))
    config = AttentionConfig(heads=HEADS, d_model=16, positional=positional, position_offset=offset)
    return compute(AttentionInputs(Q=Q, K=K, V=V), config, dtype="float64")


@pytest.mark.parametrize("offset", [1, 5, 1000])
def test_shifting_every_position_keeps_rope_scores(offset):
    base, shifted = _direct(0), _direct(offset)
    assert _gap(base["Q_rot"], shifted["Q_rot"]) > 1e-3  # the vectors turn further ...
    np.testing.assert_allclose(shifted["scores"], base["scores"], atol=1e-9)  # ... together


def test_shifting_sinusoidal_positions_changes_the_scores():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(N, D_MODEL))
    W = _weights(rng, HEADS)

    def scores(positional, offset):
        config = AttentionConfig(
            mode="projection", heads=HEADS, d_model=D_MODEL, positional=positional,
            position_offset=offset,
        )  # fmt: skip
        return compute(AttentionInputs(X=X, **W), config, dtype="float64")["scores"]

    assert _gap(scores("sinusoidal", 0), scores("sinusoidal", 5)) > 1e-2
    np.testing.assert_allclose(scores("rope", 5), scores("rope", 0), atol=1e-9)


def test_rotated_stages_are_only_in_rope_traces():
    plain = _direct(0, positional="none")
    assert not plain.has("Q_rot") and not plain.has("K_rot")
    rope = _direct(0)
    assert rope.has("Q_rot") and rope.has("K_rot")
    assert not rope.has("positions")  # RoPE adds nothing to X


def test_explain_shows_the_angle_with_its_cos_and_sin():
    trace = _direct(2)
    i, j = 3, D_K // 2 + 1  # the second half of pair 1
    steps = explain(trace, "K_rot", 1, i, j).steps
    freq = 10000.0 ** (-2 / D_K)
    angle = (2 + i) * freq
    assert steps[0].result == pytest.approx(angle)
    assert dict(steps[1].terms) == pytest.approx(
        {"cos(angle)": np.cos(angle), "sin(angle)": np.sin(angle)}
    )
    K = trace["K"][1, i]
    expected = K[j] * np.cos(angle) + K[1] * np.sin(angle)
    assert steps[2].result == pytest.approx(expected)
    assert sum(v for _, v in steps[2].terms) == pytest.approx(expected)
    assert "K[5] × cos + K[1] × sin" in steps[2].formula
    # the scores read the rotated vectors
    score = explain(trace, "scores", 0, 2, 1)
    assert score.value == pytest.approx(float(trace["Q_rot"][0, 2] @ trace["K_rot"][0, 1]))


@pytest.mark.parametrize("kind", ["linear", "llama3"])
def test_rope_matches_the_pure_function_with_scaling(kind):
    rng = np.random.default_rng(5)
    Q, K, V = (rng.normal(size=(1, N, D_K)) for _ in range(3))
    config = AttentionConfig(
        d_model=D_K, positional="rope", rope_theta=500000.0, rope_scaling=kind, rope_factor=8.0
    )
    trace = compute(AttentionInputs(Q=Q, K=K, V=V), config, dtype="float64")
    scaling = RopeScaling(kind, factor=8.0)  # llama3: Llama 3.1's low/high/original defaults
    expected = apply_rope(Q, theta=500000.0, scaling=scaling)
    np.testing.assert_allclose(trace["Q_rot"], expected)
    assert _gap(expected, apply_rope(Q, theta=500000.0)) > 1e-6  # the scaling matters


@pytest.mark.parametrize(
    "changes,field",
    [
        ({"d_k": 3}, "d_k"),
        ({"rope_theta": 0.0}, "rope_theta"),
        ({"rope_theta": float("nan")}, "rope_theta"),
        ({"rope_scaling": "yarn"}, "rope_scaling"),
        ({"rope_factor": -1.0}, "rope_factor"),
        ({"position_offset": -1}, "position_offset"),
    ],
)
def test_bad_rope_settings_are_named(changes, field):
    config = AttentionConfig(d_model=8, positional="rope", **changes)
    with pytest.raises(AttentionInputError) as info:
        config.validate()
    assert info.value.field == field


def _doc(**config) -> dict:
    rng = np.random.default_rng(0)
    return {
        "format": "attention-explorer-session",
        "version": 1,
        "tokens": list("abcd"),
        "config": {"heads": 2, "d_model": 8, **config},
        "inputs": {
            "mode": "direct",
            **{name: rng.normal(size=(2, 4, 4)).round(3).tolist() for name in "QKV"},
        },
    }


def test_session_files_keep_the_rope_settings():
    doc = _doc(positional="rope", rope_theta=500, rope_scaling="linear", rope_factor=2)
    data = loads_session(json.dumps(doc))
    config = data.config
    assert (config.positional, config.rope_theta, config.rope_scaling) == ("rope", 500.0, "linear")
    assert isinstance(config.rope_theta, float) and config.rope_factor == 2.0
    again = loads_session(dumps_session(data))
    assert again.config == config
    saved = json.loads(dumps_session(data))["config"]
    assert saved["rope_theta"] == 500.0 and saved["positional"] == "rope"


def test_old_files_without_rope_settings_load_with_the_defaults():
    config = loads_session(json.dumps(_doc())).config
    assert (config.positional, config.rope_theta, config.position_offset) == ("none", 10000.0, 0)


@pytest.mark.parametrize("bad", [{"rope_theta": 1}, {"rope_scaling": "yarn"}])
def test_session_files_refuse_bad_rope_settings_by_path(bad):
    from attention_explorer.session import SessionFileError

    with pytest.raises(SessionFileError) as info:
        loads_session(json.dumps(_doc(positional="rope", **bad)))
    assert next(iter(bad)) in str(info.value)
