"""A torch pass reads its inputs' smallest and largest values with torch (one multithreaded
``aminmax`` over the same float64 memory) and refuses bad values exactly as numpy's check
does; arrays torch cannot share (read-only, negative strides) are read by numpy."""

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
from attention_explorer.engine.backend import extremes_for
from attention_explorer.engine.inputs import numpy_extremes

torch = pytest.importorskip("torch")
TORCH = Backend("torch", "cpu")


def _inputs(rng, **changes):
    arrays = {
        "X": rng.normal(size=(5, 8)),
        **{f"W_{c}": rng.normal(size=(8, 8)) for c in "QKVO"},
        **changes,
    }
    return arrays


def test_torch_reads_the_extremes_of_shareable_arrays():
    read = extremes_for(TORCH)
    assert read is not numpy_extremes and extremes_for(Backend()) is numpy_extremes
    a = np.random.default_rng(0).normal(size=(64, 33))  # [64, 33] float64
    assert read(a) == (a.min(), a.max())
    assert read(a[::-1, ::2]) == (a.min(), a[:, ::2].max())  # negative strides: numpy
    frozen = a.copy()
    frozen.flags.writeable = False
    assert read(frozen) == (a.min(), a.max())  # read-only: numpy, no torch warning
    a[3, 4] = np.nan
    low, high = read(a)
    assert np.isnan(low) and np.isnan(high)


@pytest.mark.parametrize(
    ("value", "fragment"), [(np.nan, "only finite"), (-np.inf, "only finite"), (3e30, "1e+30")]
)
def test_a_torch_pass_refuses_bad_values_by_name(value, fragment):
    rng = np.random.default_rng(1)
    W_K = rng.normal(size=(8, 8))
    W_K[2, 5] = value
    config = AttentionConfig(mode="projection", heads=2, d_model=8)
    inputs = AttentionInputs(**_inputs(rng, W_K=W_K))
    for backend in (Backend(), TORCH):
        with pytest.raises(AttentionInputError, match=r"\[2, 5\]") as info:
            compute(inputs, config, backend)
        assert info.value.field == "inputs.W_K" and fragment in str(info.value)
