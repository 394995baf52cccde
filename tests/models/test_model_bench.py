"""The model benchmark runs end to end and prints its table (speed is not asserted here)."""

from __future__ import annotations

from attention_explorer.diagnostics import model_bench as bench
from attention_explorer.pretrained import load_model


def test_text_of_gives_the_token_count(gpt2_folder):
    loaded = load_model(gpt2_folder)
    assert 6 <= len(loaded.tokenize(bench.text_of(loaded, 12)).ids) <= 12  # whole words


def test_bench_prints_a_table_for_a_small_model(gpt2_folder, capsys):
    args = ["--model", str(gpt2_folder), "--tokens", "8", "16", "--repeat", "2", "--no-window"]
    assert bench.main([*args, "--sweep-tokens", "6"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "3 layers x 4 heads" in out[0] and out[1].startswith("calibration:")
    assert out[2].split()[:3] == ["what", "ours", "transformers"]
    rows = out[4:]
    assert (
        len(rows) == 2 * 5 + 2 + 1
    )  # per token count: float32, on torch, 1 thread, float64, on torch
    assert rows[0].startswith("model run float32,") and rows[0].count(" ms") == 2
    assert rows[1].startswith("  ours on torch") and rows[1].count(" ms") == 2
    assert rows[2].startswith("  both on 1 thread") and rows[2].count(" ms") == 2
    assert rows[3].startswith("model run float64,") and rows[3].count(" ms") == 2
    assert rows[4].startswith("  ours on torch") and rows[4].count(" ms") == 2
    assert "edit in layer 2" in rows[11] and rows[-1].startswith("sweep, 12 heads,")


def test_text_of_stops_at_the_models_positions(gpt2_folder):
    loaded = load_model(gpt2_folder)  # 24 positions
    ids = loaded.tokenize(bench.text_of(loaded, 10_000)).ids
    assert 20 <= len(ids) <= loaded.weights.max_positions
