"""The ``model`` sub-command: a session file that loads back, a summary, one-line errors."""

from __future__ import annotations

import numpy as np

from attention_explorer.cli import main
from attention_explorer.engine import compute
from attention_explorer.pretrained import from_model
from attention_explorer.session.file_format import load_session


def run(*argv: str) -> int:
    return main(["model", *argv])


def test_out_writes_a_session_that_reproduces_the_layer(tmp_path, gpt2_folder, capsys):
    out = tmp_path / "layer1.json"
    assert (
        run("--model", str(gpt2_folder), "--text", "the cat sat", "--layer", "1", "--out", str(out))
        == 0
    )
    assert "wrote" in capsys.readouterr().out
    saved = load_session(out)
    direct = from_model(gpt2_folder, "the cat sat", layer=1)
    assert saved.tokens == direct.tokens and saved.config == direct.config
    assert saved.experiment["model"]["layer"] == 1
    got = compute(saved.inputs, saved.config, dtype="float64").stages["weights"]
    want = compute(direct.inputs, direct.config, dtype="float64").stages["weights"]
    np.testing.assert_allclose(got, want, atol=1e-12)


def test_summary_names_each_heads_strongest_key(gpt2_folder, capsys):
    assert run("--model", str(gpt2_folder), "--text", "the cat sat") == 0
    out = capsys.readouterr().out
    assert "4 heads" in out and "mask causal" in out
    assert sum(line.startswith("  head ") for line in out.splitlines()) == 4


def test_errors_are_one_line_with_code_2(tmp_path, gpt2_folder, capsys):
    assert run("--model", str(gpt2_folder), "--text", "the cat", "--layer", "9") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "layers 0..2" in err and "Traceback" not in err
    assert run("--model", str(tmp_path), "--text", "the cat") == 2
    assert "lacks config.json" in capsys.readouterr().err


def test_summary_of_a_long_text_stays_bounded(gpt2_folder, capsys):
    text = " ".join(["the cat sat"] * 5)  # about 20 tokens: over 16, within 24 positions
    assert run("--model", str(gpt2_folder), "--text", text) == 0
    out = capsys.readouterr().out
    head_lines = [line for line in out.splitlines() if line.startswith("  head ")]
    assert all(line.count("->") == 16 for line in head_lines)
    assert "queries; --out writes every number" in out
