"""The patching benchmark runs end to end on its tiniest sizes (no timing asserted): the
calibration line, then one table row per model with the map's cells and block passes."""

from __future__ import annotations

from attention_explorer.diagnostics import patch_bench


def test_the_benchmark_prints_its_table(tmp_path, capsys):
    argv = ["--models", "smoke,tiny-induction", "--tokens", "6", "--repeat", "1"]
    assert patch_bench.main([*argv, "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("calibration: python")
    smoke = next(line for line in lines if line.startswith("| smoke |"))
    tiny = next(line for line in lines if line.startswith("| tiny-induction |"))
    # 2 layers x 6 tokens: 12 cells; 2 L + n L (L + 1) / 2 = 22 block passes against 28
    assert "| 2 x 6 | 12 |" in smoke and "| 22 / 28 |" in smoke
    assert "| 2 x 6 | 12 |" in tiny and "| 22 / 28 |" in tiny
    assert (tmp_path / "smoke" / "config.json").is_file()


def test_the_prompts_have_the_asked_length():
    for name in ("smoke", "tiny-induction"):
        clean, corrupted, answer, wrong = patch_bench.prompts(name, 9)
        assert answer != wrong and clean != corrupted
        if name == "tiny-induction":
            assert len(clean.split()) == len(corrupted.split()) == 9
        else:
            assert len(clean) == len(corrupted) == 9
