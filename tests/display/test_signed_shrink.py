"""Signed stages shown as block means get colour levels fitted to the means shown, so a long
sequence keeps its structure instead of a flat pale square, and the title says so."""

from __future__ import annotations

import numpy as np

from attention_explorer.display import build_frame
from attention_explorer.display.shrink import shrink, shrink_rule, signed_levels
from attention_explorer.engine import AttentionConfig, AttentionInputs, compute


def _long_trace(n=1100, d=3, preview=None):
    rng = np.random.default_rng(1)
    config = AttentionConfig(mode="direct", heads=1, d_model=d, mask="causal")
    q, k, v = (rng.normal(size=(1, n, d)) * 3.0 for _ in range(3))  # [1, n, d] each
    return compute(AttentionInputs(Q=q, K=k, V=v), config, preview=preview)


def test_rules_are_the_catalogues():
    assert shrink_rule("weights") == "max" and shrink_rule("scores") == "mean"


def test_levels_fit_the_shown_means_of_signed_stages_only():
    rng = np.random.default_rng(0)
    values = rng.normal(0.0, 20.0, size=(1024, 1024))  # [1024, 1024]: signed, both signs
    means = shrink(values, "mean", limit=128)  # [128, 128]
    low, high = signed_levels("scores", means)
    assert low == -high and np.isclose(high, np.percentile(np.abs(means.image), 99))
    assert high < 0.2 * np.abs(values).max()  # the stage's own range would wash them out
    assert np.mean(np.abs(means.image) > 0.3 * high) > 0.3  # most blocks get real colour
    assert signed_levels("Q", means) is None  # free stages keep their levels
    assert signed_levels("scores", shrink(values[:100, :100], "mean")) is None  # not shrunk


def test_long_scores_are_coloured_by_their_block_means_and_the_title_says_so():
    trace = _long_trace()
    frame = build_frame(trace, "scores", 0)
    assert frame.heading.endswith(
        "1100×1100 shown as 367×367, mean of 3×3 blocks; colours fit 99% of the means"
    )
    full = trace.stage("scores", 0)  # [1100, 1100]
    assert frame.levels[1] < 0.6 * np.abs(full).max()
    inside = np.abs(frame.image) <= frame.levels[1]
    assert np.isclose(inside.mean(), 0.99, atol=0.005)
    masked = build_frame(trace, "masked", 0)
    assert "colours fit 99% of the means" in masked.heading
    assert masked.masked_cells[0, -1] and not masked.masked_cells[-1, 0]  # causal corner
    weights = build_frame(trace, "weights", 0)
    assert weights.levels == (0.0, 1.0) and "colours fit" not in weights.heading


def test_the_preview_path_gives_the_same_frame():
    plain, previewed = _long_trace(), _long_trace(preview=512)
    a, b = build_frame(plain, "scaled", 0), build_frame(previewed, "scaled", 0)
    assert a.heading == b.heading
    np.testing.assert_allclose(a.levels, b.levels, rtol=1e-4)
