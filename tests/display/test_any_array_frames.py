"""Any array is drawn as a stage is: by its value kind (signed, unit, free), shrunk by the
kind's rule, masked cells grey, texts from the one formatter; a stage's own frame is the same
as the frame of its array with the stage's kind."""

from __future__ import annotations

import numpy as np
import pytest

from attention_explorer.core.stage_colours import MASKED_TEXT
from attention_explorer.core.stages import stage
from attention_explorer.display import build_frame, difference_frame, frame_for_array
from attention_explorer.display.levels import levels_of_kind
from attention_explorer.engine import AttentionConfig, AttentionInputs, compute


def _trace(mask="causal", n=4):
    rng = np.random.default_rng(3)
    config = AttentionConfig(mode="direct", heads=1, d_model=2, mask=mask)
    q = rng.normal(size=(1, n, 2))
    return compute(AttentionInputs(Q=q, K=-q, V=q), config, dtype="float64")


@pytest.mark.parametrize("name", ["scores", "masked", "weights", "head_outputs", "mask"])
def test_a_stage_drawn_as_an_array_of_its_kind_matches_its_own_frame(name):
    trace = _trace()
    own = build_frame(trace, name, 0)
    values = trace.stage(name, 0)
    drawn = frame_for_array(values, stage(name).kind, own.heading, own.row_labels, own.col_labels)
    assert drawn.levels == own.levels and drawn.ticks == own.ticks
    np.testing.assert_array_equal(drawn.masked_cells, own.masked_cells)
    np.testing.assert_allclose(drawn.image, own.image)
    assert drawn.texts == own.texts


def test_kinds_decide_the_levels():
    values = np.array([[0.2, -3.0], [1.0, 0.5]])  # [2, 2]
    assert levels_of_kind("signed", values) == (-3.0, 3.0)
    assert levels_of_kind("unit", values) == (0.0, 1.0)
    assert levels_of_kind("free", values) == (-3.0, 1.0)
    with pytest.raises(ValueError, match="unknown value kind 'odd'"):
        frame_for_array(values, "odd", "t", "ab", "cd")


def test_a_difference_map_is_signed_and_keeps_hidden_cells_hidden():
    before, after = _trace(), _trace(mask="none")
    frame = difference_frame(
        before.stage("masked", 0),
        after.stage("masked", 0),
        "masked: no mask − causal",
        after.tokens,
        after.kv_tokens,
    )
    low, high = frame.levels
    assert low == -high  # symmetric about 0: the diverging map's neutral middle
    assert frame.masked_cells[0, 1] and not frame.masked_cells[1, 0]  # masked before: masked here
    assert frame.texts[1] == MASKED_TEXT and frame.texts[4] == "0"
    assert frame.heading == "masked: no mask − causal"
    assert difference_frame([[1.0]], [[3.0]], "t", "a", "b").texts == ["2"]  # after − before
    with pytest.raises(ValueError, match="cannot subtract"):
        difference_frame(np.zeros((2, 2)), np.zeros((2, 3)), "t", "ab", "cd")


def test_a_long_array_shrinks_by_its_kinds_rule_and_says_so():
    n = 2048
    values = np.zeros((n, n))
    values[5, 7] = 1.0  # one peak
    unit = frame_for_array(values, "unit", "peak", [str(i) for i in range(n)], ["k"] * n)
    free = frame_for_array(values, "free", "peak", [str(i) for i in range(n)], ["k"] * n)
    assert unit.block != (1, 1) and unit.image.max() == 1.0  # max keeps the peak
    assert free.image.max() < 1.0  # mean spreads it
    assert "shown as" in unit.heading and unit.texts == []
    with pytest.raises(ValueError, match="labels"):
        frame_for_array(values, "free", "t", ["a"], ["b"])
