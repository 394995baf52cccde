"""The generation benchmark runs end to end on its tiniest sizes (no timing asserted): the
calibration line, then the decode-step row (whose cache bytes equal transformers') and the
tiny-induction row."""

from __future__ import annotations

import pytest

from attention_explorer.diagnostics import generate_bench


def test_the_benchmark_prints_its_table(tmp_path, capsys):
    pytest.importorskip("transformers")
    argv = ["--shape", "smoke", "--cache", "16", "--repeat", "1", "--dir", str(tmp_path)]
    assert generate_bench.main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("calibration: python")
    step = next(line for line in lines if line.startswith("| decode step, smoke, cache 16 |"))
    # 2 layers x (keys + values) x 2 kv heads x 16 positions x 8 dims x 4 bytes = 4 KiB
    assert "| 4 KiB (theirs 4) |" in step
    assert any(line.startswith("| tiny-induction, 64 steps (4 x 16) |") for line in lines)
    assert (tmp_path / "smoke" / "config.json").is_file()
