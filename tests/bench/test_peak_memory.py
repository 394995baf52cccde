"""The benchmark's peak memory is the peak of one case: an earlier transient peak is forgotten."""

import numpy as np
import pytest

from attention_explorer.diagnostics import bench_gui


def test_a_freed_transient_peak_does_not_count_after_a_reset():
    before = bench_gui.peak_resident_mb()
    block = np.ones(50_000_000, np.float32)  # 200 MB, touched
    assert bench_gui.peak_resident_mb() >= before + 150
    del block
    if not bench_gui.reset_peak_resident():
        pytest.skip("this system cannot reset the peak of resident memory")
    assert bench_gui.peak_resident_mb() < before + 100  # the 200 MB are no longer counted
