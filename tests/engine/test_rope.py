"""RoPE (the engine's checked settings in engine/config.py, the tables in kernels/tables.py,
the rotation in kernels/numpy_ops.py) against transformers' Llama rotary embedding, in float64.

transformers computes the inverse frequencies and angles in float32, so those are compared
within float32's precision; the rotation itself (the rotate-half convention) is compared
exactly, by feeding the same cos and sin to transformers' ``apply_rotary_pos_emb``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from attention_explorer.engine.config import DEFAULT_THETA, RopeScaling, inverse_frequencies
from attention_explorer.engine.engine_errors import AttentionInputError
from attention_explorer.kernels import numpy_ops, tables
from attention_explorer.kernels.numpy_ops import rotate_half
from attention_explorer.pretrained.rotary import scaling_from_checkpoint


def rope_angles(positions, d_k, theta=DEFAULT_THETA, scaling=None):
    """``[n, d_k/2]`` angles of ``positions`` (the kernels' table maths)."""
    return tables.angles(positions, inverse_frequencies(d_k, theta, scaling))


def rope_cos_sin(positions, d_k, theta=DEFAULT_THETA, scaling=None):
    """``cos, sin [n, d_k]`` from the one table builder."""
    return tables.cos_sin(positions, inverse_frequencies(d_k, theta, scaling))


def apply_rope(x, positions=None, theta=DEFAULT_THETA, scaling=None):
    """``x [..., n, d_k]`` rotated by ``positions`` (0..n-1 by default) with numpy's kernel."""
    x = np.asarray(x, dtype=np.float64)
    where = np.arange(x.shape[-2]) if positions is None else np.asarray(positions)
    cos, sin = numpy_ops.rotation_tables(where, inverse_frequencies(x.shape[-1], theta, scaling))
    return numpy_ops.rotate(x, cos, sin)  # [..., n, d_k]


D_K = 16
#: (scaling dict as a checkpoint ships it, our RopeScaling)
SCALINGS = {
    "default": (None, RopeScaling()),
    "linear": ({"rope_type": "linear", "factor": 4.0}, RopeScaling("linear", factor=4.0)),
    "llama3": (
        {
            "rope_type": "llama3",
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 64,  # small: every branch of the blend is used
        },
        RopeScaling("llama3", 8.0, 1.0, 4.0, 64),
    ),
}


def _hf_rotary(scaling: dict | None, theta: float = 10000.0, heads: int = 2):
    transformers = pytest.importorskip("transformers")
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    rope = {"rope_type": "default", "rope_theta": theta, **(scaling or {})}
    config = transformers.LlamaConfig(
        hidden_size=D_K * heads,
        num_attention_heads=heads,
        max_position_embeddings=512,
        rope_parameters=rope,
    )
    return LlamaRotaryEmbedding(config)


@pytest.mark.parametrize("kind", list(SCALINGS))
def test_frequencies_and_cos_sin_match_transformers(kind):
    torch = pytest.importorskip("torch")
    hf_scaling, ours = SCALINGS[kind]
    rotary = _hf_rotary(hf_scaling, theta=500000.0)
    inv = inverse_frequencies(D_K, 500000.0, ours)  # [d_k/2]
    np.testing.assert_allclose(inv, rotary.inv_freq.double().numpy(), rtol=2e-7)
    positions = np.arange(40)
    x = torch.zeros(1, 40, D_K, dtype=torch.float64)
    cos_hf, sin_hf = rotary(x, torch.as_tensor(positions)[None])  # [1, n, d_k] each
    cos, sin = rope_cos_sin(positions, D_K, 500000.0, ours)  # [n, d_k]
    # transformers' angles are float32: at position p they differ by up to ~p * 6e-8 rad
    np.testing.assert_allclose(cos, cos_hf[0].numpy(), atol=40 * 1e-7)
    np.testing.assert_allclose(sin, sin_hf[0].numpy(), atol=40 * 1e-7)
    if kind != "default":  # the scaling changed something
        assert not np.allclose(inv, inverse_frequencies(D_K, 500000.0))


@pytest.mark.parametrize("kind", list(SCALINGS))
def test_the_rotation_matches_apply_rotary_pos_emb_exactly(kind):
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from transformers.models.llama.modeling_llama import (
        apply_rotary_pos_emb,
        rotate_half as hf_rotate_half,
    )

    _, ours = SCALINGS[kind]
    rng = np.random.default_rng(7)
    q = rng.normal(size=(2, 24, D_K))  # [heads, n, d_k]
    k = rng.normal(size=(2, 24, D_K))
    positions = np.arange(24) + 3
    cos, sin = rope_cos_sin(positions, D_K, 10000.0, ours)  # [n, d_k]
    as_t = torch.as_tensor
    q_hf, k_hf = apply_rotary_pos_emb(
        as_t(q)[None], as_t(k)[None], as_t(cos)[None], as_t(sin)[None]
    )
    np.testing.assert_allclose(apply_rope(q, positions, 10000.0, ours), q_hf[0].numpy(), atol=1e-14)
    np.testing.assert_allclose(apply_rope(k, positions, 10000.0, ours), k_hf[0].numpy(), atol=1e-14)
    np.testing.assert_array_equal(rotate_half(q), hf_rotate_half(as_t(q)).numpy())


def test_pairs_are_i_and_i_plus_half_and_turn_by_position_times_frequency():
    x = np.zeros((3, 8))
    x[:, 1] = 1.0  # pair (1, 5)
    out = apply_rope(x)  # positions 0, 1, 2
    angle = rope_angles(np.arange(3), 8)[:, 1]  # [n]
    np.testing.assert_allclose(out[:, 1], np.cos(angle), atol=1e-15)
    np.testing.assert_allclose(out[:, 5], np.sin(angle), atol=1e-15)
    others = np.delete(out, [1, 5], axis=1)
    assert not others.any()  # no other dimension moves
    np.testing.assert_array_equal(out[0], x[0])  # position 0: no rotation
    assert inverse_frequencies(8)[0] == 1.0 and rope_angles([2], 8)[0, 0] == 2.0


@settings(max_examples=40, deadline=None)
@given(
    p=st.integers(0, 3000),
    s=st.integers(0, 3000),
    shift=st.integers(-2000, 2000),
    kind=st.sampled_from(list(SCALINGS)),
)
def test_scores_depend_only_on_the_position_difference(p, s, shift, kind):
    _, scaling = SCALINGS[kind]
    rng = np.random.default_rng(p * 7919 + s)
    q, k = rng.normal(size=(1, D_K)), rng.normal(size=(1, D_K))

    def score(a, b):
        return float(
            apply_rope(q, [a], 10000.0, scaling)[0] @ apply_rope(k, [b], 10000.0, scaling)[0]
        )

    assert score(p, s) == pytest.approx(score(p + shift, s + shift), rel=1e-9, abs=1e-9)
    assert np.linalg.norm(apply_rope(q, [p], 10000.0, scaling)) == pytest.approx(np.linalg.norm(q))


def test_a_shift_changes_nothing_for_whole_score_matrices_but_sinusoids_added_to_x_do():
    rng = np.random.default_rng(1)
    q, k = rng.normal(size=(12, D_K)), rng.normal(size=(12, D_K))
    base = np.arange(12)

    def scores(offset):
        return apply_rope(q, base + offset) @ apply_rope(k, base + offset).T  # [n, n]

    np.testing.assert_allclose(scores(0), scores(100), atol=1e-10)
    assert not np.allclose(scores(0), apply_rope(q, base) @ apply_rope(k, base[::-1]).T)


def test_from_config_reads_checkpoint_dicts_and_refuses_what_it_does_not_implement():
    assert scaling_from_checkpoint(None) == RopeScaling()
    for raw, expected in SCALINGS.values():
        assert scaling_from_checkpoint(raw) == expected
    old_style = {"type": "linear", "factor": 2.0}  # Llama 2's older spelling
    assert scaling_from_checkpoint(old_style) == RopeScaling("linear", factor=2.0)
    with pytest.raises(AttentionInputError, match="'mrope'.*supported: default, linear, llama3"):
        scaling_from_checkpoint({"rope_type": "mrope", "factor": 4.0})
    with pytest.raises(AttentionInputError, match="yarn.*max_position_embeddings"):
        scaling_from_checkpoint({"rope_type": "yarn", "factor": 4.0})  # needs the context
    with pytest.raises(AttentionInputError, match="partial_rotary_factor"):
        scaling_from_checkpoint({"rope_type": "default", "partial_rotary_factor": 0.5})
    with pytest.raises(AttentionInputError, match="'beta_fast'"):
        scaling_from_checkpoint({"rope_type": "linear", "factor": 2.0, "beta_fast": 32})


@pytest.mark.parametrize(
    "call, field",
    [
        (lambda: inverse_frequencies(7), "d_k"),
        (lambda: inverse_frequencies(8, theta=0.5), "rope_theta"),
        (lambda: RopeScaling("linear", factor=0.0), "rope_scaling"),
        (lambda: RopeScaling("llama3", 8.0, 4.0, 1.0), "rope_scaling"),
    ],
)
def test_bad_input_is_named(call, field):
    with pytest.raises(AttentionInputError) as info:
        call()
    assert info.value.field == field and "\n" not in info.value.message
