"""Long RoPE sequences: previews and recomputed rows come from the rotated q and k."""

import dataclasses

import numpy as np

from attention_explorer.core.stages import stage
from attention_explorer.display import shrink
from attention_explorer.engine.recompute import RecomputedStage
from attention_explorer.session.compute_session import compute_session
from attention_explorer.session.resize import set_heads, set_token_count
from attention_explorer.session.starter import starter_session

SQUARE = ("scores", "scaled", "masked", "weights")
N, LIMIT = 1100, 256


def _close(actual, expected, name):
    scale = float(np.max(np.abs(expected[np.isfinite(expected)]), initial=1.0))
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6 * scale, err_msg=name)


def test_an_1100_token_rope_preview_is_the_shrink_of_the_full_stage():
    data = set_token_count(set_heads(starter_session(), 2), N)
    config = dataclasses.replace(data.config, positional="rope", rope_theta=100.0)
    data = dataclasses.replace(data, config=config)
    full = compute_session(data, heads=[1])
    previewed = compute_session(data, heads=[1], preview=LIMIT)
    plain = compute_session(
        dataclasses.replace(data, config=data.config.with_changes(positional="none")), heads=[1]
    )
    # the rotation matters at this length: without it the weights differ
    assert np.max(np.abs(full.stage("weights", 1) - plain.stage("weights", 1))) > 1e-3
    for name in SQUARE:
        whole = full.stage(name, 1)  # [n, n]
        expected = shrink(whole, stage(name).shrink, LIMIT)
        preview = previewed.preview(name)
        assert preview is not None and preview.block == expected.block, name
        _close(preview.image[0], expected.image, name)
        lazy = previewed.stage(name, 1)  # rows recomputed from the rotated q and k
        assert isinstance(lazy, RecomputedStage)
        _close(lazy[1000], whole[1000], name)
        _close(lazy[500:520], whole[500:520], name)
    _close(previewed.stage("Q_rot", 1), full.stage("Q_rot", 1), "Q_rot")
