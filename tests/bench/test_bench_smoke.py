"""The benchmark runs and prints its table (times are printed, never asserted)."""

from __future__ import annotations

import re

import pytest

from attention_explorer.diagnostics import bench
from attention_explorer.engine import compute


def test_quick_run_prints_a_table(capsys):
    assert bench.main(["--quick"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("case"))
    rows = [line for line in lines[header + 2 : -1] if line.strip()]  # the last: calibration
    backends = bench.backends_to_run()
    assert len(rows) == 2 * len(backends) + len(backends)  # n = 4, 16, then one head at 16
    assert sum(r.startswith("full trace") for r in rows) == 2 * len(backends)
    assert sum(r.startswith("one head, weights") for r in rows) == len(backends)
    for row in rows:
        cells = re.split(r"\s{2,}", row.strip())  # columns are two or more spaces apart
        assert len(cells) == len(bench.HEADER), row
        case, n, backend, engine_ms, ref_ms, ratio = cells[:6]
        assert backend in {b.label for b in backends}
        assert n == "16" if case.startswith("one head") else n in ("4", "16")
        assert float(engine_ms) > 0 and float(ref_ms) > 0
        assert float(ratio) == pytest.approx(float(engine_ms) / float(ref_ms), rel=0.1, abs=0.02)
        assert float(cells[8]) < 1e-4  # max|diff| between engine and reference results
    assert "numpy" in out and "ratio" in out
    assert lines[-1].startswith("calibration: python ")  # the machine, beside the table
    assert re.search(r"; load (\d+\.\d\d ){3}on \d+ cores$", lines[-1])  # and how busy


def test_reference_computes_what_the_engine_computes():
    config, inputs = bench.make_case(8)
    ref = bench.reference_numpy(inputs, config)
    trace = compute(inputs, config)
    for name in (
        "Q",
        "K",
        "V",
        "scores",
        "scaled",
        "masked",
        "weights",
        "head_outputs",
        "concat",
        "output",
    ):
        assert ref[name].shape == trace[name].shape, name
        finite = ref[name] > -float("inf")
        assert (finite == (trace[name] > -float("inf"))).all(), name
        diff = abs(ref[name][finite] - trace[name][finite]).max()
        assert diff <= 1e-5 * max(1.0, abs(ref[name][finite]).max()), name


def test_sizes_option(capsys):
    bench.main(["--quick", "--sizes", "3", "--no-memory"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("full trace")]
    assert [row.split()[2] for row in rows] == ["3"] * len(bench.backends_to_run())
