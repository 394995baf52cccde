"""The machine calibration: a fixed workload timed in ms, one line beside benchmark summaries."""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path

from attention_explorer.diagnostics import calibration
from attention_explorer.diagnostics.calibration import Calibration, calibrate, calibration_line


def test_calibrate_times_both_workloads_in_positive_milliseconds():
    result = calibrate(repeats=2)
    for value in (result.python_ms, result.numpy_ms):
        assert math.isfinite(value) and 0 < value < 60_000
    assert result.total_ms == result.python_ms + result.numpy_ms


def test_the_workload_is_fixed_and_does_real_work():
    # the same numbers every time: the workload never depends on the machine or the run
    assert calibration._python_workload() == calibration._python_workload()
    assert calibration._numpy_workload() == calibration._numpy_workload()
    assert calibration._python_workload() > calibration.PYTHON_STEPS  # the loop ran


def test_the_line_names_both_parts_and_their_total():
    line = calibration_line(Calibration(python_ms=21.04, numpy_ms=9.8))
    assert line.startswith("calibration: ")
    assert "python 21.0 ms" in line and "numpy 9.8 ms" in line and "total 30.8 ms" in line
    measured = calibration_line()
    assert re.match(r"calibration: python [\d.]+ ms, numpy [\d.]+ ms \(total [\d.]+ ms", measured)


def test_calibration_is_qt_free_and_imports_nothing_of_the_app():
    tree = ast.parse(Path(calibration.__file__).read_text(encoding="utf-8"))
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert names <= {"__future__", "time", "dataclasses", "numpy"}, names
