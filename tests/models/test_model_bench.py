"""The model benchmark runs end to end and prints its table (speed is not asserted here)."""

from __future__ import annotations

from attention_explorer.models import bench


def test_bench_prints_a_table_for_a_small_model(gpt2_folder, capsys):
    assert (
        bench.main(
            [
                "--model",
                str(gpt2_folder),
                "--text",
                "the cat sat on the mat",
                "--runs",
                "1",
                "--repeat",
                "2",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out.splitlines()
    assert "3 layers x 4 heads" in out[0]
    assert out[1].startswith("BLAS threads") and len(out) == 5
    assert all(" ms" in line for line in out[3:])
