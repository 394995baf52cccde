"""Issue 31.14: the command line's messages read for a learner (did you mean, the command's
name on an error, a row-sum line in words, plurals, no "Broken pipe" when piped into head)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from attention_explorer.cli import main
from attention_explorer.cli.terminal_text import counted

SAMPLE = str(Path(__file__).parents[1] / "sample_session.json")


def exit_code(argv) -> int:
    """``main(argv)``'s exit code, whether returned or raised by the argument parser."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


def test_a_misspelt_stage_gets_did_you_mean(capsys):
    assert exit_code(["explain", SAMPLE, "--stage", "weight"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith("attention-explorer explain: error:")
    assert "did you mean 'weights'?" in err


def test_a_stage_alias_is_accepted(capsys):
    assert main(["explain", SAMPLE, "--stage", "attention", "--cell", "2,1"]) == 0
    assert "weights[pizza, love]" in capsys.readouterr().out


def test_an_unknown_option_names_the_command(capsys):
    assert exit_code(["compute", SAMPLE, "--head", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith("attention-explorer compute: error: unrecognized arguments: --head 0")


def test_compute_ends_with_the_row_sums_in_words(capsys):
    assert main(["compute", "--example", "starter"]) == 0
    out = capsys.readouterr().out
    assert "row sums" not in out and "['" not in out
    assert "each query's weights add up to 1 (largest difference from 1 over 8 rows of" in out
    last = out.strip().splitlines()[-1]
    assert last.startswith("output: 4 rows (one per query) of 8 numbers each")


def test_sigmoid_weights_say_they_do_not_add_up_to_1(capsys, tmp_path):
    import json

    data = json.loads(Path(SAMPLE).read_text())
    data["config"]["normalizer"] = "sigmoid"
    path = tmp_path / "sigmoid.json"
    path.write_text(json.dumps(data))
    assert main(["compute", str(path)]) == 0
    out = capsys.readouterr().out
    assert "sigmoid weights need not add up to 1: row sums from " in out


def test_counts_are_pluralised():
    assert counted(1, "head") == "1 head"
    assert counted(2, "head") == "2 heads"
    assert counted(0, "layer") == "0 layers"
    assert counted(1, "query", "queries") == "1 query"
    assert counted(3, "query", "queries") == "3 queries"


@pytest.mark.parametrize("command", ["schema", "examples"])
def test_output_into_a_closed_pipe_prints_no_error(command):
    """``schema | head``: the reader leaves before the end; no 'Broken pipe' line, no
    traceback (the reader here is closed before the command starts, so it always happens)."""
    read, write = os.pipe()
    os.close(read)
    try:
        run = subprocess.run(
            [sys.executable, "-m", "attention_explorer", command],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    finally:
        os.close(write)
    assert run.stderr == "", run.stderr
    assert run.returncode == 141  # as a tool killed by SIGPIPE reports it
