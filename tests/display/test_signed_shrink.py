"""Signed stages shrink by the value of largest magnitude, so a long sequence keeps its
structure under colour levels that span the whole stage."""

from __future__ import annotations

import numpy as np

from attention_explorer.blocks import reduce_blocks
from attention_explorer.display import build_frame
from attention_explorer.display.shrink import shrink, shrink_rule
from attention_explorer.engine import AttentionConfig, AttentionInputs, compute


def test_shrink_rule_is_largest_magnitude_for_signed_stages_only():
    assert [shrink_rule(s) for s in ("scores", "scaled", "masked")] == ["absmax"] * 3
    assert shrink_rule("weights") == "max" and shrink_rule("mask") == "max"
    assert shrink_rule("Q") == "mean" and shrink_rule("output") == "mean"


def test_absmax_keeps_sign_and_largest_magnitude_and_skips_masked_cells():
    values = np.array(
        [[1.0, -5.0, 2.0, 2.0], [3.0, 0.0, -1.0, 2.5], [-np.inf, -np.inf, -np.inf, -7.0]]
    )  # [3, 4]
    image, hidden = reduce_blocks(values, 2, 2, "absmax")  # [2, 2]
    np.testing.assert_array_equal(image, [[-5.0, 2.5], [0.0, -7.0]])
    np.testing.assert_array_equal(hidden, [[False, False], [True, False]])
    assert np.isfinite(image).all()


def test_block_means_cancel_where_largest_magnitude_keeps_the_contrast():
    rng = np.random.default_rng(0)
    values = rng.normal(0.0, 20.0, size=(1024, 1024))  # [1024, 1024]: signed, both signs
    mean = shrink(values, "mean", limit=128).image  # [128, 128]
    kept = shrink(values, "absmax", limit=128).image
    spread = np.abs(values).max()
    assert np.abs(mean).max() < 0.2 * spread  # the flat pale square of the report
    assert np.isclose(np.abs(kept).max(), spread) and np.percentile(np.abs(kept), 10) > 0.4 * spread


def test_long_sequence_scores_use_the_rule_and_say_so_in_the_title():
    n, d = 1100, 3
    rng = np.random.default_rng(1)
    config = AttentionConfig(mode="direct", heads=1, d_model=d, mask="causal")
    q, k, v = (rng.normal(size=(1, n, d)) * 3.0 for _ in range(3))  # [1, n, d] each
    trace = compute(AttentionInputs(Q=q, K=k, V=v), config)
    frame = build_frame(trace, "scores", 0)
    assert frame.heading.endswith("1100×1100 shown as 367×367, largest magnitude of 3×3 blocks")
    full = trace.stage("scores", 0)  # [1100, 1100]
    padded = np.pad(full, ((0, 1), (0, 1)), constant_values=0.0)  # [1101, 1101]
    blocks = padded.reshape(367, 3, 367, 3).transpose(0, 2, 1, 3).reshape(367, 367, 9)
    pick = np.take_along_axis(blocks, np.abs(blocks).argmax(axis=2)[..., None], 2)[..., 0]
    np.testing.assert_allclose(frame.image, pick, rtol=1e-5, atol=1e-5)
    low, high = frame.levels
    assert np.abs(frame.image).max() >= 0.99 * max(abs(low), abs(high))
    masked = build_frame(trace, "masked", 0)
    assert masked.heading.endswith("largest magnitude of 3×3 blocks")
    assert masked.hidden[0, -1] and not masked.hidden[-1, 0]  # the causal corner stays hidden
