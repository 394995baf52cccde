# ruff: noqa: F811 - the fixtures imported from model_folders are redefined as parameters
"""The benchmark's window row (diagnostics/window_model_bench.py): it opens the real window
offscreen, edits W_Q in a model layer and times each edit until the Output panel shows its run (the
times are printed by the benchmark, never asserted)."""

from __future__ import annotations

import numpy as np
from model_folders import gpt2_folder  # noqa: F401 - fixture pytest finds here

from attention_explorer.diagnostics import (
    model_bench as bench,
    window_model_bench as model_run_bench,
)


def test_edits_are_timed_until_the_output_shows_them(qapp, gpt2_folder, monkeypatch):
    shown = []
    real = model_run_bench._edit_once

    def edit(window, row):
        real(window, row)
        shown.append(window)

    monkeypatch.setattr(model_run_bench, "_edit_once", edit)
    times = model_run_bench.edit_to_output_ms(str(gpt2_folder), "the cat sat on the mat", 1, 3)
    assert len(times) == 3 and all(t > 0 for t in times)  # 4 edits, the first a warm-up
    window = shown[-1]
    live = window.model_live
    assert live.edited is not live.original and live.edited.recomputed_from == 1
    assert live.shown_request == live.runner.request_id  # the last edit's run is on screen
    np.testing.assert_array_equal(live.edited.edits[1].inputs.W_Q, window.session.inputs.W_Q)
    median, p95 = model_run_bench.summary(times)
    assert min(times) <= median <= p95 <= max(times)


def test_the_bench_prints_the_window_rows(qapp, gpt2_folder, capsys):
    args = ["--model", str(gpt2_folder), "--tokens", "8", "--repeat", "2", "--no-torch"]
    assert bench.main([*args, "--sweep-tokens", "4", "--window-layer", "9"]) == 0
    rows = capsys.readouterr().out.splitlines()[4:]
    window = [row for row in rows if row.startswith("window:")]
    assert [row.split(",")[-1].split()[0] for row in window] == ["median", "p95"]
    assert "edit in layer 2 ->" in window[0]  # layer 9 clamped to the model's last
