"""Which heads matter: the knockout sweep, its estimate, cancellation, and the CLI command."""

from __future__ import annotations

import numpy as np
import pytest

import attention_explorer as ae
from attention_explorer.cli import main
from attention_explorer.pretrained import ModelError, SweepCancelled, model_run, run_sweep
from attention_explorer.pretrained.sweep import sweep_estimate

TEXT = "the cat watched the dog"


def test_each_entry_is_that_heads_knockout(gpt2_folder):
    changes = ae.knockout_sweep(gpt2_folder, TEXT, dtype="float64")
    assert changes.shape == (3, 4) and np.abs(changes).max() > 1e-4
    base = model_run(gpt2_folder, TEXT, dtype="float64")
    pos, target = len(base.ids) - 2, base.ids[-1]
    knocked = model_run(gpt2_folder, TEXT, knockout=[(2, 1)], dtype="float64")
    expected = knocked.log_probs(pos)[target] - base.log_probs(pos)[target]
    assert changes[2, 1] == pytest.approx(expected, abs=1e-12)


def test_a_chosen_target_and_position(gpt2_folder):
    result = run_sweep(gpt2_folder, TEXT, "logprob", target=0, position=1, dtype="float64")
    base = model_run(gpt2_folder, TEXT, dtype="float64")
    assert result.baseline == pytest.approx(base.log_probs(1)[0], abs=1e-12)
    assert "position 1" in result.label and result.tokens == base.tokens


def test_similarity_for_an_embedding_model(minilm_folder):
    result = run_sweep(minilm_folder, "the cat sat", "auto", other="a dog ran")
    assert result.changes.shape == (6, 12) and "similarity" in result.label
    assert -1.0 <= result.baseline <= 1.0 and np.abs(result.changes).max() > 1e-4
    itself = run_sweep(minilm_folder, "the cat sat", "similarity")
    assert itself.baseline == pytest.approx(1.0) and itself.changes.max() <= 1e-6


def test_progress_and_cancel(gpt2_folder):
    seen = []
    ae.knockout_sweep(gpt2_folder, TEXT, progress=lambda done, total: seen.append((done, total)))
    assert seen[0] == (1, 12) and seen[-1] == (12, 12)
    asked = []

    def cancelled():
        asked.append(1)
        return len(asked) > 3

    with pytest.raises(SweepCancelled):
        ae.knockout_sweep(gpt2_folder, TEXT, cancelled=cancelled)
    assert len(asked) == 4


def test_bad_measures(gpt2_folder, minilm_folder):
    with pytest.raises(ModelError, match="unknown measure"):
        ae.knockout_sweep(gpt2_folder, TEXT, measure="loss")
    with pytest.raises(ModelError, match="no output head"):
        ae.knockout_sweep(minilm_folder, TEXT, measure="logprob")
    with pytest.raises(ModelError, match="not a token"):
        ae.knockout_sweep(gpt2_folder, TEXT, target="zzz-not-a-token")


def test_estimate_is_positive_and_grows_with_the_text(gpt2_folder):
    short = sweep_estimate(gpt2_folder, "the cat")
    assert short > 0


def test_sweep_command_writes_csv_and_npy(tmp_path, gpt2_folder, capsys):
    out = tmp_path / "sweep.csv"
    assert main(["sweep", str(gpt2_folder), "--text", TEXT, "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "about" in captured.err and "wrote" in captured.out and "layer" in captured.out
    lines = out.read_text().splitlines()
    assert lines[0] == "layer,head 0,head 1,head 2,head 3" and len(lines) == 4
    table = np.array([[float(v) for v in line.split(",")[1:]] for line in lines[1:]])
    np.testing.assert_allclose(table, ae.knockout_sweep(gpt2_folder, TEXT), atol=1e-6)
    npy = tmp_path / "sweep.npy"
    assert main(["sweep", str(gpt2_folder), "--text", TEXT, "--out", str(npy)]) == 0
    np.testing.assert_allclose(np.load(npy), table, atol=1e-12)


def test_sweep_command_draws_the_map_as_a_picture(tmp_path, gpt2_folder):
    for suffix, magic in ((".png", b"\x89PNG"), (".svg", b"<?xml"), (".pdf", b"%PDF")):
        out = tmp_path / f"sweep{suffix}"
        assert main(["sweep", str(gpt2_folder), "--text", TEXT, "--out", str(out)]) == 0
        assert out.read_bytes().startswith(magic), suffix
    svg = (tmp_path / "sweep.svg").read_text()
    assert "layer" in svg and "head" in svg and "knocked out" in svg


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--out", "x.gif"], "must end in .csv, .npy, .png, .svg, .pdf"),
        (["--out", "no/such/dir/x.csv"], "does not exist"),
    ],
)
def test_sweep_command_errors_are_one_line(
    tmp_path, gpt2_folder, capsys, monkeypatch, args, message
):
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", str(gpt2_folder), "--text", TEXT, *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
