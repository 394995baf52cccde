"""Size changes keep every matrix consistent with the config, and keep the numbers that fit."""

import numpy as np
import pytest

from attention_explorer.engine import AttentionInputError, compute
from attention_explorer.session import resize, starter_session
from attention_explorer.session.file_format import loads_session
from attention_explorer.session.resize import fit


def computes(data):
    trace = compute(data.inputs, data.config, tokens=data.tokens)
    return trace


def test_fit_keeps_overlap_and_is_deterministic():
    a = np.arange(6.0).reshape(2, 3)
    grown = fit(a, (3, 4))
    assert np.array_equal(grown[:2, :3], a)
    assert np.array_equal(fit(a, (3, 4)), grown)
    assert np.array_equal(fit(a, (1, 2)), a[:1, :2])


@pytest.mark.parametrize("n", [1, 2, 9])
def test_token_count_in_projection_mode(n):
    data = resize.set_token_count(starter_session(), n)
    trace = computes(data)
    assert trace["weights"].shape == (2, n, n)
    assert len(data.tokens) == n


def test_token_count_in_direct_mode_keeps_old_rows():
    data = resize.set_mode(starter_session(), "direct")
    grown = resize.set_token_count(data, 6)
    assert np.array_equal(grown.inputs.Q[:, :4], data.inputs.Q)
    assert computes(grown)["weights"].shape == (2, 6, 6)


def test_heads_must_divide_d_model():
    with pytest.raises(AttentionInputError) as info:
        resize.set_heads(starter_session(), 3)
    assert info.value.field == "heads" and "1, 2, 4, 8" in info.value.message
    four = resize.set_heads(starter_session(), 4)
    assert computes(four)["weights"].shape == (4, 4, 4)
    assert four.config.head_dim == 2


def test_d_model_and_head_dim_changes_compute():
    data = resize.set_d_model(starter_session(), 12)
    assert computes(data)["output"].shape == (4, 12)
    direct = resize.set_head_dim(resize.set_mode(data, "direct"), 5)
    assert computes(direct)["Q"].shape == (2, 4, 5)


def test_mode_switch_to_direct_keeps_the_weights():
    data = starter_session()
    direct = resize.set_mode(data, "direct")
    np.testing.assert_allclose(computes(direct)["weights"], computes(data)["weights"], atol=1e-6)


def test_padding_and_mask_toggle():
    data = resize.set_padding(starter_session(), 1)
    weights = computes(data)["weights"]
    assert np.all(weights[:, :, 3] == 0)
    toggled = resize.toggle_mask_cell(data, 3, 0)
    assert toggled.config.mask == "custom"
    assert np.all(computes(toggled)["weights"][:, 3, 0] == 0)
    # shrinking the sequence trims the custom mask with it
    assert computes(resize.set_token_count(toggled, 2))["weights"].shape == (2, 2, 2)


def test_cross_attention_token_count_changes_queries_only():
    doc = """{"format": "attention-explorer-session", "version": 1,
      "tokens": ["y1"], "kv_tokens": ["h1", "h2", "h3"],
      "config": {"attention": "cross", "scale": "none"},
      "inputs": {"mode": "direct", "Q": [[[1, 0]]], "K": [[[1, 0], [0, 1], [1, 1]]],
                 "V": [[[1, 0], [0, 1], [1, 1]]]}}"""
    data = loads_session(doc)
    grown = resize.set_token_count(data, 3)
    assert computes(grown)["weights"].shape == (1, 3, 3)
    assert grown.inputs.K.shape == (1, 3, 2)


def test_cross_attention_key_count_changes_keys_and_values_only():
    doc = """{"format": "attention-explorer-session", "version": 1,
      "tokens": ["y1"], "kv_tokens": ["h1", "h2", "h3"],
      "config": {"attention": "cross", "scale": "none"},
      "inputs": {"mode": "direct", "Q": [[[1, 0]]], "K": [[[1, 0], [0, 1], [1, 1]]],
                 "V": [[[1, 0], [0, 1], [1, 1]]]}}"""
    data = loads_session(doc)
    grown = resize.set_key_token_count(data, 5)
    assert grown.kv_tokens[:3] == ("h1", "h2", "h3") and len(grown.kv_tokens) == 5
    assert np.array_equal(grown.inputs.K[:, :3], data.inputs.K)  # kept numbers
    assert np.array_equal(grown.inputs.Q, data.inputs.Q)
    assert computes(grown)["weights"].shape == (1, 1, 5)
    with pytest.raises(AttentionInputError, match="at least one key token"):
        resize.set_key_token_count(data, 0)


def test_self_attention_refuses_different_tokens_and_kv_tokens():
    """Found by the API fuzz test: tokens=1 with kv_tokens=2 gave 2 tokens, silently."""
    import attention_explorer as ae

    starter = ae.example("starter")
    with pytest.raises(AttentionInputError, match="kv_tokens 2 differ"):
        ae.resize(starter, tokens=1, kv_tokens=2)
    assert len(ae.resize(starter, tokens=3, kv_tokens=3).tokens) == 3
