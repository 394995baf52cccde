"""The display model (attention_explorer.display), tested without Qt: what a view shows."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from attention_explorer.core.stage_colours import MASKED_TEXT
from attention_explorer.display import build_frame, cell_texts, dark_text, levels_for, shrink
from attention_explorer.display.levels import LOG_FLOOR
from attention_explorer.engine import AttentionConfig, AttentionInputs, compute
from attention_explorer.session.examples import load_example


def _trace(n=6, mask="causal", seed=0, heads=1, d=3):
    rng = np.random.default_rng(seed)
    config = AttentionConfig(mode="direct", heads=heads, d_model=heads * d, mask=mask)
    inputs = AttentionInputs(
        Q=rng.normal(size=(heads, n, d)),
        K=rng.normal(size=(heads, n, d)),
        V=rng.normal(size=(heads, n, d)),
    )
    return compute(inputs, config)


def _example_trace(key):
    data = load_example(key)
    return compute(data.inputs, data.config, tokens=data.tokens, kv_tokens=data.kv_tokens)


def test_the_display_package_imports_no_qt():
    code = (
        "import json, sys, attention_explorer.display, attention_explorer.core.stages, "
        "attention_explorer.core.numbers; print(json.dumps(sorted(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    modules = json.loads(done.stdout)
    assert not [m for m in modules if m.split(".")[0] in ("PySide6", "pyqtgraph", "shiboken6")]


def test_block_maximum_keeps_a_single_peak_visible():
    weights = np.full((1024, 1024), 1 / 1024, dtype=np.float32)  # [n, m] near-uniform
    weights[700, 333] = 0.9  # one query attends to one key
    peak = shrink(weights, "max", limit=512)
    assert peak.block == (2, 2) and peak.image.shape == (512, 512)
    assert peak.image[350, 166] == pytest.approx(0.9)
    assert peak.image.max() == pytest.approx(0.9)
    mean = shrink(weights, "mean", limit=512)  # what averaging would have shown
    assert mean.image.max() < 0.25


def test_shrink_marks_only_fully_masked_blocks_and_stays_finite():
    data = np.arange(16, dtype=np.float64).reshape(4, 4)  # [4, 4]
    data[0, 2:] = -np.inf
    data[1, 3] = -np.inf
    for how in ("max", "mean"):
        shrunk = shrink(data, how, limit=2)
        assert not shrunk.masked_cells.any() and np.isfinite(shrunk.image).all()
    assert shrink(data, "max", limit=2).image[0, 1] == 6.0  # only the finite cell counts
    data[1, 2] = -np.inf
    shrunk = shrink(data, "max", limit=2)
    np.testing.assert_array_equal(shrunk.masked_cells, [[False, True], [False, False]])
    assert shrunk.image[0, 1] == 0 and np.isfinite(shrunk.image).all()


def test_weights_and_mask_shrink_by_maximum_other_stages_by_mean():
    trace = _trace(n=1100, mask="causal")
    weights = trace.stage("weights", 0)  # [1100, 1100]
    frame = build_frame(trace, "weights", 0)
    assert frame.block == (3, 3)
    expected = np.pad(weights, ((0, 1), (0, 1))).reshape(367, 3, 367, 3).max(axis=(1, 3))
    np.testing.assert_allclose(frame.image, expected, rtol=1e-6)
    assert (
        frame.heading == "softmax weights · head 0 · 1100×1100 shown as 367×367, max of 3×3 blocks"
    )
    assert build_frame(trace, "mask", None).heading.endswith("max of 3×3 blocks")
    assert build_frame(trace, "scores", 0).heading.endswith(
        "mean of 3×3 blocks; colours fit 99% of the means"
    )
    assert build_frame(trace, "head_outputs", 0).heading.endswith("mean of 3×1 blocks")
    assert frame.texts == []  # blocks have no single number to write


def test_zoomed_region_shows_exact_cells_at_full_resolution():
    trace = _trace(n=1100, mask="causal")
    region = (500, 520, 490, 510)
    frame = build_frame(trace, "scaled", 0, region=region)
    exact = trace.stage("scaled", 0)[500:520, 490:510]  # [20, 20]
    assert frame.block == (1, 1) and frame.region == region and frame.zoomed
    np.testing.assert_array_equal(frame.image, exact)
    # exact cells are coloured on the whole stage's range (the shrunk overview fits its
    # colours to the block means, and its title says so)
    assert frame.levels == levels_for("scaled", trace.stage("scaled", 0))
    assert len(frame.texts) == 400 and frame.texts[0] == cell_texts("scaled", exact[:1, :1])[0]
    assert frame.row_labels == trace.tokens[500:520]
    assert "rows 500–519, columns 490–509 of 1100×1100" in frame.heading


def test_levels_follow_the_value_kind():
    data = np.array([[-2.0, 1.0], [0.5, -np.inf]])
    assert levels_for("scores", data) == (-2.0, 2.0)  # signed: symmetric about 0
    assert levels_for("weights", data) == (0.0, 1.0)  # unit: fixed
    assert levels_for("mask", data) == (0.0, 1.0)
    assert levels_for("head_outputs", data) == (-2.0, 1.0)  # free: finite min..max
    low, high = levels_for("output", np.full((2, 2), 3.0))
    assert low < 3.0 < high  # a flat range is padded
    assert levels_for("scores", np.full((2, 2), -np.inf)) == (-1.0, 1.0)


def test_per_row_scale_draws_each_row_against_its_own_maximum():
    trace = _trace(n=12, mask="none", seed=4)
    weights = trace.stage("weights", 0)  # [12, 12]
    frame = build_frame(trace, "weights", 0, scale="row")
    np.testing.assert_allclose(frame.image.max(axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(frame.image, weights / weights.max(axis=1, keepdims=True), rtol=1e-6)
    assert frame.levels == (0.0, 1.0) and frame.scale_caption == "÷ row max"
    assert [label for _, label in frame.ticks] == ["0.00", "0.25", "0.50", "0.75", "1.00"]
    assert frame.texts == cell_texts("weights", weights)  # the numbers stay the weights


def test_log_scale_labels_the_colour_bar_in_weights():
    trace = _trace(n=8, mask="causal")
    frame = build_frame(trace, "weights", 0, scale="log")
    low = np.log10(LOG_FLOOR)
    assert frame.levels == (low, 0.0) and frame.scale_caption == "log scale"
    assert [label for _, label in frame.ticks] == ["0.0001", "0.001", "0.01", "0.1", "1"]
    expected = np.log10(np.maximum(trace.stage("weights", 0), LOG_FLOOR))
    np.testing.assert_allclose(frame.image, expected, rtol=1e-6)
    scores = build_frame(trace, "scores", 0, scale="log")  # other stages stay linear
    assert scores.scale_caption == ""


def test_cell_texts_use_one_policy_whatever_the_size():
    values = np.array([[0.2483, 0.5035, 1e-7], [-np.inf, 0.0, -1.5]])
    assert cell_texts("weights", values) == ["0.2483", "0.5035", "≈0", MASKED_TEXT, "0", "−1.5"]
    assert cell_texts("weights", values, decimals=2) == ["0.25", "0.5", "≈0", "−∞", "0", "−1.5"]


def test_three_tokens_example_reads_its_exact_weights():
    frame = build_frame(_example_trace("three-tokens"), "weights", 0)
    assert frame.texts[3:6] == ["0.2483", "0.5035", "0.2483"]


def test_text_contrast_follows_the_background():
    assert dark_text(np.array([[255, 255, 255], [253, 231, 37]])).tolist() == [True, True]
    assert dark_text(np.array([[0, 0, 0], [68, 1, 84], [105, 105, 105]])).tolist() == [
        False,
        False,
        False,
    ]
