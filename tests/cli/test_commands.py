"""The command line: compute, explain, errors as one line with exit code 2."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attention_explorer.cli import main

SAMPLE = str(Path(__file__).parents[1] / "sample_session.json")


def test_compute_prints_the_weights(capsys):
    assert main(["compute", SAMPLE]) == 0
    out = capsys.readouterr().out
    assert "3 queries x 3 keys" in out
    # the causal first row, and the last row's exact softmax of [0, 1, 1] / sqrt(2)
    assert "0.4011" in out and "0.1978" in out


def test_compute_writes_npz(tmp_path):
    out = tmp_path / "trace.npz"
    assert main(["compute", SAMPLE, "--out", str(out)]) == 0
    with np.load(out, allow_pickle=False) as npz:
        weights = npz["weights"]
    assert weights.shape == (1, 3, 3)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=1e-6)


def test_explain_shows_the_softmax_arithmetic(capsys):
    assert main(["explain", SAMPLE, "--stage", "weights", "--head", "0", "--cell", "2,1"]) == 0
    out = capsys.readouterr().out
    assert "weights[pizza, love]" in out
    assert "find the largest score" in out and "2.4931" in out


def test_explain_scores_terms(capsys):
    assert main(["explain", SAMPLE, "--stage", "scores", "--cell", "1,0"]) == 0
    assert "q[0]·k[0] = 1×1" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["compute", "missing.json"], "does not exist"),
        (["explain", SAMPLE, "--cell", "9,9"], "outside"),
        (["explain", SAMPLE, "--head", "4"], "head 4"),
        (["compute", SAMPLE, "--backend", "torch", "--device", "cuda:7"], "device"),
        (["compute"], "session file"),
    ],
)
def test_errors_are_one_line_and_exit_2(argv, needle, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert needle in err


def test_no_traceback_in_a_real_process(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "attention-explorer-session", "version": 9}')
    run = subprocess.run(
        [sys.executable, "-m", "attention_explorer", "compute", str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert "Traceback" not in run.stderr
    assert "version: 9 is newer" in run.stderr


def test_version_flag(capsys):
    from attention_explorer import __version__

    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert __version__ in capsys.readouterr().out
