"""The GUI benchmark runs in-process and prints its tables (times are printed, never asserted)."""

from __future__ import annotations

import math
import re

import pytest

from attention_explorer.diagnostics import bench_gui, bench_gui_window


def _table(lines: list[str], header: tuple[str, ...]) -> list[list[str]]:
    """The rows (as lists of cells) of the printed table whose header line is ``header``."""
    start = next(
        i for i, line in enumerate(lines) if re.split(r"\s{2,}", line.strip()) == list(header)
    )
    assert set(lines[start + 1].replace(" ", "")) == {"-"}
    rows = []
    for line in lines[start + 2 :]:
        if not line.strip() or line.startswith(("largest", "skipped", "sweep")):
            break
        rows.append(re.split(r"\s{2,}", line.strip()))  # columns are two or more spaces apart
    return rows


def _positive(text: str) -> float:
    value = float(text)
    assert math.isfinite(value) and value > 0, text
    return value


def _check_times(cells: dict[str, str]) -> None:
    med, p95 = _positive(cells["med ms"]), _positive(cells["p95 ms"])
    engine, ratio = _positive(cells["engine ms"]), _positive(cells["ratio"])
    assert p95 >= med
    assert ratio == pytest.approx(med / engine, rel=0.1, abs=0.1)
    for part in ("other", "compute", "slots", "paint"):
        value = float(cells[part])
        assert math.isfinite(value) and value >= 0, (part, value)
    assert _positive(cells["paint"]) and _positive(cells["compute"])


def test_quick_run_prints_both_tables(qapp, capsys):
    assert bench_gui.main(["--quick"]) == 0
    lines = capsys.readouterr().out.splitlines()

    latency = _table(lines, bench_gui.LATENCY_HEADER)
    assert len(latency) == len(bench_gui.QUICK_LATENCY_CASES)
    for row, (n, h, d_model) in zip(latency, bench_gui.QUICK_LATENCY_CASES):
        assert len(row) == len(bench_gui.LATENCY_HEADER), row
        cells = dict(zip(bench_gui.LATENCY_HEADER, row))
        assert (cells["n"], cells["h"], cells["d_model"]) == (str(n), str(h), str(d_model))
        assert cells["path"] == "inline, all heads"  # tiny sizes never go to the worker
        assert int(cells["edits"]) == bench_gui.QUICK_EDITS
        _check_times(cells)

    sweep = _table(lines, bench_gui.SWEEP_HEADER)
    assert [row[0] for row in sweep] == [str(n) for n in bench_gui.QUICK_SWEEP_SIZES]
    for row in sweep:
        assert len(row) == len(bench_gui.SWEEP_HEADER), row
        cells = dict(zip(bench_gui.SWEEP_HEADER, row))
        assert cells["selected head only"] == "no"
        _check_times(cells)
        assert cells["<= 100 ms"] == ("yes" if float(cells["med ms"]) <= 100 else "no")
    assert any(line.startswith("largest n repainting within 100 ms") for line in lines)
    # the last line, numbers only; the quick sizes measure neither n = 64 nor n = 4096
    summary = re.fullmatch(
        r"summary: p95_n64_ms=(\S+) median_n4096_ms=(\S+) largest_n_100ms=(\d+) "
        r"peak_mb_n4096=(\S+)",
        lines[-1],
    )
    assert summary is not None, lines[-1]
    assert lines[-2].startswith("calibration: python ")  # the machine, beside the summary
    assert summary.group(1) == summary.group(2) == summary.group(4) == "-1"


def test_summary_line_reads_the_n64_and_n4096_cases():
    def case(n, totals):
        result = bench_gui.CaseResult(n, 8, 64, worker=False, selected_head_only=False)
        result.edits = [bench_gui_window.EditTiming(t, t, 0.0, 0.0) for t in totals]
        return result

    results = {
        (64, 8, 64): case(64, [0.010, 0.012, 0.030]),
        (4096, 8, 64): case(4096, [0.5, 0.7, 0.9]),
    }
    line = bench_gui.summary_line(results, 512, {64: 300.0, 4096: 1234.4})
    assert (
        line
        == "summary: p95_n64_ms=30.0 median_n4096_ms=700.0 largest_n_100ms=512 peak_mb_n4096=1234"
    )


def test_sweep_option_chooses_the_sizes(qapp, capsys):
    bench_gui.main(["--quick", "--sweep", "4"])
    sweep = _table(capsys.readouterr().out.splitlines(), bench_gui.SWEEP_HEADER)
    assert [row[0] for row in sweep] == ["4"]


def test_session_has_the_asked_sizes():
    session = bench_gui_window.make_session(12, 4, 16)
    assert len(session.tokens) == 12 and session.config.heads == 4
    assert session.inputs.X.shape == (12, 16)
    assert session.inputs.W_Q.shape == (16, 16)


def test_p95_is_nearest_rank():
    assert bench_gui.p95([3.0, 1.0, 2.0]) == 3.0
    assert bench_gui.p95([float(i) for i in range(1, 101)]) == 95.0
